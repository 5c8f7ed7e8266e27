#!/usr/bin/env python3
"""The datatrove baseline of bench/mixture.bench.ts: FineWeb-style Parquet text tokenized the
datatrove way.

    ParquetReader (the `text` and `id` columns, read_metadata=False: the columns lwm-data reads;
                   batches of datatrove's default 1000 rows)
      -> DocumentTokenizer with the same Qwen3 tokenizer.json lwm-data uses (HF `tokenizers`),
         eos_token <|endoftext|> after every document (what lwm-data writes after a text
         document), shuffle_documents=False (lwm-data does not shuffle), everything else
         datatrove's defaults (encode_batch of 10000 documents)
      -> its writer: token files (.ds) + .index + .metadata

One process, one task, one worker (LocalPipelineExecutor tasks=1 workers=1), the Rust tokenizer's
thread pool held to one thread (RAYON_NUM_THREADS=1), so the numbers are per core. What datatrove
does not do here (and lwm-data does): Unicode check/repair and secret redaction of every
document, a loss mask, zstd Parquet shards. Prints one JSON line: wall_s, documents, tokens.

    .venv-bench/bin/python bench/datatrove/text.py --input DIR --output DIR --tokenizer tokenizer.json
"""

import os

# Before `tokenizers` is imported: encode_batch would otherwise use every core.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import ParquetReader  # noqa: E402
from datatrove.pipeline.tokens import DocumentTokenizer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="folder of *.parquet files with a text column")
    ap.add_argument("--output", required=True)
    ap.add_argument("--tokenizer", required=True, help="path to the Qwen3 tokenizer.json")
    args = ap.parse_args()

    executor = LocalPipelineExecutor(
        pipeline=[
            ParquetReader(args.input, glob_pattern="*.parquet", read_metadata=False),
            DocumentTokenizer(
                output_folder=os.path.join(args.output, "tokens"),
                tokenizer_name_or_path=args.tokenizer,
                eos_token="<|endoftext|>",
                shuffle_documents=False,
            ),
        ],
        tasks=1,
        workers=1,
        logging_dir=os.path.join(args.output, "logs"),
        skip_completed=False,
    )
    started = time.perf_counter()
    executor.run()
    wall = time.perf_counter() - started

    tokens_dir = Path(args.output, "tokens")
    documents = sum(p.stat().st_size // 8 for p in tokens_dir.glob("*.index"))  # uint64 doc ends
    tokens = sum(int(p.read_text().splitlines()[1]) for p in tokens_dir.glob("*.metadata"))
    print(json.dumps({"wall_s": wall, "documents": documents, "tokens": tokens}))


if __name__ == "__main__":
    main()
