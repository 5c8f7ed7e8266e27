"""Proxy-model trainer of `lwm-data ablate` (src/ablate/run-ablation.ts): trains a tiny causal LM from
random init on one variant's train shards for a fixed number of input tokens, then reports its mean
cross-entropy on a fixed evaluation set (the observation tokens of the baseline's validation split).

One JSON line per --run on stdout. CPU, one thread, deterministic: the seed fixes the init and the data order.

The vocabulary is remapped to the token ids present in the evaluation build (all of its splits, so
every token of the job's inputs) plus one shared "unknown" id: the embedding stays a few thousand
rows instead of 151,936, which is what makes a CPU run of minutes possible; every variant uses the
same map (it depends on the evaluation build only), so losses stay comparable across variants. Ids a
variant has that the map lacks (a variant that renders differently) are counted in `unknown_tokens`.
"""

import argparse
import glob
import json
import math
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: E402

MODELS = {
    "tiny": dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, head_dim=32),
    "small": dict(hidden_size=128, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=32),
}


def row_ids(output_dir, split):
    """The `id` of every row of one split, in shard_rows' order (to check that two builds line up row for row)."""
    return [i for path in sorted(glob.glob(os.path.join(output_dir, "data", f"{split}-*.parquet"))) for i in pq.read_table(path, columns=["id"]).column("id").to_pylist()]


def shard_rows(output_dir, split):
    """(input_ids, weights) per row of one split, files in name order; weights: loss_weight (where loss_mask is 1) if present, else loss_mask."""
    rows = []
    for path in sorted(glob.glob(os.path.join(output_dir, "data", f"{split}-*.parquet"))):
        table = pq.read_table(path)
        names = table.schema.names
        ids = table.column("input_ids").to_pylist()
        masks = table.column("loss_mask").to_pylist()
        weight_column = "loss_weight" if "loss_weight" in names else "loss_mask"
        # Float weights count only where the mask trains: a weight never revives a masked token.
        weights = table.column("loss_weight").to_pylist() if weight_column == "loss_weight" else masks
        for row_ids, row_mask, row_weights in zip(ids, masks, weights):
            rows.append((row_ids, [float(w) if m else 0.0 for m, w in zip(row_mask, row_weights)]))
    return rows, weight_column


def vocabulary(eval_dir):
    """Sorted ids of every row of the evaluation build (train and validation); index len = unknown."""
    present = set()
    for split in ("train", "validation"):
        for ids, _ in shard_rows(eval_dir, split)[0]:
            present.update(ids)
    return {token: index for index, token in enumerate(sorted(present))}


def windows(rows, vocab, seq_len):
    """Each row cut into windows of seq_len + 1 tokens (the +1: the next-token label of the last position).
    A row is (ids, weights) or (ids, weights, groups): per-token lists, cut the same way."""
    unknown = len(vocab)
    out, unknown_tokens = [], 0
    for ids, *per_token in rows:
        mapped = [vocab.get(t, unknown) for t in ids]
        unknown_tokens += sum(1 for m in mapped if m == unknown)
        for start in range(0, max(len(mapped) - 1, 0), seq_len):
            piece = mapped[start : start + seq_len + 1]
            if len(piece) < 2:
                continue
            out.append((piece, *(values[start : start + seq_len + 1] for values in per_token)))
    return out, unknown_tokens


def batch(pieces, pad):
    """Inputs, labels, label weights (and label groups, -1 = none, when the pieces carry them)."""
    length = max(len(p[0]) for p in pieces)
    ids = torch.full((len(pieces), length), pad, dtype=torch.long)
    weights = torch.zeros((len(pieces), length), dtype=torch.float32)
    grouped = len(pieces[0]) > 2
    groups = torch.full((len(pieces), length), -1, dtype=torch.long)
    for i, (p, w, *g) in enumerate(pieces):
        ids[i, : len(p)] = torch.tensor(p, dtype=torch.long)
        weights[i, : len(w)] = torch.tensor(w, dtype=torch.float32)
        if grouped:
            groups[i, : len(g[0])] = torch.tensor(g[0], dtype=torch.long)
    # Token t predicts t+1, whose weight says whether (and how much) it is trained.
    if grouped:
        return ids[:, :-1], ids[:, 1:], weights[:, 1:], groups[:, 1:]
    return ids[:, :-1], ids[:, 1:], weights[:, 1:]


