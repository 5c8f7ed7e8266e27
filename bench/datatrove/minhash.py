#!/usr/bin/env python3
"""The datatrove baseline of bench/curate.bench.ts: near-duplicate removal the datatrove way, its
four MinHash stages over the same trajectories lwm-data curates.

    JsonlReader (canonical lwm-data JSONL, one trajectory per line)
      -> adapter: a Document whose text is the trajectory's turns joined (action, observation, ...,
         one per line), the text near-dedup compares (lwm-data hashes the turns too, not the
         system prompt or task)
    1. MinhashDedupSignature  (1 task)   per-document signatures, sorted per bucket
    2. MinhashDedupBuckets    (14 tasks, one per bucket, run one after the other) candidate pairs
    3. MinhashDedupCluster    (1 task)   union-find over the pairs, the ids to remove
    4. MinhashDedupFilter     (1 task)   the corpus read again, removed documents to their own
                                         JSONL (exclusion writer), kept ones to the output JSONL

MinhashConfig() defaults: 5-gram shingles, 14 buckets x 8 hashes (lwm-data's defaults too), 64-bit
xxhash, datatrove's default text normalization (lowercase, punctuation removed, numbers kept).
Word tokenizer: `--tokenizer split` (default) splits the normalized text on whitespace, the
fastest datatrove can go; `--tokenizer default` uses datatrove's English tokenizer (spaCy, which
must be installed: `pip install spacy`), slower. LocalPipelineExecutor(workers=1) for every stage,
so each runs in this one process, one core. Each stage is timed on its own (wall and CPU time of
this process); prints one JSON line.

    .venv-bench/bin/python bench/datatrove/minhash.py --input DIR --output DIR [--tokenizer split|default]
"""

import argparse
import json
import os
import resource
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import (
    MinhashConfig,
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.word_tokenizers import WordTokenizer


class SplitTokenizer(WordTokenizer):
    """Whitespace split of the already-normalized text (datatrove applies simplify_text first)."""

    def word_tokenize(self, text: str) -> list[str]:
        return text.split()

    def sent_tokenize(self, text: str) -> list[str]:
        return [text]

    def span_tokenize(self, text: str) -> list[tuple[int, int]]:
        return [(0, len(text))]


def adapter(self, data: dict, path: str, id_in_file):
    text = "\n".join(part for turn in data["turns"] for part in (turn["action"], turn["observation"]))
    return {"text": text, "id": str(data["id"]), "metadata": {"domain": data.get("domain")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="folder of *.jsonl canonical trajectories")
    ap.add_argument("--output", required=True)
    ap.add_argument("--tokenizer", choices=["split", "default"], default="split")
    args = ap.parse_args()

    config = MinhashConfig()
    language = SplitTokenizer() if args.tokenizer == "split" else "en"
    out = Path(args.output)
    logs = out / "logs"

    def reader():
        return JsonlReader(args.input, glob_pattern="*.jsonl", adapter=adapter, compression=None)

    stages = [
        ("signatures", [reader(), MinhashDedupSignature(output_folder=str(out / "signatures"), config=config, language=language)], 1),
        (
            "buckets",
            [MinhashDedupBuckets(input_folder=str(out / "signatures"), output_folder=str(out / "buckets"), config=config)],
            config.num_buckets,
        ),
        ("cluster", [MinhashDedupCluster(input_folder=str(out / "buckets"), output_folder=str(out / "remove_ids"), config=config)], 1),
        (
            "filter",
            [
                reader(),
                MinhashDedupFilter(
                    input_folder=str(out / "remove_ids"),
                    exclusion_writer=JsonlWriter(str(out / "removed"), compression=None),
                ),
                JsonlWriter(str(out / "deduplicated"), compression=None),
            ],
            1,
        ),
    ]
    timings = {}
    for name, pipeline, tasks in stages:
        executor = LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=1, logging_dir=str(logs / name), skip_completed=False)
        wall = time.perf_counter()
        cpu = time.process_time()
        executor.run()
        timings[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}

    removed = []
    for path in sorted((out / "removed").glob("*.jsonl")):
        with open(path) as f:
            removed.extend(json.loads(line)["id"] for line in f if line.strip())
    files = sorted(Path(args.input).glob("*.jsonl"))
    print(
        json.dumps(
            {
                "input_mb": sum(os.path.getsize(f) for f in files) / 1e6,
                "stages": timings,
                "wall_s": sum(t["wall_s"] for t in timings.values()),
                "cpu_s": sum(t["cpu_s"] for t in timings.values()),
                "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6,
                "config": str(config),
                "tokenizer": args.tokenizer,
                "removed": removed,
            }
        )
    )


if __name__ == "__main__":
    main()
