"""Trainer-side check of an `lwm-data sft sample` output, with the trainer's own tools.

    python test/python/check_sft_shards.py OUTPUT_DIR --tokenizer-dir DIR

- manifest: prompts = kept + rejected + failed; shard files' sha256, rows and tokens as listed;
- every row re-rendered from its `messages` with jinja2 (as transformers' apply_chat_template
  does) and tokenized with Hugging Face `tokenizers` gives exactly its input_ids;
- the tokens with loss 1 decode to exactly the assistant answer plus its end-of-turn token, and
  form one run at the end (nothing of the prompt is trained);
- sft/candidates.parquet (pyarrow) agrees with the manifest: one `kept` row per kept sample,
  one `failed` row per failed prompt, every candidate counted.
"""

import argparse
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

from check_shards import check, failures, render, sha256_of


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()
    out: Path = args.output
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"]
    check(manifest["format"] == "lwm-data/sft", f"manifest format {manifest['format']}")
    check(counts["prompts"] == counts["kept"] + counts["rejected"] + counts["failed"], f"prompts != kept + rejected + failed: {counts}")
    check(counts["kept"] > 0, "no sample was kept: nothing to check")

    tokenizer = Tokenizer.from_file(str(args.tokenizer_dir / "tokenizer.json"))
    config = json.loads((args.tokenizer_dir / "tokenizer_config.json").read_text())
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
    template = env.from_string(config["chat_template"])
    end_of_turn = config["eos_token"]

    rows = tokens = loss = 0
    for shard in manifest["shards"]:
        path = out / shard["path"]
        check(sha256_of(path) == shard["sha256"], f"{path.name}: sha256 differs from the manifest")
        table = pq.read_table(path)
        check(table.num_rows == shard["rows"], f"{path.name}: {table.num_rows} rows, manifest says {shard['rows']}")
        for row in table.to_pylist():
            rows += 1
            where = f"{path.name} id={row['id']}"
            messages = row["messages"]
            answer = messages[-1]
            check(answer["role"] == "assistant" and answer["loss"] and not any(m["loss"] for m in messages[:-1]), f"{where}: loss flags")
            reference = tokenizer.encode(render(template, messages), add_special_tokens=False).ids
            check(reference == row["input_ids"], f"{where}: ids differ from jinja2 + tokenizers ({len(row['input_ids'])} vs {len(reference)} tokens)")
            mask = row["loss_mask"]
            trained = [i for i, bit in zip(row["input_ids"], mask) if bit == 1]
            check(
                tokenizer.decode(trained, skip_special_tokens=False) == answer["content"] + end_of_turn,
                f"{where}: trained tokens do not decode to the answer + {end_of_turn}",
            )
            start = mask.index(1)
            check(all(mask[start : start + len(trained)]), f"{where}: trained tokens are not one run")
            tokens += len(row["input_ids"])
            loss += len(trained)
    check(rows == counts["kept"], f"{rows} rows in the shards, manifest kept {counts['kept']}")
    check(tokens == manifest["tokens"]["total"] and loss == manifest["tokens"]["loss"], "token counts differ from the manifest")

    candidates = pq.read_table(out / "sft" / "candidates.parquet").to_pylist()
    by_status: dict[str, int] = {}
    for candidate in candidates:
        by_status[candidate["status"]] = by_status.get(candidate["status"], 0) + 1
    check(by_status.get("kept", 0) == counts["kept"], f"candidates table: {by_status.get('kept', 0)} kept rows, manifest {counts['kept']}")
    check(by_status.get("failed", 0) == counts["failed"], f"candidates table: {by_status.get('failed', 0)} failed rows, manifest {counts['failed']}")
    check(len(candidates) - by_status.get("failed", 0) == counts["candidates"], "candidates table rows differ from the manifest's candidates")

    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(
        f"sft: {rows} kept samples re-rendered with jinja2 and re-tokenized with tokenizers: ids agree; "
        f"loss 1 exactly over each answer + {end_of_turn} ({loss} of {tokens} tokens); "
        f"{len(candidates)} candidate rows agree with the manifest ({counts['kept']} kept, {counts['rejected']} rejected, {counts['failed']} failed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
