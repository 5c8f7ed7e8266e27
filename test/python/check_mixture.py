"""Trainer-side check of a CPT mixture output (docs/mixtures.md "Mixtures"), with the trainer's own tools.

    python test/python/check_mixture.py OUT_DIR --tokenizer-dir DIR --text FILE... [--share-tolerance PP]

Its FAIL lines (stderr) start with `[OUT_DIR]`, so a caller that checks several outputs in one
process (test/python/run_checks.py) tells them apart.

OUT_DIR is an lwm-data output whose inputs included text documents (JSONL with a `text` field,
or Parquet with a `text` column, given again with --text so their documents can be compared):

1. `datasets.load_dataset(OUT_DIR)` reads it; pyarrow reads every shard.
2. Per mixture source, the documents, tokens and trained tokens in the shards (the
   `mixture_source` column, or `document_sources` of packed rows) equal the manifest's
   `mixture.sources` after weighting, and the realised shares equal the manifest's; with
   --share-tolerance, each realised share is within that many percentage points of its target.
3. Every text document carries the loss on every token, and its tokens (its pieces joined in order,
   when packing cut it) are Hugging Face `tokenizers`' encoding of the source text, followed by
   the end-of-document token `<|endoftext|>`: they decode back to the document. Pieces are at most
   pack.seq_len tokens, and a piece after the first starts at a line start of the document.
4. A mixture's repeat (`<id>#copy<N>`) holds the same tokens as the record it repeats, when both
   were written.
"""

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import datasets
import pyarrow.parquet as pq
from tokenizers import Tokenizer

failures: list[str] = []
END_OF_DOCUMENT = "<|endoftext|>"
# The output being checked, named on its FAIL lines.
fail_prefix = ""


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)
        print(f"{fail_prefix}FAIL: {message}", file=sys.stderr)


def source_texts(paths: list[str]) -> dict[str, str]:
    """id → text of every document in the text inputs (the readers' id rule: the `id` field/column)."""
    texts: dict[str, str] = {}
    for path in paths:
        if path.endswith(".parquet"):
            table = pq.read_table(path, columns=["id", "text"])
            for row in table.to_pylist():
                texts[str(row["id"])] = row["text"]
        else:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    texts[str(record["id"])] = record["text"]
    return texts


