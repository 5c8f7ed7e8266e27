#!/usr/bin/env python3
"""The datatrove baseline of bench/pipeline.bench.ts: the same job done the datatrove way.

    JsonlReader (canonical lwm-data JSONL, one trajectory per line)
      -> adapter: render the trajectory as ChatML text, the layout lwm-data's Qwen3 template
         produces (system = system prompt + "## Agent task" + "## Initial observation";
         user = action; assistant = observation), with `no_loss_ranges` over everything but the
         observations, so datatrove writes a loss mask like ours (all-observations policy)
      -> DocumentTokenizer with the same Qwen3 tokenizer.json lwm-data uses (HF `tokenizers`),
         save_loss_metadata=True, shuffle_documents=False (lwm-data does not shuffle either),
         everything else datatrove's defaults
      -> its writer: uint32 token files (.ds) + .loss + .index + .metadata

One process, one task, one worker (LocalPipelineExecutor tasks=1 workers=1) by default, and the
Rust tokenizer's thread pool held to one thread (RAYON_NUM_THREADS=1), so the numbers are per
core; --tasks N --workers N runs N tasks on N processes (bench/cores.bench.ts: many cores).
What datatrove does NOT do here (and lwm-data does): per-domain normalization (canonical JSON and
accessibility trees, secret redaction, Unicode checks, size caps), turn statistics and class
masking, zstd Parquet. Prints one JSON line: wall_s, input_mb, trajectories, tokens.

    .venv-bench/bin/python bench/datatrove/run.py --input DIR --output DIR --tokenizer tokenizer.json [--tasks N --workers N]
"""

import os

# Before `tokenizers` is imported: encode_batch would otherwise use every core.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader  # noqa: E402
from datatrove.pipeline.tokens import DocumentTokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = {p.stem: p.read_text().strip() for p in (ROOT / "configs" / "system-prompts").glob("*.md")}


def render(record: dict) -> tuple[str, list[tuple[int, int]]]:
    """ChatML text of a trajectory and the character ranges that carry no loss."""
    parts = [record.get("system") or PROMPTS.get(record.get("domain", ""), "")]
    if record.get("task"):
        parts.append("## Agent task\n\n" + record["task"])
    if record.get("initialObservation"):
        parts.append("## Initial observation\n\n" + record["initialObservation"])
    chunks = ["<|im_start|>system\n" + "\n\n".join(parts) + "<|im_end|>\n"]
    length = len(chunks[0])
    context_start = 0  # where the current run of no-loss text began
    no_loss: list[tuple[int, int]] = []
    for turn in record["turns"]:
        chunks.append("<|im_start|>user\n" + turn["action"] + "<|im_end|>\n<|im_start|>assistant\n")
        length += len(chunks[-1])
        no_loss.append((context_start, length))
        # The observation and its <|im_end|> carry the loss; the newline after it is context.
        chunks.append(turn["observation"] + "<|im_end|>\n")
        length += len(chunks[-1])
        context_start = length - 1
    # No newline after the last <|im_end|>: it would be a trailing token with loss.
    return "".join(chunks)[:-1], no_loss


def adapter(self, data: dict, path: str, id_in_file):
    text, no_loss = render(data)
    return {"text": text, "id": str(data["id"]), "metadata": {"domain": data.get("domain"), "no_loss_ranges": no_loss}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="folder of *.jsonl canonical trajectories")
    ap.add_argument("--output", required=True)
    ap.add_argument("--tokenizer", required=True, help="path to the Qwen3 tokenizer.json")
    ap.add_argument("--tasks", type=int, default=1, help="datatrove tasks (the input files are split among them)")
    ap.add_argument("--workers", type=int, default=1, help="processes running tasks at once")
    args = ap.parse_args()

    files = sorted(glob.glob(os.path.join(args.input, "*.jsonl")))
    input_bytes = sum(os.path.getsize(f) for f in files)
    executor = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(args.input, glob_pattern="*.jsonl", adapter=adapter, compression=None),
            DocumentTokenizer(
                output_folder=os.path.join(args.output, "tokens"),
                tokenizer_name_or_path=args.tokenizer,
                save_loss_metadata=True,
                shuffle_documents=False,  # batch_size: datatrove's default (10000 documents per encode_batch)
            ),
        ],
        tasks=args.tasks,
        workers=args.workers,
        logging_dir=os.path.join(args.output, "logs"),
        skip_completed=False,
    )
    started = time.perf_counter()
    executor.run()
    wall = time.perf_counter() - started

    tokens_dir = Path(args.output, "tokens")
    trajectories = sum(p.stat().st_size // 8 for p in tokens_dir.glob("*.index"))  # uint64 doc ends
    tokens = sum(int(p.read_text().splitlines()[1]) for p in tokens_dir.glob("*.metadata"))
    print(json.dumps({"wall_s": wall, "input_mb": input_bytes / 1e6, "trajectories": trajectories, "tokens": tokens}))


if __name__ == "__main__":
    main()
