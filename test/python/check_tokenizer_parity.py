"""Our tokenizer (tiktoken core over the HF vocabulary) against Hugging Face `tokenizers`.

    python test/python/check_tokenizer_parity.py IDS.jsonl --tokenizer-dir DIR

IDS.jsonl comes from scripts/dump-token-ids.ts. Texts are plain content (no special tokens),
encoded by the reference with add_special_tokens=False; every id must agree.
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
    tokenizer = Tokenizer.from_file(str(args.tokenizer_dir / "tokenizer.json"))
    texts = tokens = 0
    bad = []
    # Split on "\n" only: splitlines() also breaks at U+0085 and U+2028, which JSON leaves raw.
    for line in args.ids.read_text(encoding="utf-8").split("\n"):
        if line == "":
            continue
        record = json.loads(line)
        reference = tokenizer.encode(record["text"], add_special_tokens=False).ids
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
    print(f"tokenizer parity: {texts} texts, {tokens} tokens identical to tokenizers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
