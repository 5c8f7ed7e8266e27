"""Trainer-side check of the text forms: the `messages` column and `lwm-data export swift`.

    python test/python/check_text_exports.py OUTPUT_DIR --tokenizer-dir DIR \
        --export DIR [--escaped-export DIR] [--require-literals]

With the reference renderer (jinja2 and the tokenizer_config.json chat template, the environment
transformers.apply_chat_template uses) and the reference tokenizer (HF `tokenizers`, added tokens
split out as a trainer's tokenizer does), for every shard row:

1. messages column: its contents are the rule's neutralized text (notebooks/lwm_text.py, an
   implementation independent of the TypeScript one, agrees: escape(unescape(c)) == c) and hold
   no literal. Un-escaped, rendered with the template and tokenized with the template's control
   tokens as ids and the contents as plain text, they give exactly the row's input_ids, and the
   loss spans (each loss message's content + its end-of-turn token) are exactly loss_mask. A row
   the rule left unchanged re-tokenizes to its input_ids the trainer's way (render + tokenizer).
   For a row whose original text holds a literal, the trainer's way gives other ids on the
   original text (shown, not assumed), and on the neutralized text the same control tokens as
   the shard (no injection) with every content rendered whole (the template cut nothing).
2. `export swift` (default `--literals refuse`): the refused rows (refused.jsonl) are exactly
   the rows whose original text holds a literal; every other row is exported, in order, with its
   original text, and the trainer's render + tokenizer gives exactly its input_ids, and the
   assistant messages' `loss` flags give exactly its loss_mask.
3. `--escaped-export` (`--literals escape`): every row; rows without literals as in 2, rows with
   literals with the messages column's neutralized text (checked as in 1).
"""

import argparse
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
import lwm_text  # noqa: E402

failures: list[str] = []

# ChatML, the default template's layout: every message opens with this token.
MESSAGE_START = "<|im_start|>"
# An SFT answer: its tags are structure (added-token ids in the shard), its two texts are content.
SFT_ANSWER = re.compile(r"<think>\n(.*)\n</think>\n\n<predicted_observation>\n(.*)\n</predicted_observation>", re.DOTALL)


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


