"""A tokenizer family's round trip with the trainer's own tools: `transformers` renders each
sample's messages with the family's chat template, `tokenizers` (Rust) tokenizes the text, and
both must give exactly what lwm-data wrote.

    python test/python/check_template_parity.py OUTPUT_DIR --tokenizer-dir DIR [--template FILE]

OUTPUT_DIR is an lwm-data run with `output.include_messages: true` and `tokenizer.name:
DIR/tokenizer.json` (and `render.template: FILE` when given). For every sample:

1. Rendering: `AutoTokenizer.from_pretrained(DIR).apply_chat_template(messages)` (with FILE's
   template when given: the family ships none, or we test another one) equals the text of the
   shard's `input_ids`, byte for byte: special tokens, date lines, stripped contents and all.
2. Ids: the reference ids of that text equal `input_ids`. Where no content holds an added-token
   string, the reference is `tokenizers`' `encode(text, add_special_tokens=False)`, what a trainer
   runs. Where one does, lwm-data keeps it as text (never a control token), so the reference
   splits out only the added tokens outside contents and encodes the rest with the same
   tokenizer.json minus its added tokens.
3. Loss: `loss_mask` is 1 exactly over the tokens overlapping a trained message's content and
   the added token that directly ends it (`<|eot_id|>`, `<|im_end|>`, …), 0 elsewhere.

Contents in the `messages` column may be neutralized by the text rule in the shard's
`lwm_data` metadata (`lwm-zwj/1`, src/export/special-literals.ts); it is undone first.
"""

import argparse
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
from tokenizers import Tokenizer
from transformers import AutoTokenizer

ZWJ = "\u200d"


def fix_template_date() -> None:
    """lwm-data renders templates at a fixed date (TEMPLATE_DATE in src/render/chat-template.ts), so
    reruns are byte-identical; transformers' `strftime_now` reads the clock (`datetime.now()` in
    chat_template_utils), so the reference gets the same fixed day."""
    import datetime

    from transformers.utils import chat_template_utils

    class FixedDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ARG003
            return cls(2024, 7, 26)

    chat_template_utils.datetime = FixedDatetime


def byte_level_table() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte, as byte-level vocabularies spell tokens."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            table[chr(byte)] = byte
        else:
            table[chr(256 + extra)] = byte
            extra += 1
    return table


def unescaper(metadata: dict):
    """Undoes the text rule a shard records (lwm-zwj/1): one ZWJ less after each literal's first character."""
    rule = metadata.get("text_rule")
    if rule is None:
        return lambda text: text
    if rule != "lwm-zwj/1":
        raise SystemExit(f"unknown text rule {rule!r}")
    escaped = json.loads(metadata["text_literals"])["escaped"]
    patterns = [re.compile(re.escape(lit[0]) + f"({ZWJ}+)" + re.escape(lit[1:])) for lit in escaped if len(lit) >= 2]

    def undo(text: str) -> str:
        for pattern in patterns:
            text = pattern.sub(lambda m: m.group(0)[0] + m.group(1)[1:] + m.group(0)[1 + len(m.group(1)) :], text)
        return text

    return undo


EMPTY = "\u2063lwm-empty-content\u2063"


def content_spans(text: str, contents: list[str], render) -> list[tuple[int, int]] | None:
    """Where each content lies in the rendered text, in order (as the template may have stripped
    it). An empty content is found by rendering again with a marker in its place."""
    empty_at: dict[int, int] = {}
    if any(c == "" for c in contents):
        marked = render([EMPTY if c == "" else c for c in contents])
        shift = 0
        for index in (i for i, c in enumerate(contents) if c == ""):
            at = marked.find(EMPTY)
            if at < 0:
                return None
            empty_at[index] = at
            marked = marked[:at] + marked[at + len(EMPTY) :]
    spans, cursor = [], 0
    for index, content in enumerate(contents):
        if index in empty_at:
            spans.append((empty_at[index], empty_at[index]))
            cursor = empty_at[index]
            continue
        for candidate in (content, content.strip(), content.lstrip("\n"), content.rstrip("\n"), content.lstrip(), content.rstrip()):
            at = text.find(candidate, cursor)
            if at >= 0:
                spans.append((at, at + len(candidate)))
                cursor = at + len(candidate)
                break
        else:
            return None
    return spans


