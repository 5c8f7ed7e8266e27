"""Trainer-side check of a packed lwm-data output, with the trainer's own tools.

    python test/python/check_packed.py PACKED_DIR UNPACKED_DIR

The same job run twice — packed (pack.enabled) and not — must teach a model the same thing:

1. `datasets.load_dataset(PACKED_DIR)` reads the dataset card: the splits the manifest names,
   with the card's feature types; row counts equal the manifest's shards.
2. Every packed row is well formed: cu_seqlens from 0 to num_tokens, position_ids restarting at
   0 at each boundary (and only there), at most pack.seq_len tokens.
3. No token is lost or duplicated: for every record that fit whole, the multiset of
   (document, position, token, mask) over the packed output equals the unpacked output's.
4. Pieces that train nothing are accounted for: the pieces written per record are parts 0..k-1;
   documents with no trained token are exactly the manifest's `counts.samples_untrained` (each a
   record none of whose pieces trains, written once); so a packed row has a trained token unless
   all its documents are such records. A split record's pieces left out (`packing.fit.
   untrained_pieces_dropped`) trained nothing, so the packed output trains every token the unpacked
   one does: loss tokens per record are at least the unpacked record's (pieces re-rendered with
   carried context can only add untrained tokens), and a record whose pieces lost any is one the
   manifest counts as split.
5. Packing changes nothing the model learns: a tiny causal LM (learned position embeddings,
   block-diagonal causal attention built from cu_seqlens, positions from position_ids) gives
   each packed document the same summed loss as running that document alone.
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import torch

failures: list[str] = []
# The model runs on ids folded into a small vocabulary: the equivalence does not depend on it,
# and logits over Qwen's 151k entries for 4k positions would not fit a CPU check.
VOCAB = 4093


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def shard_rows(out: Path) -> list[dict]:
    rows = []
    for path in sorted((out / "data").glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            row["split"] = path.name.split("-")[0]
            rows.append(row)
    return rows


def check_load_dataset(out: Path, manifest: dict) -> None:
    dataset = datasets.load_dataset(str(out))
    expected_splits = sorted({shard["split"] for shard in manifest["shards"]})
    check(sorted(dataset.keys()) == expected_splits, f"load_dataset splits {sorted(dataset.keys())} != manifest {expected_splits}")
    for split in expected_splits:
        rows = sum(shard["rows"] for shard in manifest["shards"] if shard["split"] == split)
        check(dataset[split].num_rows == rows, f"{split}: load_dataset has {dataset[split].num_rows} rows, manifest {rows}")
        features = dataset[split].features
        for column, dtype in [("input_ids", "int32"), ("position_ids", "int32"), ("cu_seqlens", "int32"), ("loss_mask", "uint8")]:
            check(features[column].feature.dtype == dtype, f"{split}.{column}: feature {features[column]} is not a list of {dtype}")
    print(f"datasets: load_dataset({out.name}) → {', '.join(f'{s} ({dataset[s].num_rows} rows)' for s in expected_splits)}")


def documents(rows: list[dict], seq_len: int) -> list[tuple[str, int, list[int], list[int]]]:
    docs = []
    for r, row in enumerate(rows):
        ids, mask, positions, cu = row["input_ids"], row["loss_mask"], row["position_ids"], row["cu_seqlens"]
        where = f"packed row {r}"
        check(len(ids) <= seq_len, f"{where}: {len(ids)} tokens > seq_len {seq_len}")
        check(cu[0] == 0 and cu[-1] == len(ids) == row["num_tokens"], f"{where}: cu_seqlens {cu[:3]}…{cu[-1]} vs {len(ids)} tokens")
        starts = [p for p, position in enumerate(positions) if position == 0]
        check(starts == cu[:-1], f"{where}: position_ids restart at {starts[:5]}, cu_seqlens say {cu[:5]}")
        for d, (start, end) in enumerate(zip(cu, cu[1:])):
            check(positions[start:end] == list(range(end - start)), f"{where}: document {d} positions do not count 0..{end - start - 1}")
            docs.append((row["document_ids"][d], row["document_parts"][d], ids[start:end], mask[start:end]))
    return docs


def check_multiset(packed_docs: list, unpacked_rows: list[dict]) -> None:
    whole = {row["id"]: row for row in unpacked_rows}
    pieces = Counter(doc_id for doc_id, _, _, _ in packed_docs)
    fitted = [doc for doc in packed_docs if pieces[doc[0]] == 1 and len(doc[2]) == whole[doc[0]]["num_tokens"]]
    ids = {doc[0] for doc in fitted}

    def tuples(items):
        return Counter((doc_id, p, token, bit) for doc_id, token_ids, bits in items for p, (token, bit) in enumerate(zip(token_ids, bits)))

    before = tuples((row["id"], row["input_ids"], row["loss_mask"]) for row in unpacked_rows if row["id"] in ids)
    after = tuples((doc_id, token_ids, bits) for doc_id, _, token_ids, bits in fitted)
    check(len(fitted) > 0, "no record fit whole: nothing to compare")
    check(before == after, f"(document, position, token, mask) multisets differ: {sum((before - after).values())} lost, {sum((after - before).values())} extra")
    print(f"multiset: {len(fitted)} documents, {sum(after.values())} (document, position, token, mask) tuples equal to the unpacked run")


def check_untrained(rows: list[dict], packed_docs: list, unpacked_rows: list[dict], manifest: dict) -> None:
    untrained_docs = [doc for doc in packed_docs if sum(doc[3]) == 0]
    expected = manifest["counts"].get("samples_untrained", 0)
    check(len(untrained_docs) == expected, f"{len(untrained_docs)} packed documents train no token, manifest counts.samples_untrained says {expected}")
    untrained_ids = {doc[0] for doc in untrained_docs}
    for doc_id in untrained_ids:
        check(sum(1 for doc in packed_docs if doc[0] == doc_id) == 1, f"{doc_id}: trains no token yet is written as more than one piece")
    untrained_rows = [r for r, row in enumerate(rows) if sum(row["loss_mask"]) == 0]
    for r in untrained_rows:
        check(set(rows[r]["document_ids"]) <= untrained_ids, f"packed row {r} trains no token but holds a document that trains")
    parts: dict[str, list[int]] = {}
    for doc_id, part, _, _ in packed_docs:
        parts.setdefault(doc_id, []).append(part)
    for doc_id, seen in parts.items():
        check(sorted(seen) == list(range(len(seen))), f"{doc_id}: pieces {sorted(seen)} are not parts 0..{len(seen) - 1}")
    fit = manifest["packing"]["fit"]
    multi = [seen for seen in parts.values() if len(seen) > 1]
    dropped = fit.get("untrained_pieces_dropped", 0)
    # A split record left with one piece (the rest trained nothing) is still counted as split, its one piece too.
    left_whole = fit["split_records"] - len(multi)
    check(0 <= left_whole <= dropped, f"{len(multi)} records written in several pieces, manifest: {fit['split_records']} split, {dropped} piece(s) left out")
    written = sum(len(seen) for seen in multi) + left_whole
    check(written == fit["split_pieces"], f"{written} pieces of split records written, manifest says {fit['split_pieces']}")
    whole = {row["id"]: row for row in unpacked_rows}
    packed_loss = Counter()
    for doc_id, _, _, bits in packed_docs:
        packed_loss[doc_id] += sum(bits)
    for doc_id, loss in packed_loss.items():
        if doc_id in whole:
            check(loss >= whole[doc_id]["num_loss_tokens"], f"{doc_id}: {loss} loss tokens packed, {whole[doc_id]['num_loss_tokens']} unpacked: trained tokens lost")
    print(
        f"untrained: {dropped} split piece(s) that train nothing left out (manifest), {len(untrained_docs)} document(s) and "
        f"{len(untrained_rows)} row(s) that train no token (counts.samples_untrained {expected})"
    )


class TinyCausalLM(torch.nn.Module):
    """Learned position embeddings, so position_ids matter; attention mask given per batch."""

    def __init__(self, width: int = 32, max_positions: int = 1 << 16):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, width)
        self.position = torch.nn.Embedding(max_positions, width)
        self.block = torch.nn.TransformerEncoderLayer(width, nhead=2, dim_feedforward=64, batch_first=True, dropout=0.0)
        self.head = torch.nn.Linear(width, VOCAB)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.embed(ids) + self.position(positions), src_mask=blocked))


def causal_block_mask(cu_seqlens: list[int]) -> torch.Tensor:
    """True where attention is NOT allowed: across documents, or to the future."""
    n = cu_seqlens[-1]
    document = torch.zeros(n, dtype=torch.long)
    for d, (start, end) in enumerate(zip(cu_seqlens, cu_seqlens[1:])):
        document[start:end] = d
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return future | (document[:, None] != document[None, :])


def summed_loss(model: TinyCausalLM, ids: list[int], mask: list[int], positions: list[int], blocked: torch.Tensor, starts: set[int]) -> dict[int, torch.Tensor]:
    """Per document start: the summed cross-entropy of its masked-in tokens (each predicted from the token before)."""
    tensor = torch.tensor([i % VOCAB for i in ids]).unsqueeze(0)
    logits = model(tensor, torch.tensor(positions).unsqueeze(0), blocked)[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    losses: dict[int, torch.Tensor] = {}
    document_start = 0
    for t in range(len(ids)):
        if t in starts:
            document_start = t
            losses[t] = torch.zeros((), dtype=torch.double)
            continue  # a document's first token is never predicted from the previous document
        if mask[t] == 1:
            losses[document_start] = losses[document_start] - log_probs[t - 1, tensor[0, t]]
    return losses


def check_model_equivalence(rows: list[dict], limit_rows: int = 4) -> None:
    torch.manual_seed(0)
    model = TinyCausalLM().eval()
    checked = 0
    with torch.no_grad():
        multi = [row for row in rows if len(row["document_ids"]) > 1][:limit_rows]
        check(len(multi) > 0, "no packed row holds more than one document")
        for row in multi:
            cu = row["cu_seqlens"]
            packed = summed_loss(model, row["input_ids"], row["loss_mask"], row["position_ids"], causal_block_mask(cu), set(cu[:-1]))
            for start, end in zip(cu, cu[1:]):
                ids, mask = row["input_ids"][start:end], row["loss_mask"][start:end]
                alone = summed_loss(model, ids, mask, list(range(end - start)), causal_block_mask([0, end - start]), {0})[0]
                check(abs(float(packed[start]) - float(alone)) < 1e-3 * max(1.0, abs(float(alone))), f"document at {start}: packed loss {float(packed[start])} != alone {float(alone)}")
                checked += 1
    print(f"torch: {checked} documents in {len(multi)} packed rows: block-diagonal packed loss equals each document run alone")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packed", type=Path)
    parser.add_argument("unpacked", type=Path)
    args = parser.parse_args()
    manifest = json.loads((args.packed / "manifest.json").read_text())
    seq_len = manifest["packing"]["seq_len"]
    check_load_dataset(args.packed, manifest)
    rows = shard_rows(args.packed)
    check(len(rows) == manifest["packing"]["rows"], f"{len(rows)} packed rows, manifest says {manifest['packing']['rows']}")
    docs = documents(rows, seq_len)
    check(len(docs) == manifest["counts"]["documents"], f"{len(docs)} documents, manifest says {manifest['counts']['documents']}")
    unpacked = shard_rows(args.unpacked)
    check_multiset(docs, unpacked)
    check_untrained(rows, docs, unpacked, manifest)
    check_model_equivalence(rows)
    if failures:
        print(f"check_packed: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("check_packed: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
