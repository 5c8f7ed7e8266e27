"""Trainer-side check of `lwm-data export megatron`: Megatron-LM indexed datasets.

    python test/python/check_megatron_export.py EXPORT_DIR OUTPUT_DIR [--append-eod ID] [--readme README.md]

For every split of the output (manifest.json):

1. The `.idx` files parsed from the documented MMapIndexedDataset layout (header b"MMIDIDX\\x00\\x00",
   version 1, dtype code, sequence count, document count, int32 lengths, int64 byte offsets, int64
   document indices), independently of Megatron, and the `.bin` files read with numpy at those
   offsets: token ids (int32 for Qwen's vocabulary) and the loss mask (uint8).
2. The same files read with Megatron's own reader, `megatron.core.datasets.indexed_dataset.IndexedDataset`:
   the same sequences, lengths and document indices.
3. Every document equals the Parquet shards (pyarrow): one per unpacked row, or one per document of
   a packed row (cut at cu_seqlens), in shard order; ids and loss mask exactly, boundaries exactly.
4. Megatron's own writer (`IndexedDatasetBuilder`, as preprocess_data.py uses it) given the same
   documents writes byte-identical `.bin` and `.idx` files.
5. megatron.json's counts and checksums match the files.
6. --readme: the README's snippet (the ```python block under "Megatron-LM") runs as written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

warnings.filterwarnings("ignore")
import torch  # noqa: E402
from megatron.core.datasets.indexed_dataset import IndexedDataset, IndexedDatasetBuilder  # noqa: E402

DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32, 8: np.uint16}
failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def read_layout(prefix: Path):
    """(dtype, lengths, pointers, document indices, bin memmap) from the documented layout."""
    raw = prefix.with_suffix(".idx").read_bytes() if prefix.suffix == "" else Path(f"{prefix}.idx").read_bytes()
    check(raw[:9] == b"MMIDIDX\x00\x00", f"{prefix}.idx: header {raw[:9]!r}")
    (version,) = struct.unpack_from("<Q", raw, 9)
    (code,) = struct.unpack_from("<B", raw, 17)
    sequences, documents = struct.unpack_from("<QQ", raw, 18)
    check(version == 1, f"{prefix}.idx: version {version}")
    at = 34
    lengths = np.frombuffer(raw, dtype=np.int32, count=sequences, offset=at)
    at += 4 * sequences
    pointers = np.frombuffer(raw, dtype=np.int64, count=sequences, offset=at)
    at += 8 * sequences
    doc_index = np.frombuffer(raw, dtype=np.int64, count=documents, offset=at)
    at += 8 * documents
    check(at == len(raw), f"{prefix}.idx: {len(raw) - at} bytes after the document indices")
    dtype = DTYPES[code]
    data = np.memmap(f"{prefix}.bin", dtype=np.uint8, mode="r")
    return dtype, lengths, pointers, doc_index, data


def shard_documents(output: Path, split: str):
    """(ids, mask) per document of a split's shards, in the export's order."""
    manifest = json.loads((output / "manifest.json").read_text())
    shards = sorted((s for s in manifest["shards"] if s.get("split", "train") == split), key=lambda s: s["path"])
    for shard in shards:
        table = pq.read_table(output / shard["path"])
        packed = "cu_seqlens" in table.column_names
        columns = ["input_ids", "loss_mask"] + (["cu_seqlens"] if packed else [])
        for row in table.select(columns).to_pylist():
            if not packed:
                yield row["input_ids"], row["loss_mask"]
                continue
            cuts = row["cu_seqlens"]
            for start, end in zip(cuts, cuts[1:]):
                yield row["input_ids"][start:end], row["loss_mask"][start:end]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--append-eod", type=int)
    parser.add_argument("--readme", type=Path, help="run the README's Megatron-LM python snippet against EXPORT_DIR")
    args = parser.parse_args()

    meta = json.loads((args.export / "megatron.json").read_text())
    manifest = json.loads((args.output / "manifest.json").read_text())
    splits = sorted({s.get("split", "train") for s in manifest["shards"]})
    check(sorted(meta["splits"]) == splits, f"megatron.json splits {sorted(meta['splits'])} vs the manifest's {splits}")
    vocab = manifest["tokenizer"]["vocab_size"]
    want_dtype = np.uint16 if max(vocab, (args.append_eod or 0) + 1) < 65500 else np.int32
    summary = []
    for split in splits:
        prefix = args.export / split
        mask_prefix = args.export / f"{split}_loss_mask"
        dtype, lengths, pointers, doc_index, data = read_layout(prefix)
        mdtype, mlengths, mpointers, mdoc_index, mdata = read_layout(mask_prefix)
        check(dtype == want_dtype, f"{split}: token dtype {dtype} for a {vocab}-entry vocabulary")
        check(mdtype == np.uint8, f"{split}: loss mask dtype {mdtype}")
        check(np.array_equal(lengths, mlengths), f"{split}: the loss mask's sequence lengths differ from the ids'")
        check(np.array_equal(doc_index, np.arange(len(lengths) + 1)), f"{split}: document indices are not one sequence per document")
        check(np.array_equal(mdoc_index, doc_index), f"{split}: loss mask document indices differ")
        item = np.dtype(dtype).itemsize
        check(np.array_equal(pointers, np.concatenate([[0], np.cumsum(lengths.astype(np.int64) * item)[:-1]])), f"{split}: byte offsets")
        check(np.array_equal(mpointers, np.concatenate([[0], np.cumsum(lengths.astype(np.int64))[:-1]])), f"{split}: loss mask byte offsets")
        check(int(lengths.sum()) * item == len(data) and int(lengths.sum()) == len(mdata), f"{split}: .bin sizes")

        # Megatron's own reader.
        ids_ds = IndexedDataset(str(prefix))
        mask_ds = IndexedDataset(str(mask_prefix))
        check(len(ids_ds) == len(lengths) == len(mask_ds), f"{split}: IndexedDataset has {len(ids_ds)} sequences, the layout {len(lengths)}")
        check(np.array_equal(ids_ds.document_indices, doc_index), f"{split}: IndexedDataset document indices")
        check(np.array_equal(ids_ds.sequence_lengths, lengths), f"{split}: IndexedDataset sequence lengths")

        documents = list(shard_documents(args.output, split))
        check(len(documents) == len(lengths), f"{split}: {len(lengths)} sequences, the shards hold {len(documents)} documents")
        tokens = loss = 0
        for d, (ids, mask) in enumerate(documents):
            want_ids = list(ids) + ([args.append_eod] if args.append_eod is not None else [])
            want_mask = list(mask) + ([0] if args.append_eod is not None else [])
            start = int(pointers[d])
            mine = np.frombuffer(data, dtype=dtype, count=int(lengths[d]), offset=start) if d < len(lengths) else np.array([])
            mine_mask = np.asarray(mdata[int(mpointers[d]) : int(mpointers[d]) + int(lengths[d])]) if d < len(lengths) else np.array([])
            check(mine.tolist() == want_ids, f"{split} document {d}: ids differ from the shard's (layout reader)")
            check(mine_mask.tolist() == want_mask, f"{split} document {d}: loss mask differs from the shard's")
            if d < len(ids_ds):
                check(ids_ds[d].tolist() == want_ids, f"{split} document {d}: IndexedDataset ids differ from the shard's")
                check(mask_ds[d].tolist() == want_mask, f"{split} document {d}: IndexedDataset loss mask differs")
            tokens += len(want_ids)
            loss += int(sum(want_mask))

        # Megatron's writer, fed the same documents, writes the same bytes.
        with tempfile.TemporaryDirectory() as tmp:
            for name, docs, kind in (("ids", [d[0] for d in documents], dtype), ("mask", [d[1] for d in documents], np.uint8)):
                builder = IndexedDatasetBuilder(f"{tmp}/{name}.bin", dtype=kind)
                for k, doc in enumerate(docs):
                    extra = [] if args.append_eod is None else [args.append_eod if name == "ids" else 0]
                    builder.add_document(torch.tensor(list(doc) + extra), [len(doc) + len(extra)])
                builder.finalize(f"{tmp}/{name}.idx")
                ours = prefix if name == "ids" else mask_prefix
                for ext in ("bin", "idx"):
                    check(Path(f"{tmp}/{name}.{ext}").read_bytes() == Path(f"{ours}.{ext}").read_bytes(), f"{split}: {ours}.{ext} differs from what Megatron's IndexedDatasetBuilder writes")

        info = meta["splits"][split]
        check(info["documents"] == len(documents) and info["tokens"] == tokens and info["loss_tokens"] == loss, f"{split}: megatron.json counts {info}")
        for f in info["files"]:
            check(sha256(args.export / f["path"]) == f["sha256"], f"{split}: {f['path']} checksum")
        summary.append(f"{split} {len(documents)} documents / {tokens} tokens ({np.dtype(dtype).name})")

    if args.readme:
        text = args.readme.read_text()
        section = text[text.index("## Megatron-LM") :]
        snippet = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
        exec(compile(snippet.replace("out/demo/export/megatron", str(args.export.resolve())), "README snippet", "exec"), {"__name__": "readme"})
        summary.append("README snippet runs")

    if failures:
        print(f"check_megatron_export: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    print(
        f"check_megatron_export: {'; '.join(summary)}: layout and Megatron's IndexedDataset agree, every document equals the shards', "
        "and IndexedDatasetBuilder writes the same bytes"
    )


if __name__ == "__main__":
    main()
