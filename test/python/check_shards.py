"""Trainer-side check of an lwm-data output folder, with the trainer's own tools.

    python test/python/check_shards.py OUTPUT_DIR --tokenizer-dir DIR

1. pyarrow and Hugging Face `datasets` read every shard; column types are list<int32> /
   list<uint8>; rows, tokens, loss tokens, bytes and sha256 equal the manifest.
2. Hugging Face `tokenizers` (the Rust reference) and `jinja2` (the Python Jinja that
   `transformers.apply_chat_template` uses) re-render every sample from its `messages` column
   and re-tokenize it: the ids must equal our `input_ids` exactly. The masked-in tokens must
   decode to exactly the trained messages' contents, each followed by its end-of-turn token.
3. The positions with loss 1 are exactly the kept observation spans: every observation
   (assistant message) is located in the re-rendered text, its tokens (content and the
   end-of-turn token after it) carry loss 1 iff the stats table (`stats/*.parquet`) says its
   turn was kept, and every other token carries loss 0.
4. A torch DataLoader collates a batch with labels = input_ids where loss_mask == 1 else -100;
   a tiny randomly initialised causal LM runs forward/backward, and its loss equals the mean
   cross-entropy over exactly the masked-in positions, computed by hand.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import datasets
import jinja2
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_shards(out: Path, manifest: dict) -> list[Path]:
    paths = []
    rows = tokens = loss = 0
    for shard in manifest["shards"]:
        path = out / shard["path"]
        paths.append(path)
        check(path.stat().st_size == shard["bytes"], f"{path}: size differs from manifest")
        check(sha256_of(path) == shard["sha256"], f"{path}: sha256 differs from manifest")
        table = pq.read_table(path)
        schema = table.schema
        check(schema.field("input_ids").type == pa.list_(pa.field("item", pa.int32(), nullable=False)), f"{path}: input_ids is {schema.field('input_ids').type}")
        check(schema.field("loss_mask").type == pa.list_(pa.field("item", pa.uint8(), nullable=False)), f"{path}: loss_mask is {schema.field('loss_mask').type}")
        check(table.num_rows == shard["rows"], f"{path}: {table.num_rows} rows, manifest says {shard['rows']}")
        ids = table.column("input_ids").combine_chunks()
        mask = table.column("loss_mask").combine_chunks()
        n_tokens = len(ids.flatten())
        n_loss = int(pa.compute.sum(mask.flatten()).as_py() or 0)
        check(n_tokens == shard["tokens"], f"{path}: {n_tokens} tokens, manifest says {shard['tokens']}")
        check(n_loss == shard["loss_tokens"], f"{path}: {n_loss} loss tokens, manifest says {shard['loss_tokens']}")
        check(pa.compute.all(pa.compute.equal(ids.value_lengths(), mask.value_lengths())).as_py(), f"{path}: mask not aligned with ids")
        check(table.column("num_tokens").to_pylist() == ids.value_lengths().to_pylist(), f"{path}: num_tokens column wrong")
        rows, tokens, loss = rows + table.num_rows, tokens + n_tokens, loss + n_loss
    counts = manifest["counts"]
    check(rows == counts["samples_out"], f"{rows} rows in shards, manifest samples_out {counts['samples_out']}")
    check(counts["records_in"] == counts["samples_out"] + counts["quarantined"], "records in != samples out + quarantined")
    check(tokens == manifest["tokens"]["total"] and loss == manifest["tokens"]["loss"], "token totals differ from manifest")

    dataset = datasets.load_dataset("parquet", data_files=[str(p) for p in paths], split="train")
    check(dataset.num_rows == counts["samples_out"], f"datasets loaded {dataset.num_rows} rows")
    check(str(dataset.features["input_ids"].feature.dtype) == "int32", f"datasets input_ids dtype {dataset.features['input_ids']}")
    check(str(dataset.features["loss_mask"].feature.dtype) == "uint8", f"datasets loss_mask dtype {dataset.features['loss_mask']}")
    print(f"shards: {len(paths)} files, {rows} rows, {tokens} tokens ({loss} with loss) match the manifest; datasets loads them")
    return paths


def render(template: jinja2.Template, messages: list[dict]) -> str:
    return template.render(messages=[{"role": m["role"], "content": m["content"]} for m in messages], add_generation_prompt=False)


def read_kept(out: Path, manifest: dict) -> dict[tuple[str, int], bool] | None:
    """(sample id, turn index) -> kept, from the run's stats table; None when the policy makes no
    per-turn decisions. Files are found by globbing: their names carry task and part numbers."""
    files = sorted((out / "stats").glob("*.parquet"))
    if not files:
        check(manifest["mask_policy"] == "all-observations", f"mask policy {manifest['mask_policy']} but no stats/*.parquet")
        return None
    kept: dict[tuple[str, int], bool] = {}
    for path in files:
        for row in pq.read_table(path, columns=["id", "turn_index", "kept"]).to_pylist():
            key = (row["id"], row["turn_index"])
            check(key not in kept, f"{path.name}: id={key[0]} turn={key[1]} has more than one stats row")
            kept[key] = row["kept"]
    return kept


def token_byte_ends(ids: list[int], tokenizer: Tokenizer, added: dict[int, str]) -> list[int]:
    """Byte offset in the rendered text where each token ends. A byte-level BPE vocabulary string
    spells one byte per character; added tokens stand for their literal text."""
    ends, position = [], 0
    for token_id in ids:
        position += len(added[token_id].encode()) if token_id in added else len(tokenizer.id_to_token(token_id))
        ends.append(position)
    return ends


def find_all(data: bytes, marker: bytes) -> list[int]:
    found, at = [], data.find(marker)
    while at >= 0:
        found.append(at)
        at = data.find(marker, at + len(marker))
    return found


# ChatML, the default template's layout: every message opens with this token.
MESSAGE_START = "<|im_start|>"


def check_kept_spans(where: str, row: dict, text: str, ends: list[int], kept: dict[tuple[str, int], bool] | None, end_of_turn: str) -> None:
    """loss_mask is 1 exactly over the kept observations' tokens (content + end-of-turn token)."""
    data, close = text.encode(), end_of_turn.encode()
    if ends[-1] != len(data):
        failures.append(f"{where}: token bytes ({ends[-1]}) do not add up to the rendered text ({len(data)} bytes)")
        return
    opens, messages = find_all(data, MESSAGE_START.encode()), row["messages"]
    if len(opens) != len(messages):
        failures.append(f"{where}: {len(opens)} {MESSAGE_START} in the rendered text for {len(messages)} messages; cannot locate observations")
        return
    expected = [0] * len(ends)
    observations = [m for m, message in enumerate(messages) if message["role"] == "assistant"]
    for turn, m in enumerate(observations):
        label = f"{where} turn={turn}"
        is_kept = True if kept is None else kept.get((row["id"], turn))
        if is_kept is None:
            failures.append(f"{label}: no stats row for this observation")
            continue
        # The content is the end of its rendered message; templates may drop its leading newlines
        # (Qwen3 does for the last assistant turn).
        stop = data.index(close, opens[m])
        region, content = data[opens[m] : stop], messages[m]["content"]
        shown = next((c for c in (content.encode(), content.lstrip("\n").encode()) if region.endswith(c)), None)
        if shown is None:
            failures.append(f"{label}: observation content not found at the end of its rendered message")
            continue
        begin = stop - len(shown)
        # Tokens overlapping the content are the content's; the end-of-turn token at `stop` too.
        span = [t for t, end in enumerate(ends) if end > begin and (ends[t - 1] if t else 0) < stop + len(close)]
        bits = sorted({row["loss_mask"][t] for t in span})
        check(bits == [int(is_kept)], f"{label}: stats kept={is_kept} but loss_mask over its tokens {span[0]}..{span[-1]} is {bits}")
        check(messages[m]["loss"] == is_kept, f"{label}: messages.loss={messages[m]['loss']} but stats kept={is_kept}")
        for t in span:
            expected[t] = int(is_kept)
    stray = [t for t, (bit, want) in enumerate(zip(row["loss_mask"], expected)) if bit != want]
    check(not stray, f"{where}: loss 1 outside the kept observation spans (or 0 inside) at {len(stray)} positions, first {stray[:5]}")


