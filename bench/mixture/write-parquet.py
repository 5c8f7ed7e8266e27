#!/usr/bin/env python3
"""Writes bench/mixture.bench.ts's text JSONL ({"text", "id", "url"} per line) as a FineWeb-style
Parquet file: string columns text, id, url, zstd, row groups of --row-group-rows rows, streamed
(memory holds one row group). Prints one JSON line: rows, row_groups, bytes.

    .venv-bench/bin/python bench/mixture/write-parquet.py --input docs.jsonl --output docs.parquet [--row-group-rows 1000]
"""

import argparse
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema([("text", pa.string()), ("id", pa.string()), ("url", pa.string())])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--row-group-rows", type=int, default=1000)
    args = ap.parse_args()

    rows = 0
    groups = 0
    batch: dict[str, list[str]] = {name: [] for name in SCHEMA.names}

    def flush(writer: pq.ParquetWriter) -> None:
        nonlocal groups
        if not batch["text"]:
            return
        writer.write_table(pa.table(batch, schema=SCHEMA), row_group_size=len(batch["text"]))
        groups += 1
        for values in batch.values():
            values.clear()

    with pq.ParquetWriter(args.output, SCHEMA, compression="zstd") as writer, open(args.input, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            for name in SCHEMA.names:
                batch[name].append(record[name])
            rows += 1
            if len(batch["text"]) >= args.row_group_rows:
                flush(writer)
        flush(writer)
    print(json.dumps({"rows": rows, "row_groups": groups, "bytes": os.path.getsize(args.output)}))


if __name__ == "__main__":
    main()
