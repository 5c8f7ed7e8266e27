"""ms-swift reads `export swift`'s per-message `loss_scale` (mask.weights) as the shards' `loss_weight`.

Usage: test_loss_weight_swift.py <output exported with `lwm-data export swift`> --tokenizer-dir DIR
(run by test/loss-weight.test.ts with .venv-swift's Python).

Through `swift sft`'s own data path (check_swift.py's Swift: the README's flags plus
`--is_binary_loss_scale false`, which makes ms-swift keep float loss scales instead of folding them
into labels), every exported row encodes to its shard's input_ids, and on every token both train
ms-swift's `loss_scale` equals the shard's `loss_weight`, except on turn ends: ms-swift scales a message's
content and gives its `<|im_end|>` scale 1 (counted, and printed). Negative control: the same template with a
binary loss scale (ms-swift's default) drops the weights (no `loss_scale`).
"""

import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
import check_swift  # noqa: E402


def exported_shard_rows(output: Path) -> list[dict]:
    """The train split's shard rows in `export swift`'s order, less the refused ones."""
    manifest = json.loads((output / "manifest.json").read_text())
    refused = {(r["shard"], r["row"]) for r in check_swift.read_lines(output / "export/swift/refused.jsonl")}
    rows = []
    for shard in manifest["shards"]:
        if shard.get("split", "train") != "train":
            continue
        table = pq.read_table(output / shard["path"], columns=["id", "input_ids", "loss_mask", "loss_weight"]).to_pylist()
        rows += [row for index, row in enumerate(table) if (shard["path"], index) not in refused]
    return rows


def skip_dataset_fingerprints() -> None:
    """datasets fingerprints every `map` by dill-pickling its function, here ms-swift's template with the
    whole tokenizer (about a third of this check's CPU time). Its cache lives in a fresh temporary folder
    and is never reused, so a random fingerprint changes nothing but the time."""
    import datasets.fingerprint

    assert callable(getattr(datasets.fingerprint, "update_fingerprint", None)), "datasets renamed update_fingerprint"
    datasets.fingerprint.update_fingerprint = lambda *args, **kwargs: datasets.fingerprint.generate_random_fingerprint()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    work = Path(tempfile.mkdtemp(prefix="lwm-swift-weights-"))
    os.environ.setdefault("HF_DATASETS_CACHE", str(work / "datasets-cache"))
    logging.disable(logging.WARNING)
    skip_dataset_fingerprints()
    failures: list[str] = []
    try:
        check_swift.tiny_qwen3(args.tokenizer_dir, work / "model")
        train = args.output / "export/swift/train.jsonl"
        check_swift.SWIFT_FLAGS = [*check_swift.SWIFT_FLAGS, "--is_binary_loss_scale", "false"]
        with contextlib.redirect_stdout(io.StringIO()):
            swift = check_swift.Swift(work / "model", train, work)
            encoded = swift.encode_file(train)
        rows = exported_shard_rows(args.output)
        lines = check_swift.read_lines(train)
        if len(rows) != len(encoded) or len(lines) != len(rows):
            failures.append(f"{len(rows)} shard rows, {len(lines)} exported lines, {len(encoded)} encoded by ms-swift")
        both = shard_only = swift_only = turn_ends = 0
        im_end = swift.tokenizer.convert_tokens_to_ids("<|im_end|>")
        swift_only_scales: Counter = Counter()
        distinct = set()
        for row, enc in zip(rows, encoded):
            ids, scales, labels = enc["input_ids"], enc.get("loss_scale"), enc["labels"]
            if list(ids) != row["input_ids"]:
                failures.append(f"{row['id']}: ms-swift's input_ids differ from the shard's")
                continue
            if scales is None:
                failures.append(f"{row['id']}: ms-swift kept no loss_scale")
                continue
            for t, weight in enumerate(row["loss_weight"]):
                trained = labels[t] != -100
                if weight > 0 and trained:
                    both += 1
                    distinct.add(weight)
                    # ms-swift scales a message's content; its turn end (`<|im_end|>`, the template's
                    # suffix) keeps scale 1 whatever the message's loss_scale.
                    if ids[t] == im_end and scales[t] == 1.0:
                        turn_ends += 1
                    elif abs(scales[t] - weight) > 1e-6 * max(1.0, weight):
                        failures.append(f"{row['id']} token {t}: ms-swift loss_scale {scales[t]} != loss_weight {weight}")
                elif weight > 0:
                    shard_only += 1
                elif trained:
                    swift_only += 1
                    swift_only_scales[round(scales[t], 6)] += 1
        if both == 0 or len(distinct) < 3:
            failures.append(f"too little to compare: {both} tokens, {len(distinct)} distinct weights")
        # ms-swift's conventions (docs/exports.md "Training with ms-swift"): a few tokens either way, not the bulk.
        if shard_only + swift_only > 0.05 * both:
            failures.append(f"ms-swift trains {swift_only} tokens the shards do not and skips {shard_only}: more than 5% of {both}")
        print(
            f"ms-swift (--is_binary_loss_scale false): {len(rows)} rows, {both} tokens trained by both, loss_scale = loss_weight on "
            f"{both - turn_ends} ({len(distinct)} distinct weights) and 1.0 on {turn_ends} turn ends (<|im_end|>); "
            f"its conventions: {swift_only} more tokens trained, {shard_only} fewer"
        )
        # Negative control: with a binary loss scale ms-swift keeps only labels, and the weights are gone.
        with contextlib.redirect_stdout(io.StringIO()):
            binary = swift.other_template(is_binary_loss_scale=True)
            control = check_swift.encode_rows(binary, lines[:3])
        if any(enc.get("loss_scale") is not None for enc in control):
            failures.append("negative control: a binary loss scale still gave loss_scale")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"FAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