def check_tokens(paths: list[Path], tokenizer_dir: Path, kept: dict[tuple[str, int], bool] | None) -> None:
    tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text())
    # The environment transformers.apply_chat_template renders chat templates in.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
    template = env.from_string(config["chat_template"])
    added_by_id = {i: t.content for i, t in tokenizer.get_added_tokens_decoder().items()}
    added = list(added_by_id.values())
    end_of_turn = config["eos_token"]
    samples = observations = 0
    for path in paths:
        for row in pq.read_table(path).to_pylist():
            samples += 1
            where = f"{path.name} id={row['id']}"
            messages = row["messages"]
            # The reference splits added-token strings even inside content; we deliberately do not
            # (tool output must not become control tokens), so parity is defined on content free of them.
            check(not any(a in m["content"] for m in messages for a in added), f"{where}: content holds an added-token string; demo data must not")
            text = render(template, messages)
            reference = tokenizer.encode(text, add_special_tokens=False).ids
            if reference != row["input_ids"]:
                first = next((i for i, (a, b) in enumerate(zip(reference, row["input_ids"])) if a != b), min(len(reference), len(row["input_ids"])))
                failures.append(f"{where}: ids differ from tokenizers at position {first} (ours {len(row['input_ids'])} tokens, reference {len(reference)})")
                continue
            trained = [i for i, bit in zip(row["input_ids"], row["loss_mask"]) if bit == 1]
            expected = "".join(m["content"] + end_of_turn for m in messages if m["loss"])
            check(tokenizer.decode(trained, skip_special_tokens=False) == expected, f"{where}: masked-in tokens do not decode to the trained contents")
            check_kept_spans(where, row, text, token_byte_ends(row["input_ids"], tokenizer, added_by_id), kept, end_of_turn)
            observations += sum(1 for m in messages if m["role"] == "assistant")
    print(f"tokens: {samples} samples re-rendered with jinja2 and re-tokenized with tokenizers {tokenizer_dir.name}: ids and masks agree")
    if kept is not None:
        # Every observation found its row above; equal counts leave no row without an observation.
        check(observations == len(kept), f"{len(kept)} stats rows for {observations} observations in the shards")
        print(f"masks: loss 1 exactly over the {sum(kept.values())} kept of {observations} observations (stats/*.parquet); 0 everywhere else")