def awb_turn_groups(awb_dir, eval_dir, eval_rows):
    """Per-token AgentWorldBench row index (-1: none) for the evaluation rows, and the rows' domains.

    The AgentWorldBench-layout export of the evaluation build (src/export/awb-export.ts) has one row
    per evaluated turn: `id` (the trajectory), `lwm_turn_index`, `total_turns`, `task` (the domain);
    its ground truth is that turn's observation. The observation's tokens in the evaluation shard are
    found as src/inspect/turn-notes.ts `turnSpans` finds them: every message opens with the same
    special token (the row's first), so a trajectory of n turns has 1 + 2n openers and turn k's
    observation runs from opener 2 + 2k to the next opener (or the row's end). Only tokens the
    evaluation labels (every observation token and its turn end) are scored.
    """
    wanted = {}
    for path in sorted(glob.glob(os.path.join(awb_dir, "*_test.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                wanted.setdefault(row["id"], []).append((row["lwm_turn_index"], row["total_turns"], row["task"]))
    ids_in_order = row_ids(eval_dir, "validation")
    groups_per_row, domains, unplaced = [], [], 0
    for row_id, (ids, weights) in zip(ids_in_order, eval_rows):
        groups = [-1] * len(ids)
        for turn, total_turns, domain in wanted.pop(row_id, []):
            opener = ids[0] if ids else None
            opens = [i for i, t in enumerate(ids) if t == opener]
            if len(opens) != 1 + 2 * total_turns:
                unplaced += 1
                continue
            start, end = opens[2 + 2 * turn], opens[3 + 2 * turn] if 3 + 2 * turn < len(opens) else len(ids)
            group = len(domains)
            domains.append(domain)
            for position in range(start, end):
                if weights[position] > 0:
                    groups[position] = group
        groups_per_row.append(groups)
    unplaced += sum(len(turns) for turns in wanted.values())  # rows of trajectories the shards lack
    return groups_per_row, domains, unplaced


# An evaluation token's weight is 1 (an observation token) plus a flag per subset build that also labels it.
SUBSET_FLAGS = {"subset": 2, "seen_once": 4}


def mark_subset(eval_rows, subset_dir, eval_dir, flag):
    """Adds `flag` to the weight of every evaluation token the subset build also labels (same rows, same tokens)."""
    if row_ids(subset_dir, "validation") != row_ids(eval_dir, "validation"):
        sys.exit(f"train_proxy: {subset_dir} and {eval_dir} hold different validation rows")
    subset_rows, _ = shard_rows(subset_dir, "validation")
    return [
        (ids, [w + (flag if subset > 0 and w > 0 else 0.0) for w, subset in zip(weights, subset_weights)])
        for (ids, weights), (_, subset_weights) in zip(eval_rows, subset_rows)
    ]


def token_losses(model, inputs, labels):
    logits = model(input_ids=inputs).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none").view(labels.shape)


def train_and_evaluate(args, vocab, held_out, awb, train_dir, seed):
    """One (variant, seed) run; everything random is drawn from generators seeded here, so a run gives
    the same numbers alone or after others in the same process."""
    torch.manual_seed(seed)
    started = time.process_time()
    train_rows, weight_column = shard_rows(train_dir, "train")
    if not train_rows:
        sys.exit(f"train_proxy: no train rows under {train_dir}/data")
    train, unknown_tokens = windows(train_rows, vocab, args.seq_len)

    config = Qwen3Config(vocab_size=len(vocab) + 1, max_position_embeddings=args.seq_len, tie_word_embeddings=True, **MODELS[args.model])
    model = Qwen3ForCausalLM(config)  # init drawn from the seeded generator
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    order = torch.Generator().manual_seed(seed)

    steps, seen, trained_weight = 0, 0, 0.0
    model.train()
    while seen < args.tokens:
        permutation = torch.randperm(len(train), generator=order).tolist()
        for first in range(0, len(permutation), args.batch_size):
            if seen >= args.tokens:
                break
            pieces = [train[i] for i in permutation[first : first + args.batch_size]]
            inputs, labels, weights = batch(pieces, pad=len(vocab))
            seen += sum(len(piece) - 1 for piece, _ in pieces)  # input positions, padding not counted
            total = weights.sum()
            if total <= 0:
                continue  # nothing trained in this batch: the budget is spent all the same (the variant chose so)
            loss = (token_losses(model, inputs, labels) * weights).sum() / total
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            steps += 1
            trained_weight += float(total)

    model.eval()
    sums = {"all": [0.0, 0.0], "subset": [0.0, 0.0], "seen_once": [0.0, 0.0]}
    awb_sums = torch.zeros(len(awb["domains"]) if awb else 0, dtype=torch.float64)
    awb_counts = torch.zeros_like(awb_sums)
    with torch.no_grad():
        for first in range(0, len(held_out), args.batch_size):
            inputs, labels, weights, *groups = batch(held_out[first : first + args.batch_size], pad=len(vocab))
            losses = token_losses(model, inputs, labels)
            # The evaluation counts every observation token once; the subsets ride in the weights as bit flags (SUBSET_FLAGS).
            flags = weights.long()
            for name, mask in (
                ("all", (weights > 0).float()),
                ("subset", ((flags & SUBSET_FLAGS["subset"]) > 0).float()),
                ("seen_once", ((flags & SUBSET_FLAGS["seen_once"]) > 0).float()),
            ):
                sums[name][0] += float((losses * mask).sum())
                sums[name][1] += float(mask.sum())
            if awb:
                scored = groups[0] >= 0
                awb_sums.index_add_(0, groups[0][scored], losses[scored].double())
                awb_counts.index_add_(0, groups[0][scored], torch.ones_like(losses[scored], dtype=torch.float64))
    subset = {"eval_subset_loss": sums["subset"][0] / sums["subset"][1], "eval_subset_tokens": int(sums["subset"][1])} if sums["subset"][1] else {}
    if args.seen_once_dir:
        # Tokens 0 (and no loss) when every held-out observation repeats in the corpus: n/a, not a number.
        subset["eval_seen_once_tokens"] = int(sums["seen_once"][1])
        if sums["seen_once"][1]:
            subset["eval_seen_once_loss"] = sums["seen_once"][0] / sums["seen_once"][1]
    if awb and bool((awb_counts > 0).any()):
        # AgentWorldBench scores each evaluated turn once: the mean over its rows of each row's mean token loss.
        per_row = awb_sums[awb_counts > 0] / awb_counts[awb_counts > 0]
        subset.update(
            awb_loss=float(per_row.mean()),
            awb_rows=int(per_row.numel()),
            awb_tokens=int(awb_counts.sum()),
            awb_unscored=awb["unplaced"] + int((awb_counts == 0).sum()),
        )
    return {
        "train_dir": train_dir,
        "seed": seed,
        "eval_loss": sums["all"][0] / sums["all"][1],
        "eval_tokens": int(sums["all"][1]),
        **subset,
        "train_tokens": seen,
        "trained_weight": round(trained_weight, 6),
        "steps": steps,
        "vocab": len(vocab) + 1,
        "unknown_tokens": unknown_tokens,
        "weight_column": weight_column,
        "parameters": sum(p.numel() for p in model.parameters()),
        "cpu_seconds": round(time.process_time() - started, 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--run",
        nargs=2,
        action="append",
        required=True,
        metavar=("TRAIN_DIR", "SEED"),
        help="a variant's output folder (its data/train-*.parquet) and a seed; repeatable: one process pays the torch import once",
    )
    parser.add_argument("--eval-dir", required=True, help="the evaluation build's output folder (data/validation-*.parquet)")
    parser.add_argument("--subset-dir", help="a build of the same rows whose validation loss_mask marks a subset of the evaluation tokens, also scored alone")
    parser.add_argument("--seen-once-dir", help="a second subset build: its validation loss_mask marks the held-out observations seen once in the corpus, scored alone")
    parser.add_argument("--awb-dir", help="an AgentWorldBench-layout export of the evaluation build's validation split: its rows' observations are also scored, each turn once")
    parser.add_argument("--tokens", type=int, required=True, help="input tokens to train on (forward positions), the fixed budget")
    parser.add_argument("--model", choices=sorted(MODELS), default="tiny")
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    vocab = vocabulary(args.eval_dir)
    # Every observation token of the evaluation counts once, whatever weights its build carries.
    eval_rows = [(ids, [1.0 if w > 0 else 0.0 for w in weights]) for ids, weights in shard_rows(args.eval_dir, "validation")[0]]
    if not eval_rows:
        sys.exit(f"train_proxy: no validation rows under {args.eval_dir}/data")
    if args.subset_dir:
        eval_rows = mark_subset(eval_rows, args.subset_dir, args.eval_dir, SUBSET_FLAGS["subset"])
    if args.seen_once_dir:
        eval_rows = mark_subset(eval_rows, args.seen_once_dir, args.eval_dir, SUBSET_FLAGS["seen_once"])
    awb = None
    if args.awb_dir:
        groups, domains, unplaced = awb_turn_groups(args.awb_dir, args.eval_dir, eval_rows)
        awb = {"domains": domains, "unplaced": unplaced}
        eval_rows = [(ids, weights, row_groups) for (ids, weights), row_groups in zip(eval_rows, groups)]
    held_out, _ = windows(eval_rows, vocab, args.seq_len)
    for train_dir, seed in args.run:
        # One JSON line per run, flushed: the caller records each as it comes (resume after a crash).
        print(json.dumps(train_and_evaluate(args, vocab, held_out, awb, train_dir, int(seed))), flush=True)


if __name__ == "__main__":
    main()