def documents(out: Path, packed: bool):
    """(id, part, source, domain, ids, mask) of every document in the shards."""
    for path in sorted((out / "data").glob("*.parquet")):
        for row in pq.read_table(path).to_pylist():
            if not packed:
                yield row["id"], 0, row["mixture_source"], row["domain"], row["input_ids"], row["loss_mask"]
                continue
            bounds = row["cu_seqlens"]
            for k, doc_id in enumerate(row["document_ids"]):
                start, end = bounds[k], bounds[k + 1]
                yield (
                    doc_id,
                    row["document_parts"][k],
                    row["document_sources"][k],
                    row["document_domains"][k],
                    row["input_ids"][start:end],
                    row["loss_mask"][start:end],
                )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tokenizer-dir", required=True)
    parser.add_argument("--text", nargs="+", required=True, help="the text inputs of the job")
    parser.add_argument("--share-tolerance", type=float, help="percentage points a realised share may miss its target by")
    args = parser.parse_args()
    global fail_prefix
    fail_prefix = f"[{args.out}] "
    check_output(args)
    if failures:
        print(f"check_mixture: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    return 0


def check_output(args: argparse.Namespace) -> None:
    """Checks one output (the module docstring's 1-4)."""
    out = Path(args.out)
    manifest = json.loads((out / "manifest.json").read_text())
    mixture = manifest["mixture"]
    layout = manifest["layout"]
    packed = layout["pack"] is not None
    tokenizer = Tokenizer.from_file(str(Path(args.tokenizer_dir) / "tokenizer.json"))
    end_id = tokenizer.token_to_id(END_OF_DOCUMENT)

    dataset = datasets.load_dataset(str(out))
    rows = sum(shard["rows"] for shard in manifest["shards"])
    check(sum(dataset[s].num_rows for s in dataset) == rows, f"load_dataset rows {sum(dataset[s].num_rows for s in dataset)} != manifest {rows}")

    per_source = defaultdict(lambda: {"documents": 0, "tokens": 0, "loss_tokens": 0})
    pieces: dict[str, list[tuple[int, list[int], list[int]]]] = defaultdict(list)
    by_id: dict[tuple[str, int], list[int]] = {}
    for doc_id, part, source, domain, ids, mask in documents(out, packed):
        totals = per_source[source]
        totals["documents"] += 1
        totals["tokens"] += len(ids)
        totals["loss_tokens"] += sum(mask)
        by_id[(doc_id, part)] = ids
        if domain == "text":
            pieces[doc_id].append((part, ids, mask))
            if packed:
                check(len(ids) <= layout["pack"]["seq_len"], f"{doc_id} part {part}: {len(ids)} tokens, over seq_len")

    # 2. Per-source counts and shares against the manifest.
    all_loss = sum(t["loss_tokens"] for t in per_source.values())
    for source, summary in mixture["sources"].items():
        got = per_source.get(source, {"documents": 0, "tokens": 0, "loss_tokens": 0})
        check(got["documents"] == summary["documents_out"], f"{source}: {got['documents']} documents in shards, manifest {summary['documents_out']}")
        check(got["tokens"] == summary["tokens_out"], f"{source}: {got['tokens']} tokens in shards, manifest {summary['tokens_out']}")
        check(got["loss_tokens"] == summary["loss_tokens_out"], f"{source}: {got['loss_tokens']} trained tokens in shards, manifest {summary['loss_tokens_out']}")
        share = got["loss_tokens"] / all_loss if all_loss else 0.0
        check(abs(share - summary["share"]) < 1e-5, f"{source}: realised share {share:.6f}, manifest {summary['share']}")
        target = summary.get("target_share")
        if target is not None:
            print(f"mixture: {source} realised {100 * share:.2f}% of trained tokens, target {100 * target:.2f}% (factor {summary['factor']})")
            if args.share_tolerance is not None:
                check(abs(share - target) * 100 <= args.share_tolerance, f"{source}: realised share {100 * share:.2f}% misses target {100 * target:.2f}% by more than {args.share_tolerance} pp")
    check(set(per_source) <= set(mixture["sources"]), f"sources in shards {sorted(per_source)} not all in the manifest {sorted(mixture['sources'])}")

    # 3. Text documents: all loss, HF tokenizers' ids of the source text + <|endoftext|>.
    texts = source_texts(args.text)
    checked = 0
    for doc_id, parts in sorted(pieces.items()):
        parts.sort(key=lambda piece: piece[0])
        check([p for p, _, _ in parts] == list(range(len(parts))), f"{doc_id}: parts {[p for p, _, _ in parts]} are not 0..n-1")
        ids = [token for _, piece, _ in parts for token in piece]
        check(all(bit == 1 for _, _, mask in parts for bit in mask), f"{doc_id}: a text token without loss")
        original = doc_id.split("#copy")[0]
        text = texts.get(original)
        check(text is not None, f"{doc_id}: no document with this id in the text inputs")
        if text is None:
            continue
        check(ids[-1] == end_id, f"{doc_id}: last token {ids[-1]} is not {END_OF_DOCUMENT} ({end_id})")
        expected = tokenizer.encode(text, add_special_tokens=False).ids
        check(ids[:-1] == expected, f"{doc_id}: ids differ from tokenizers' encoding of the source text")
        check(tokenizer.decode(ids[:-1], skip_special_tokens=False) == text, f"{doc_id}: ids do not decode to the document")
        offset = 0
        for part, piece, _ in parts:
            if part > 0:
                before = tokenizer.decode(ids[:offset], skip_special_tokens=False)
                check(before.endswith("\n"), f"{doc_id} part {part}: does not start at a line start ({before[-20:]!r})")
            offset += len(piece)
        checked += 1
    check(checked > 0, "no text document was checked")

    # 4. Repeats equal their originals.
    repeats = [(key, ids) for key, ids in by_id.items() if "#copy" in key[0]]
    for (doc_id, part), ids in repeats:
        original = by_id.get((doc_id.split("#copy")[0], part))
        if original is not None:
            check(original == ids, f"{doc_id} part {part}: tokens differ from the record it repeats")

    print(
        f"check_mixture: {len(mixture['sources'])} sources match the manifest; {checked} text documents equal tokenizers' encoding + {END_OF_DOCUMENT}; {len(repeats)} repeats",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