class TinyCausalLM(torch.nn.Module):
    def __init__(self, vocab: int, width: int = 32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.block = torch.nn.TransformerEncoderLayer(width, nhead=2, dim_feedforward=64, batch_first=True, dropout=0.0)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        causal = torch.triu(torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool), diagonal=1)
        hidden = self.block(self.embed(ids), src_mask=causal, src_key_padding_mask=~attention, is_causal=True)
        return self.head(hidden)


def check_training(paths: list[Path], vocab_size: int, pad_id: int) -> None:
    dataset = datasets.load_dataset("parquet", data_files=[str(p) for p in paths], split="train").with_format("torch")

    # A window per sample keeps logits (batch x window x vocab) small on a CPU.
    window = 384

    def collate(batch: list[dict]) -> dict:
        batch = [{key: item[key][:window] for key in ("input_ids", "loss_mask")} for item in batch]
        width = max(len(item["input_ids"]) for item in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        labels = torch.full((len(batch), width), -100, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.bool)
        for row, item in enumerate(batch):
            n = len(item["input_ids"])
            ids[row, :n] = item["input_ids"].long()
            labels[row, :n] = torch.where(item["loss_mask"] == 1, item["input_ids"].long(), torch.tensor(-100))
            attention[row, :n] = True
        return {"input_ids": ids, "labels": labels, "attention": attention, "mask_total": sum(int(item["loss_mask"].sum()) for item in batch)}

    loader = torch.utils.data.DataLoader(dataset.select_columns(["input_ids", "loss_mask"]), batch_size=4, collate_fn=collate)
    batch = next(iter(loader))
    torch.manual_seed(0)
    model = TinyCausalLM(vocab_size)
    logits = model(batch["input_ids"], batch["attention"])
    shifted_logits, shifted_labels = logits[:, :-1], batch["labels"][:, 1:]
    loss = torch.nn.functional.cross_entropy(shifted_logits.reshape(-1, vocab_size), shifted_labels.reshape(-1), ignore_index=-100)
    loss.backward()
    loss = loss.detach()

    # By hand: -log p(label) at exactly the positions whose loss_mask is 1.
    log_probs = torch.log_softmax(shifted_logits.detach().double(), dim=-1)
    picked = []
    for row in range(shifted_labels.shape[0]):
        for t in range(shifted_labels.shape[1]):
            label = int(shifted_labels[row, t])
            if label != -100:
                picked.append(-log_probs[row, t, label])
    by_hand = torch.stack(picked).mean()
    mask_total = batch["mask_total"]
    check(mask_total > 0, "the batch has no masked-in tokens to train on")
    check(len(picked) == mask_total, f"loss covers {len(picked)} positions, loss_mask has {mask_total}")
    check(abs(float(loss) - float(by_hand)) < 1e-4, f"loss {float(loss)} != hand-computed {float(by_hand)}")
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    check(len(grads) > 0 and all(torch.isfinite(g).all() for g in grads), "backward produced no or non-finite gradients")
    print(f"torch: batch of {batch['input_ids'].shape[0]}, loss {float(loss):.4f} over {len(picked)} masked-in positions = hand-computed {float(by_hand):.4f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path, help="lwm-data output folder (holds manifest.json)")
    parser.add_argument("--tokenizer-dir", type=Path, required=True, help="folder with the tokenizer.json + tokenizer_config.json used for the run")
    args = parser.parse_args()
    manifest = json.loads((args.output / "manifest.json").read_text())
    paths = check_shards(args.output, manifest)
    check_tokens(paths, args.tokenizer_dir, read_kept(args.output, manifest))
    tokenizer = Tokenizer.from_file(str(args.tokenizer_dir / "tokenizer.json"))
    pad = json.loads((args.tokenizer_dir / "tokenizer_config.json").read_text()).get("pad_token") or "<|endoftext|>"
    check_training(paths, manifest["tokenizer"]["vocab_size"], tokenizer.token_to_id(pad))
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print("trainer-side check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