def main() -> int:
    fix_template_date()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--template", type=Path)
    args = parser.parse_args()

    spec = json.loads((args.tokenizer_dir / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_str(json.dumps(spec))
    plain = Tokenizer.from_str(json.dumps({**spec, "added_tokens": []}))
    hf = AutoTokenizer.from_pretrained(str(args.tokenizer_dir))
    template = args.template.read_text(encoding="utf-8") if args.template else None
    added = {token["content"]: token["id"] for token in spec["added_tokens"]}
    added_by_id = {i: content for content, i in added.items()}
    added_pattern = re.compile("|".join(re.escape(a) for a in sorted(added, key=len, reverse=True)))
    to_byte = byte_level_table()
    normalizer = tokenizer.normalizer
    normalize = normalizer.normalize_str if normalizer is not None else (lambda text: text)

    def token_bytes(token_id: int) -> bytes:
        if token_id in added_by_id:
            return added_by_id[token_id].encode()
        return bytes(to_byte[c] for c in tokenizer.id_to_token(token_id))

    manifest = json.loads((args.output / "manifest.json").read_text())
    failures: list[str] = []
    samples = direct = literal_samples = tokens = 0
    for shard in manifest["shards"]:
        path = args.output / shard["path"]
        metadata = json.loads(pq.ParquetFile(path).metadata.metadata[b"lwm_data"])
        undo = unescaper(metadata)
        for row in pq.read_table(path, columns=["id", "input_ids", "loss_mask", "messages"]).to_pylist():
            samples += 1
            where = f"{path.name} id={row['id']}"
            ids, mask = row["input_ids"], row["loss_mask"]
            # The trainer renders the column's text; un-escaping the rendering gives the shards' text.
            stored = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]

            def render(contents: list[str]) -> str:
                chat = [{"role": m["role"], "content": c} for m, c in zip(stored, contents)]
                return undo(hf.apply_chat_template(chat, tokenize=False, add_generation_prompt=False, chat_template=template))

            reference_text = render([m["content"] for m in stored])
            messages = [{"role": m["role"], "content": undo(m["content"])} for m in stored]
            # lwm-data writes what the tokenizer encodes: the normalized text (NFC for Qwen).
            normalized_text = normalize(reference_text)
            parts = [token_bytes(i) for i in ids]
            ours = b"".join(parts)
            if ours != normalized_text.encode():
                a, b = ours, normalized_text.encode()
                at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                failures.append(f"{where}: rendered text differs from apply_chat_template at byte {at}: ours {a[max(0, at - 40) : at + 40]!r} vs {b[max(0, at - 40) : at + 40]!r}")
                continue
            spans = content_spans(reference_text, [m["content"] for m in messages], lambda contents: render(contents))
            if spans is None:
                failures.append(f"{where}: a message's content is not in the rendered text; cannot check")
                continue
            # Added-token strings outside contents split the text; inside contents they are text.
            inside = lambda start, end: any(s < end and start < e for s, e in spans)  # noqa: E731
            specials = [m for m in added_pattern.finditer(reference_text) if not inside(m.start(), m.end())]
            reference, last = [], 0
            for match in specials:
                if match.start() > last:
                    reference += plain.encode(reference_text[last : match.start()], add_special_tokens=False).ids
                reference.append(added[match.group(0)])
                last = match.end()
            if last < len(reference_text):
                reference += plain.encode(reference_text[last:], add_special_tokens=False).ids
            if reference != ids:
                at = next((k for k, (x, y) in enumerate(zip(reference, ids)) if x != y), min(len(reference), len(ids)))
                failures.append(f"{where}: ids differ from tokenizers at token {at} (ours {len(ids)}, reference {len(reference)})")
                continue
            if any(a in m["content"] for m in messages for a in added):
                literal_samples += 1
            else:
                direct += 1
                if tokenizer.encode(reference_text, add_special_tokens=False).ids != ids:
                    failures.append(f"{where}: tokenizers.encode(apply_chat_template(...)) differs from input_ids")
                    continue
            tokens += len(ids)
            # Loss: tokens overlapping a trained content, and the added token right after it (byte
            # offsets in the normalized text: each piece normalized on its own, as lwm-data does).
            def normalized_bytes(end: int) -> int:
                return len(normalize(reference_text[:end]).encode())

            trained = [(normalized_bytes(s), normalized_bytes(e)) for (s, e), m in zip(spans, row["messages"]) if m["loss"]]
            expected, position = [], 0
            for token_id, part in zip(ids, parts):
                start, end = position, position + len(part)
                position = end
                bit = any(s < end and start < e for s, e in trained) or (token_id in added_by_id and any(e == start for _, e in trained))
                expected.append(int(bit))
            if expected != mask:
                wrong = [k for k, (x, y) in enumerate(zip(expected, mask)) if x != y]
                failures.append(f"{where}: loss_mask differs from the trained contents' spans at {len(wrong)} tokens, first {wrong[:5]}")
    if samples == 0:
        print(f"{args.output}: no samples", file=sys.stderr)
        return 1
    if failures:
        print(f"FAILED ({args.tokenizer_dir}): {len(failures)} of {samples} samples:", file=sys.stderr)
        for failure in failures[:20]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    name = args.template.name if args.template else "its tokenizer_config.json"
    print(
        f"template parity {args.tokenizer_dir} with {name}: {samples} samples, {tokens} tokens: apply_chat_template text, "
        f"tokenizers ids ({direct} by encode() itself, {literal_samples} with added-token strings kept as text) and loss spans agree"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