class Reference:
    def __init__(self, tokenizer_dir: Path):
        spec = json.loads((tokenizer_dir / "tokenizer.json").read_text())
        self.full = Tokenizer.from_str(json.dumps(spec))
        self.added = {token["content"]: token["id"] for token in spec["added_tokens"]}
        self.added_by_id = {i: c for c, i in self.added.items()}
        spec["added_tokens"] = []
        self.plain = Tokenizer.from_str(json.dumps(spec))
        config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text())
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
        env.filters["tojson"] = lambda value, indent=None: json.dumps(value, indent=indent, ensure_ascii=False)
        self.template = env.from_string(config["chat_template"])
        self.end_of_turn = config["eos_token"]
        self.control = set(self.added.values())

    def render(self, messages: list[dict]) -> str:
        return self.template.render(messages=[{"role": m["role"], "content": m["content"]} for m in messages], add_generation_prompt=False)

    def trainer_ids(self, text: str) -> list[int]:
        """What a trainer's tokenizer makes of rendered text: added-token strings become their ids."""
        return self.full.encode(text, add_special_tokens=False).ids

    def byte_ends(self, ids: list[int]) -> list[int]:
        ends, position = [], 0
        for token_id in ids:
            position += len(self.added_by_id[token_id].encode()) if token_id in self.added_by_id else len(self.full.id_to_token(token_id))
            ends.append(position)
        return ends

    def content_spans(self, text: str, contents: list[str]) -> list[tuple[int, int, bool]] | None:
        """Character span of each message's content in rendered text (ChatML: the end of its
        message), and whether the template dropped its leading newlines (Qwen3 does for the last
        assistant turn); None when one is not there whole."""
        opens = [m.start() for m in re.finditer(re.escape(MESSAGE_START), text)]
        if len(opens) != len(contents):
            return None
        spans = []
        for start, content in zip(opens, contents):
            stop = text.index(self.end_of_turn, start)
            if text[start:stop].endswith(content):
                spans.append((stop - len(content), stop, False))
            elif text[start:stop].endswith(content.lstrip("\n")):
                spans.append((stop - len(content.lstrip("\n")), stop, True))
            else:
                return None
        return spans

    def with_originals(self, text_neutral: str, spans: list[tuple[int, int, bool]], originals: list[list[tuple[str, str]]]):
        """The neutralized render as (template | content, text) pieces, each content put back
        un-escaped (as its parts: an SFT answer's tags are template text), and each message's
        span in the text those pieces make."""
        pieces, message_spans, last, length = [], [], 0, 0
        for (begin, end, stripped), original in zip(spans, originals):
            pieces.append(("template", text_neutral[last:begin]))
            length += begin - last
            if stripped and original and original[0][0] == "content":
                original = [("content", original[0][1].lstrip("\n")), *original[1:]]
            pieces += original
            shown = sum(len(text) for _, text in original)
            message_spans.append((length, length + shown, stripped))
            length += shown
            last = end
        pieces.append(("template", text_neutral[last:]))
        return pieces, message_spans

    def faithful_ids(self, pieces: list[tuple[str, str]]) -> list[int]:
        """Pieces tokenized with only the template's added tokens as ids: content is plain text,
        and text between two control tokens is one piece (the shards' contract, README
        "Rendering, tokenization and the loss mask")."""
        ids: list[int] = []
        run = ""
        literal = re.compile("|".join(re.escape(t) for t in sorted(self.added, key=len, reverse=True)))
        for kind, piece in pieces:
            if kind == "content":
                run += piece
                continue
            at = 0
            for match in literal.finditer(piece):
                run += piece[at : match.start()]
                if run:
                    ids += self.plain.encode(run, add_special_tokens=False).ids
                run = ""
                ids.append(self.added[match.group(0)])
                at = match.end()
            run += piece[at:]
        if run:
            ids += self.plain.encode(run, add_special_tokens=False).ids
        return ids

    def loss_mask(self, text: str, ids: list[int], messages: list[dict], spans: list[tuple[int, int, bool]]) -> list[int]:
        """1 on the tokens of each loss message's content and its end-of-turn token, 0 elsewhere."""
        data = text.encode()
        ends = self.byte_ends(ids)
        check(ends[-1] == len(data), f"token bytes ({ends[-1]}) do not add up to the rendered text ({len(data)} bytes)")
        mask = [0] * len(ids)
        for message, (begin, stop, _) in zip(messages, spans):
            if not message.get("loss"):
                continue
            b_begin, b_stop = len(text[:begin].encode()), len(text[:stop].encode()) + len(self.end_of_turn.encode())
            for t, end in enumerate(ends):
                if end > b_begin and (ends[t - 1] if t else 0) < b_stop:
                    mask[t] = 1
        return mask


