"""ms-swift's own template machinery on `lwm-data export swift`: ids and labels equal the shards'.

    .venv-swift/bin/python test/python/check_swift.py OUTPUT_DIR [OUTPUT_DIR ...] --tokenizer-dir DIR

Runs in .venv-swift (test/python/requirements-swift.txt: ms-swift 4.6.0, which needs transformers < 5.20).
For each lwm-data output folder (already exported with `lwm-data export swift`, to <output>/export/swift):

1. `swift sft`'s own data path (swift.pipelines.train.sft.SwiftSft with the flags the README gives,
   `--template qwen3 --loss_scale last_round --preserve_thinking true`, and `--model_type qwen3` for the
   local model folder; last_round places the empty thinking block as Qwen3's template does, and the `loss`
   flags on every assistant message still decide what is trained; without --preserve_thinking, last_round
   strips the whitespace around earlier assistant contents (history-thinking removal); its argument
   parsing, JSONL loader, Qwen3 template in train mode, the per-message `loss` flags, and the encoded dataset
   the trainer is handed), on a tiny random-initialised Qwen3 saved with the project's Qwen3 tokenizer (no
   weights downloaded). Row by row, against the shard row the export line came from:
   - input_ids equal the shard's input_ids exactly;
   - each label is -100 or its own input id, and the trained positions (label != -100) are exactly the
     shard's loss_mask but for three ms-swift conventions (Template._add_dynamic_eos, the ChatML suffix
     "<|im_end|>\\n"): it also trains the "\\n" after every trained <|im_end|>, and the closing
     "<|im_end|>\\n" of the final assistant turn even when that turn's `loss` is false (the flag covers the
     response only); it does not train the <|im_end|> of an earlier trained turn whose content is empty (a
     command with no output: the shards train it). Nothing else may differ; each count is printed.
   - the padded batch ms-swift's data collator makes of the rows gives back the same ids and labels.
2. ms-swift's defaults (`--template qwen3` alone) differ, and only as explained: its default loss_scale
   inserts Qwen3's empty thinking block "<think>\\n\\n</think>\\n\\n" into every assistant turn, whereas
   Qwen3's official chat template (and the shards) give it only to assistant turns after the last user
   message. Removing those blocks from both gives equal text (checked; as text, because where a content
   starts with whitespace the block's "\\n\\n" merges with it into other tokens); the counts are printed.
3. Agent template: the export has no `tools`, `tool_calls` or tool roles (checked), so the agent template
   (hermes, ms-swift's default for Qwen3) renders nothing: `--agent_template hermes` gives the same ids and
   labels. With a tools list added to every row, and on a tool-call conversation, ms-swift's hermes agent
   template renders exactly what Qwen3's official template (tokenizer.apply_chat_template) renders.
   The export writes no per-message `loss_scale`, so that route is not exercised.
4. Negative controls, run here through the same comparison: one assistant message's `loss` flipped (a
   labels mismatch), one character of a user message changed (an ids mismatch), a tools list added (the
   agent template changes the ids): each must be detected.
5. The rows `export swift` refused because a trained assistant turn after the last user message begins with
   whitespace (ms-swift writes the empty thinking block before it, and its ignore_empty_think loss scale,
   regex ^<think>\\s*</think>\\s*, cuts that whitespace off with the block, untrained and tokenized apart):
   ms-swift, through the same template, encodes every one of them to other ids or labels than its shard.
"""

import argparse
import contextlib
import copy
import io
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

failures: list[str] = []

