"""Our tokenizer (tiktoken core over the HF vocabulary) against Hugging Face `tokenizers`.

    python test/python/check_tokenizer_parity.py IDS.jsonl --tokenizer-dir DIR

IDS.jsonl comes from scripts/dump-token-ids.ts. Texts are plain content (no special tokens),
encoded by the reference with add_special_tokens=False; every id must agree. A text that holds an
added token's string as text (a log that quotes `<|start_header_id|>`) is content too: lwm-data never
reads it as the control token, so its reference is the same tokenizer.json without its added tokens
(as check_template_parity.py does for contents).
"""

import argparse
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()
    spec = json.loads((args.tokenizer_dir / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_str(json.dumps(spec))
    plain = Tokenizer.from_str(json.dumps({**spec, "added_tokens": []}))
    added = [token["content"] for token in spec["added_tokens"]]
    texts = tokens = literal_texts = 0
    bad = []
    # Split on "\n" only: splitlines() also breaks at U+0085 and U+2028, which JSON leaves raw.
    for line in args.ids.read_text(encoding="utf-8").split("\n"):
        if line == "":
            continue
        record = json.loads(line)
        holds_literal = any(literal in record["text"] for literal in added)
        literal_texts += holds_literal
        reference = (plain if holds_literal else tokenizer).encode(record["text"], add_special_tokens=False).ids
        texts += 1
        tokens += len(reference)
        if reference != record["ids"]:
            bad.append(f"{record['file']}: {record['text'][:60]!r}")
    if texts == 0:
        print("no texts to compare", file=sys.stderr)
        return 1
    if bad:
        print(f"FAILED: {len(bad)} of {texts} texts tokenize differently:", file=sys.stderr)
        for item in bad[:20]:
            print(f"  - {item}", file=sys.stderr)
        return 1
    print(f"tokenizer parity: {texts} texts, {tokens} tokens identical to tokenizers ({literal_texts} holding added-token strings as text)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
