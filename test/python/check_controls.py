"""Trainer-side check of an output made with controls on (docs/controls.md "Controls"), with the trainer's own tools.

    python test/python/check_controls.py OUT_DIR --tokenizer-dir DIR

OUT_DIR is an lwm-data output of a job with `controls.enabled` and `output.include_messages`:

1. `datasets.load_dataset(OUT_DIR)` reads it; pyarrow reads the `control_kind`,
   `control_instruction` and `controls` columns of every shard.
2. Every label's evidence span is inside its turn's observation (the assistant message of that
   turn: message 2 + 2 * turn), non-empty, and the text it spans is present in the sequence
   Hugging Face `tokenizers` decodes from the row's `input_ids`.
3. An instructed or counterfactual row's instruction is in its system message, under
   "Environment behaviour", and in the decoded sequence; other rows have none. A counterfactual
   row is `<id>#normal`, holds no label and is in the same split as its record.
4. The manifest's `controls` counts equal the shards': labelled and instructed trajectories,
   counterfactual rows, and labels per domain.
"""

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import datasets
import pyarrow.parquet as pq
from tokenizers import Tokenizer

failures: list[str] = []
KINDS = {"none", "instructed", "uninstructed", "counterfactual"}
HEADING = "## Environment behaviour\n\n"


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--tokenizer-dir", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    manifest = json.loads((out / "manifest.json").read_text())
    tokenizer = Tokenizer.from_file(str(Path(args.tokenizer_dir) / "tokenizer.json"))

    loaded = datasets.load_dataset(str(out))
    check(sum(len(split) for split in loaded.values()) == manifest["counts"]["documents"], "load_dataset reads every row")

    labelled = instructed = counterfactual = 0
    labels: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    split_of: dict[str, str] = {}
    counterfactual_splits: list[tuple[str, str]] = []
    spans = 0
    for path in sorted((out / "data").glob("*.parquet")):
        split = path.name.split("-")[0]
        table = pq.read_table(path)
        for column in ("control_kind", "control_instruction", "controls", "messages"):
            check(column in table.column_names, f"{path.name}: column {column}")
        for row in table.to_pylist():
            rid, kind, instruction, controls = row["id"], row["control_kind"], row["control_instruction"], row["controls"]
            messages = row["messages"]
            check(kind in KINDS, f"{rid}: control_kind {kind!r}")
            system = messages[0]["content"]
            decoded = tokenizer.decode(row["input_ids"], skip_special_tokens=False)
            if kind in ("instructed", "counterfactual"):
                check(instruction != "", f"{rid}: {kind} without an instruction")
                check(f"{HEADING}{instruction}" in system, f"{rid}: the instruction is not in the system message")
                check(instruction in decoded, f"{rid}: the instruction is not in the decoded sequence")
            else:
                check(instruction == "" and HEADING not in system, f"{rid}: {kind} row carries an instruction")
            if kind == "counterfactual":
                counterfactual += 1
                check(rid.endswith("#normal") and controls == [], f"{rid}: a counterfactual is <id>#normal with no label")
                counterfactual_splits.append((rid[: -len("#normal")], split))
                continue
            split_of[rid] = split
            check((kind == "none") == (len(controls) == 0), f"{rid}: control_kind {kind} with {len(controls)} label(s)")
            # A mixture's repeat (<id>#copyN) is the same record again: counted once, with its first copy.
            repeat = re.search(r"#copy\d+$", rid) is not None
            if controls and not repeat:
                labelled += 1
            if kind == "instructed" and not repeat:
                instructed += 1
            for control in controls:
                if not repeat:
                    labels[row["domain"]][control["label"]] += 1
                turn, start, end = control["turn"], control["start"], control["end"]
                index = 2 + 2 * turn
                check(index < len(messages) and messages[index]["role"] == "assistant", f"{rid}: turn {turn} has no observation")
                if index >= len(messages):
                    continue
                observation = messages[index]["content"]
                evidence = observation[start:end]
                check(0 <= start < end <= len(observation), f"{rid}: span [{start}, {end}) outside turn {turn}'s observation")
                check(evidence.strip() != "", f"{rid}: empty evidence for {control['label']}")
                check(evidence in decoded, f"{rid}: evidence {evidence[:60]!r} is not in the decoded sequence")
                spans += 1
    for rid, split in counterfactual_splits:
        check(split_of.get(rid) == split, f"{rid}#normal is in split {split}, its record in {split_of.get(rid)}")

    stated = manifest.get("controls")
    check(stated is not None, "the manifest has a controls block")
    if stated:
        check(stated["labelled"] == labelled, f"manifest labelled {stated['labelled']} vs shards {labelled}")
        check(stated["instructed"] == instructed, f"manifest instructed {stated['instructed']} vs shards {instructed}")
        check(stated["counterfactual"] == counterfactual, f"manifest counterfactual {stated['counterfactual']} vs shards {counterfactual}")
        found = {domain: dict(counts) for domain, counts in labels.items()}
        check(stated["labels"] == found, f"manifest labels {stated['labels']} vs shards {found}")
    check(spans > 0 and instructed > 0 and counterfactual > 0, f"the demo exercises controls: {spans} spans, {instructed} instructed, {counterfactual} counterfactual")

    if failures:
        print(f"check_controls: {len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(f"check_controls: OK — {spans} evidence spans in their observations and decoded sequences, {instructed} instructed, {counterfactual} counterfactual, manifest counts match")


if __name__ == "__main__":
    main()