# The flags the README gives for `swift sft` on an export swift folder (see the module docstring).
SWIFT_FLAGS = ["--template", "qwen3", "--loss_scale", "last_round", "--preserve_thinking", "true"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
        },
    }
]


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def tiny_qwen3(tokenizer_dir: Path, into: Path) -> None:
    """A one-layer random Qwen3 (ms-swift loads a model before it encodes) with the project's tokenizer files."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=151936, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=8, max_position_embeddings=40960, tie_word_embeddings=True,
    )  # fmt: skip
    torch.manual_seed(0)
    Qwen3ForCausalLM(config).save_pretrained(into)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_dir / name, into / name)


def shard_rows(output: Path) -> dict[str, list[dict]]:
    """Per split, the shard rows in the order `export swift` writes them, less the refused ones."""
    manifest = json.loads((output / "manifest.json").read_text())
    refused = {(r["shard"], r["row"]) for r in read_lines(output / "export/swift/refused.jsonl")}
    splits: dict[str, list[dict]] = {}
    for shard in manifest["shards"]:
        table = pq.read_table(output / shard["path"], columns=["id", "input_ids", "loss_mask", "messages"]).to_pylist()
        rows = splits.setdefault(shard.get("split", "train"), [])
        rows += [row for index, row in enumerate(table) if (shard["path"], index) not in refused]
    return splits


def split_refused(output: Path, split: str) -> list[tuple[dict, dict]]:
    """The rows `export swift` refused for ms-swift's whitespace split (reason "begins with whitespace"), each
    with the line it would have written: (shard row, {"messages": ...}). Such rows hold no special-token
    literal (that reason comes first), so their messages column is their original text."""
    entries = read_lines(output / "export/swift/refused.jsonl")
    refused = [r for r in entries if r["split"] == split and "begins with whitespace" in r["reason"]]
    result = []
    for entry in refused:
        table = pq.read_table(output / entry["shard"], columns=["id", "input_ids", "loss_mask", "messages"]).to_pylist()
        row = table[entry["row"]]
        messages = [{"role": m["role"], "content": m["content"], **({"loss": m["loss"]} if m["role"] == "assistant" else {})} for m in row["messages"]]
        result.append((row, {"messages": messages}))
    return result


class Swift:
    """ms-swift's `swift sft` up to the encoded dataset: arguments, model + processor, template, loader."""

    def __init__(self, model_dir: Path, first_dataset: Path, work: Path):
        from swift.pipelines.train.sft import SwiftSft

        argv = [
            "--model", str(model_dir), "--model_type", "qwen3", *SWIFT_FLAGS, "--dataset", str(first_dataset), "--dataset_shuffle", "false",
            "--split_dataset_ratio", "0", "--strict", "true", "--dataset_num_proc", "1", "--tuner_type", "full",
            "--torch_dtype", "float32", "--use_cpu", "true", "--report_to", "none", "--output_dir", str(work / "sft"),
        ]  # fmt: skip
        self.sft = SwiftSft(argv)
        self.args = self.sft.args
        self.template = self.sft.template
        self.tokenizer = self.template.tokenizer

    def encode_file(self, path: Path) -> list[dict]:
        """What `swift sft --dataset PATH` hands its trainer: the encoded rows, in file order (no shuffle)."""
        self.args.dataset = [str(path)]
        train, _ = self.sft._prepare_dataset()
        return [train[i] for i in range(len(train))]

    def other_template(self, **overrides):
        from swift.template import get_template

        template = get_template(self.sft.processor, **{**self.args.get_template_kwargs(), **overrides})
        template.set_mode("train")
        return template


def encode_rows(template, lines: list[dict]) -> list[dict]:
    return [template.encode(copy.deepcopy(line)) for line in lines]