def first_difference(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def parts(where: str, content: str, answer: bool) -> list[tuple[str, str]]:
    """A message content as (template | content, text) parts: all content, except an SFT answer,
    whose tags are structure (added-token ids in the shard) around its thinking and prediction."""
    if not answer:
        return [("content", content)]
    parsed = SFT_ANSWER.fullmatch(content)
    if parsed is None:
        failures.append(f"{where}: the SFT answer is not in the answer format")
        return [("content", content)]
    think, prediction = parsed.groups()
    return [("template", "<think>\n"), ("content", think), ("template", "\n</think>\n\n<predicted_observation>\n"), ("content", prediction), ("template", "\n</predicted_observation>")]


def rows_in_export_order(out: Path, manifest: dict):
    """(split, shard path, row index, row, rule) in the order `export swift` writes them."""
    splits: dict[str, list[dict]] = {}
    for shard in manifest["shards"]:
        splits.setdefault(shard.get("split", "train"), []).append(shard)
    for split in sorted(splits):
        for shard in splits[split]:
            path = out / shard["path"]
            rule = lwm_text.TextRule.from_shard(path)
            for index, row in enumerate(pq.read_table(path).to_pylist()):
                yield split, shard["path"], index, row, rule


def check_row(ref: Reference, where: str, row: dict, rule: lwm_text.TextRule, sft: bool) -> dict:
    """Part 1 for one row; returns what parts 2 and 3 need."""
    messages = row["messages"]
    originals = [rule.unescape(m["content"]) for m in messages]
    literals: set[str] = set()
    original_parts = []
    for k, (m, original) in enumerate(zip(messages, originals)):
        answer = sft and k == len(messages) - 1
        mine = parts(f"{where} message {k}", original, answer)
        original_parts.append(mine)
        escaped = "".join(rule.escape(text) if kind == "content" else text for kind, text in mine)
        check(escaped == m["content"], f"{where} message {k}: escape(unescape(content)) != content (the TypeScript and Python rules disagree)")
        column = [text for kind, text in parts(where, m["content"], answer) if kind == "content"]
        check(not any(lit in text for text in column for lit in rule.escaped), f"{where} message {k}: the messages column holds a literal")
        # Plain substring search over the original contents.
        literals |= {lit for lit in rule.escaped + rule.unescapable for kind, text in mine if kind == "content" and lit in text}
    changed = any(o != m["content"] for o, m in zip(originals, messages))

    text_neutral = ref.render(messages)
    spans = ref.content_spans(text_neutral, [m["content"] for m in messages])
    if spans is None:
        failures.append(f"{where}: a message's content is not whole at the end of its rendered message (the template changed it)")
        return {"literals": sorted(literals), "changed": changed, "originals": originals}
    ids = row["input_ids"]
    pieces, original_spans = ref.with_originals(text_neutral, spans, original_parts)
    faithful = ref.faithful_ids(pieces)
    if faithful != ids:
        failures.append(f"{where}: un-escaped messages, rendered and tokenized with contents as text, differ from input_ids at {first_difference(faithful, ids)}")
    else:
        # The messages' spans in the original text give the row's loss_mask.
        text_original = "".join(piece for _, piece in pieces)
        check(ref.loss_mask(text_original, ids, messages, original_spans) == row["loss_mask"], f"{where}: loss_mask is not exactly the loss messages' contents + end-of-turn tokens")
    if not changed:
        trainer = ref.trainer_ids(text_neutral)
        check(trainer == ids, f"{where}: the trainer's render + tokenizer differ from input_ids at {first_difference(trainer, ids)}")
    if literals:
        naive = ref.trainer_ids(ref.render([{**m, "content": o} for m, o in zip(messages, originals)]))
        check(naive != ids, f"{where}: holds {literals} yet its original text re-tokenizes to input_ids: the check would prove nothing")
        neutral = ref.trainer_ids(text_neutral)
        control = [i for i in neutral if i in ref.control]
        check(control == [i for i in ids if i in ref.control], f"{where}: the neutralized text re-tokenizes to other control tokens than the shard's (an injection)")
    return {"literals": sorted(literals), "changed": changed, "originals": originals}


def check_exported_line(ref: Reference, where: str, line: dict, row: dict, contents: list[str]) -> None:
    exported = line["messages"]
    check([m["role"] for m in exported] == [m["role"] for m in row["messages"]], f"{where}: roles differ from the shard's messages")
    check([m["content"] for m in exported] == contents, f"{where}: contents differ from the expected text")
    for k, (m, shard_m) in enumerate(zip(exported, row["messages"])):
        if m["role"] == "assistant":
            check(m.get("loss") == shard_m["loss"], f"{where} message {k}: loss flag {m.get('loss')} != shard's {shard_m['loss']}")
        else:
            check("loss" not in m, f"{where} message {k}: a {m['role']} message carries a loss flag")
    text = ref.render(exported)
    ids = ref.trainer_ids(text)
    if ids != row["input_ids"]:
        failures.append(f"{where}: the trainer's render + tokenizer differ from the shard's input_ids at {first_difference(ids, row['input_ids'])}")
        return
    spans = ref.content_spans(text, [m["content"] for m in exported])
    if spans is None:
        failures.append(f"{where}: a content is not whole in the rendered text")
        return
    flagged = [{"loss": m.get("loss", False)} for m in exported]
    check(ref.loss_mask(text, ids, flagged, spans) == row["loss_mask"], f"{where}: the loss flags do not give exactly the shard's loss_mask")


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def swift_split(row: dict, originals: list[str]) -> bool:
    """Whether `export swift` refuses the row for ms-swift's whitespace split (docs/exports.md "Training with ms-swift"):
    a trained assistant message after the last user message whose original content begins with whitespace
    (Python's \\s, as ms-swift's ignore_empty_think regex reads it). Qwen3 only, as this check is."""
    roles = [m["role"] for m in row["messages"]]
    last_user = max((i for i, role in enumerate(roles) if role == "user"), default=-1)
    return any(
        i > last_user and m["role"] == "assistant" and m["loss"] and original[:1].isspace()
        for i, (m, original) in enumerate(zip(row["messages"], originals))
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--export", type=Path, required=True, help="lwm-data export swift output (--literals refuse)")
    parser.add_argument("--escaped-export", type=Path, help="lwm-data export swift --literals escape output")
    parser.add_argument("--require-literals", action="store_true", help="fail unless some rows hold special-token literals")
    args = parser.parse_args()
    manifest = json.loads((args.output / "manifest.json").read_text())
    sft = manifest.get("format") == "lwm-data/sft"
    ref = Reference(args.tokenizer_dir)

    refused = {(r["shard"], r["row"]): r for r in read_lines(args.export / "refused.jsonl")}
    exported: dict[str, list[dict]] = {}
    escaped: dict[str, list[dict]] = {}
    position: dict[str, int] = {}
    rows = with_literals = changed_rows = split_rows = 0
    for split, shard, index, row, rule in rows_in_export_order(args.output, manifest):
        rows += 1
        where = f"{shard} row {index} id={row['id']}"
        result = check_row(ref, where, row, rule, sft)
        with_literals += bool(result["literals"])
        changed_rows += result["changed"]
        # 2. The default export: refused iff the original text holds a literal.
        if split not in exported:
            exported[split] = read_lines(args.export / f"{split}.jsonl")
            position[split] = 0
        entry = refused.pop((shard, index), None)
        if result["literals"]:
            check(entry is not None, f"{where}: holds {result['literals']} but export swift did not refuse it")
            if entry:
                check(entry["id"] == row["id"] and entry["split"] == split and entry["reason"], f"{where}: refused.jsonl entry {entry} is incomplete")
        elif swift_split(row, result["originals"]):
            split_rows += 1
            check(
                entry is not None and "begins with whitespace" in entry["reason"],
                f"{where}: a trained final turn begins with whitespace (ms-swift splits it off) but export swift did not refuse it: {entry}",
            )
        else:
            check(entry is None, f"{where}: refused ({entry and entry['reason']}) though it holds no literal")
            lines = exported[split]
            if position[split] >= len(lines):
                failures.append(f"{where}: missing from {split}.jsonl")
            else:
                check_exported_line(ref, f"export {split}.jsonl line {position[split] + 1} ({where})", lines[position[split]], row, result["originals"])
            position[split] += 1
        # 3. The escaped export: every row, the messages column's text.
        if args.escaped_export and not (not result["literals"] and swift_split(row, result["originals"])):
            if split not in escaped:
                escaped[split] = read_lines(args.escaped_export / f"{split}.jsonl")
                position[f"escaped {split}"] = 0
            line = escaped[split][position[f"escaped {split}"]] if position[f"escaped {split}"] < len(escaped[split]) else None
            position[f"escaped {split}"] += 1
            column = [m["content"] for m in row["messages"]]
            if line is None:
                failures.append(f"{where}: missing from the escaped export")
            elif not result["literals"]:
                check_exported_line(ref, f"escaped export {split}.jsonl ({where})", line, row, result["originals"])
            else:
                check([m["content"] for m in line["messages"]] == column, f"escaped export ({where}): contents differ from the messages column")
    for split, lines in exported.items():
        check(position[split] == len(lines), f"export {split}.jsonl has {len(lines)} lines, {position[split]} rows were to be exported")
    for split, lines in escaped.items():
        check(position[f"escaped {split}"] == len(lines), f"escaped export {split}.jsonl has {len(lines)} lines for {position[f'escaped {split}']} rows")
    check(not refused, f"refused.jsonl names rows that are not in the shards: {list(refused)[:3]}")
    if args.require_literals:
        check(with_literals > 0, "no row holds a special-token literal: the literal cases were not exercised")
        check(changed_rows > with_literals, "no row holds an escaped-looking text without a literal: stuffing was not exercised")
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(
        f"text forms: {rows} rows of {args.output.name}: messages column un-escaped + rendered + tokenized = input_ids and loss_mask exactly; "
        f"export swift: {rows - with_literals} exported re-tokenize to the shards' ids and masks, {with_literals} with special-token literals refused, {split_rows} refused for ms-swift's whitespace split"
        + (", escaped export matches the messages column" if args.escaped_export else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