def ids_of(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def expected_trained(ids: list[int], mask: list[int], final_loss: bool, im_end: int, newline: int) -> tuple[set[int], dict]:
    """The positions ms-swift trains, derived from the shard row, and how many of each kind differ from the mask.

    ms-swift labels a response's tokens by its `loss` flag; an earlier turn's "<|im_end|>\n" only when it
    follows trained tokens (Template._add_dynamic_eos), so not after an empty trained response; and the final
    turn's "<|im_end|>\n" (its suffix, outside the `loss` flag) always. The shards train each loss
    message's content and its <|im_end|>, never the "\n" after it."""
    trained = {i for i, m in enumerate(mask) if m}
    want = set(trained)
    counts = {"after_end": 0, "empty_ends": 0, "final_rows": 0}
    final_end = len(ids) - 2
    for i in sorted(trained):
        if ids[i] != im_end or i + 1 >= len(ids) or ids[i + 1] != newline:
            continue
        if i == final_end or i - 1 in trained:
            want.add(i + 1)
            counts["after_end"] += 1
        else:
            want.discard(i)
            counts["empty_ends"] += 1
    if not final_loss and final_end >= 0 and ids[final_end:] == [im_end, newline]:
        want |= {final_end, final_end + 1}
        counts["final_rows"] += 1
    return want, counts


def compare(name: str, rows: list[dict], encoded: list[dict], tokenizer) -> tuple[list[str], dict]:
    """Problems (ids, labels) of ms-swift's encoding against the shard rows, and the extras it trains."""
    problems: list[str] = []
    stats = {"rows": len(rows), "tokens": 0, "loss": 0, "after_end": 0, "empty_ends": 0, "final_rows": 0}
    im_end, newline = tokenizer.convert_tokens_to_ids("<|im_end|>"), ids_of(tokenizer, "\n")[0]
    if len(encoded) != len(rows):
        return [f"{name}: ms-swift encoded {len(encoded)} rows, the shards have {len(rows)} exported rows"], stats
    for n, (row, enc) in enumerate(zip(rows, encoded)):
        where = f"{name} line {n + 1} (id={row['id']})"
        ids, mask, labels = list(row["input_ids"]), list(row["loss_mask"]), list(enc["labels"])
        if list(enc["input_ids"]) != ids:
            got = list(enc["input_ids"])
            at = next((i for i, (a, b) in enumerate(zip(got, ids)) if a != b), min(len(got), len(ids)))
            problems.append(
                f"{where}: input_ids differ at token {at} ({len(got)} vs {len(ids)} tokens): ms-swift "
                f"{tokenizer.decode(got[max(0, at - 8) : at + 8])!r} vs shard {tokenizer.decode(ids[max(0, at - 8) : at + 8])!r}"
            )
            continue
        # The shard's own flags decide which final turn is untrained (a control flips the export's).
        assistants = [m for m in row["messages"] if m["role"] == "assistant"]
        final_loss = bool(assistants and assistants[-1].get("loss"))
        want, counts = expected_trained(ids, mask, final_loss, im_end, newline)
        got = {i for i, label in enumerate(labels) if label != -100}
        wrong = [i for i in got if labels[i] != ids[i]]
        if wrong:
            problems.append(f"{where}: labels at {wrong[:5]} are not the input ids there")
        if got != want:
            extra, missing = sorted(got - want), sorted(want - got)
            show = lambda at: [(i, tokenizer.decode([ids[i]])) for i in at[:6]]  # noqa: E731
            problems.append(f"{where}: labels trained where the shard does not {show(extra)}; not trained where it does {show(missing)}")
            continue
        stats["tokens"] += len(ids)
        stats["loss"] += sum(mask)
        for key, value in counts.items():
            stats[key] += value
    return problems, stats


def check_tool_call(swift: Swift) -> None:
    """ms-swift's agent format (tool_call / tool_response roles, hermes) against the official template."""
    tokenizer = swift.tokenizer
    call = {"name": "shell", "arguments": {"cmd": "ls"}}
    official = [
        {"role": "system", "content": "You operate a shell."},
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": call}]},
        {"role": "tool", "content": "notes.txt"},
        {"role": "assistant", "content": "There is one file, notes.txt."},
    ]
    agent = [*official[:2], {"role": "tool_call", "content": json.dumps(call)}, {"role": "tool_response", "content": "notes.txt"}, official[4]]
    encoded = swift.template.encode({"messages": agent, "tools": TOOLS})
    reference = tokenizer.apply_chat_template(official, tools=TOOLS, tokenize=False)
    check(
        encoded["input_ids"] == ids_of(tokenizer, reference),
        f"ms-swift's hermes tool-call conversation differs from Qwen3's official template:\n{tokenizer.decode(encoded['input_ids'])!r}\n{reference!r}",
    )


def check_output(swift: Swift, output: Path, work: Path) -> list[str]:
    """Parts 1-4 for one output folder; returns a summary line per split."""
    tokenizer = swift.tokenizer
    summaries = []
    export = output / "export/swift"
    for split, rows in shard_rows(output).items():
        path = export / f"{split}.jsonl"
        name = f"{output.name}/{split}.jsonl"
        lines = read_lines(path)
        check(len(lines) == len(rows), f"{name}: {len(lines)} lines for {len(rows)} exported shard rows")

        # 1. swift sft's encoded dataset (loader + template + loss flags) against the shards.
        encoded = swift.encode_file(path)
        problems, stats = compare(name, rows, encoded, tokenizer)
        failures.extend(problems)
        batch = swift.template.data_collator(encoded)
        for n, enc in enumerate(encoded):
            length = len(enc["input_ids"])
            same = batch["input_ids"][n, :length].tolist() == enc["input_ids"] and batch["labels"][n, :length].tolist() == enc["labels"]
            check(same and bool((batch["labels"][n, length:] == -100).all()), f"{name} line {n + 1}: the data collator changed the row")

        # 2. ms-swift's defaults: the only difference is the empty thinking block on earlier assistant turns
        # (compared as text: where a content starts with whitespace, the block's "\n\n" merges with it).
        defaults = swift.other_template(loss_scale="default+ignore_empty_think", preserve_thinking=None)
        opener, block = "<|im_start|>assistant\n", "<think>\n\n</think>\n\n"
        differing = inserted = 0
        for n, (row, enc) in enumerate(zip(rows, encode_rows(defaults, lines))):
            if enc["input_ids"] == list(row["input_ids"]):
                continue
            differing += 1
            mine, theirs = tokenizer.decode(enc["input_ids"]), tokenizer.decode(row["input_ids"])
            inserted += mine.count(opener + block) - theirs.count(opener + block)
            check(
                mine.replace(opener + block, opener) == theirs.replace(opener + block, opener) and mine.count(block) > theirs.count(block),
                f"{name} line {n + 1}: ms-swift's defaults differ by more than empty thinking blocks",
            )

        # 3. Agent template: no tool fields, so hermes renders nothing; with tools it renders Qwen3's official form.
        tool_fields = [
            n + 1
            for n, line in enumerate(lines)
            if set(line) != {"messages"} or any(set(m) - {"role", "content", "loss"} or m["role"] not in ("system", "user", "assistant") for m in line["messages"])
        ]
        check(not tool_fields, f"{name}: lines {tool_fields[:5]} carry fields other than role/content/loss (tools?): extend this check")
        hermes = encode_rows(swift.other_template(agent_template="hermes"), lines)
        check(
            all(a["input_ids"] == b["input_ids"] and a["labels"] == b["labels"] for a, b in zip(hermes, encoded)),
            f"{name}: --agent_template hermes changes the encoding of rows without tools",
        )
        with_tools = [{**line, "tools": TOOLS} for line in lines]
        tools_encoded = encode_rows(swift.template, with_tools)
        official_same = 0
        for line, enc in zip(lines, tools_encoded):
            plain = [{"role": m["role"], "content": m["content"]} for m in line["messages"]]
            reference = tokenizer.apply_chat_template(plain, tools=TOOLS, tokenize=False)
            official_same += tokenizer.decode(enc["input_ids"]) == reference and enc["input_ids"] == ids_of(tokenizer, reference)
        check(official_same == len(lines), f"{name}: with a tools list, ms-swift's hermes rendering differs from the official template on {len(lines) - official_same} rows")

        # 4. Negative controls, through the same comparison, on one row (an earlier assistant turn where there
        # is one, so that only its labels can change): the flipped flag goes through swift sft's loader too.
        index = next((n for n, line in enumerate(lines) if sum(m["role"] == "assistant" for m in line["messages"]) >= 2), 0)
        one_row, flipped = rows[index : index + 1], copy.deepcopy(lines[index])
        target = next(m for m in flipped["messages"] if m["role"] == "assistant")
        target["loss"] = not target["loss"]
        flipped_path = work / f"{output.name}-{split}-flipped.jsonl"
        flipped_path.write_text(json.dumps(flipped) + "\n")
        found, _ = compare(name, one_row, swift.encode_file(flipped_path), tokenizer)
        check(
            len(found) == 1 and "labels trained" in found[0] and "input_ids" not in found[0],
            f"{name}: control: a flipped loss flag on line {index + 1} was not detected as a labels mismatch: {found[:2]}",
        )
        edited = copy.deepcopy(lines[index])
        user = next(m for m in edited["messages"] if m["role"] == "user")
        user["content"] += "x"
        found, _ = compare(name, one_row, encode_rows(swift.template, [edited]), tokenizer)
        check(len(found) == 1 and "input_ids differ" in found[0], f"{name}: control: a changed user message was not detected as an ids mismatch: {found[:2]}")
        found, _ = compare(name, rows, tools_encoded, tokenizer)
        check(len(found) == len(lines), f"{name}: control: a tools list left {len(lines) - len(found)} rows' ids unchanged")

        # 5. The rows the export refused for ms-swift's whitespace split: ms-swift does encode each to other ids or
        # labels than its shard, so the refusal is needed.
        refused = split_refused(output, split)
        if refused:
            found, _ = compare(name, [row for row, _ in refused], encode_rows(swift.template, [line for _, line in refused]), tokenizer)
            check(len(found) == len(refused), f"{name}: {len(refused) - len(found)} rows refused for ms-swift's whitespace split encode to the shard's ids and labels")
        if not problems:
            summaries.append(
                f"swift: {name}: {stats['rows']} rows, {stats['tokens']} tokens: ms-swift {swift.args.loss_scale} ids = shards' input_ids, "
                f"labels = loss_mask ({stats['loss']} tokens) + {stats['after_end']} '\\n' after trained <|im_end|> + the closing "
                f"<|im_end|>\\n of {stats['final_rows']} untrained final turns - {stats['empty_ends']} <|im_end|> of empty trained earlier turns; defaults (default+ignore_empty_think): {differing} rows differ, "
                f"by {inserted} empty thinking blocks only; no tool fields, hermes = plain, with tools = official template; controls detected; "
                f"{len(refused)} rows refused for ms-swift's whitespace split (a trained final turn that begins with whitespace), each encoded by ms-swift to other ids or labels than its shard"
            )
    return summaries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outputs", type=Path, nargs="+", help="lwm-data output folders, each exported with `lwm-data export swift`")
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--verbose", action="store_true", help="show ms-swift's logs")
    args = parser.parse_args()
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="lwm-swift-"))
    os.environ.setdefault("HF_DATASETS_CACHE", str(work / "datasets-cache"))
    if not args.verbose:
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # ms-swift logs every argument and a decoded sample; keep them unless asked (errors still raise).
    quiet = contextlib.nullcontext() if args.verbose else contextlib.redirect_stdout(io.StringIO())
    try:
        if not args.verbose:
            logging.disable(logging.WARNING)
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        tiny_qwen3(args.tokenizer_dir, work / "model")
        with quiet:
            first = next(p for p in sorted((args.outputs[0] / "export/swift").glob("*.jsonl")) if p.name != "refused.jsonl")
            swift = Swift(work / "model", first, work)
        check(
            swift.args.loss_scale == "last_round+ignore_empty_think",
            f"ms-swift turned --loss_scale last_round into {swift.args.loss_scale!r}, not last_round+ignore_empty_think",
        )
        with quiet:
            check_tool_call(swift)
        for output in args.outputs:
            with quiet:
                summaries = check_output(swift, output, work)
            print("\n".join(summaries))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
