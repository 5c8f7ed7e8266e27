"""The text form's rule for special-token literals, in Python (docs/output.md "Text form").

lwm-data's `messages` column (and `lwm-data export swift --literals escape`) neutralizes every
special-token literal inside message contents -- a tool that printed `<|im_start|>`, a file that
holds `</think>` -- so that a trainer that renders and tokenizes the text again never turns it
into a control token. Rule `lwm-zwj/1`: each occurrence of a literal, written as its first
character, k >= 0 ZERO WIDTH JOINERs (U+200D), then the rest of the literal, gets one more U+200D
after its first character. `unescape` removes one again and gives back the original text exactly
(the text the shard's `input_ids` encode). The literals are listed in each shard's `lwm_data`
metadata (`text_literals`).

    import lwm_text
    rule = lwm_text.TextRule.from_shard("out/demo/data/train-00000-00000-0000.parquet")
    original = rule.unescape(row["messages"][2]["content"])

Only the standard library (and pyarrow for `from_shard`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

RULE_ID = "lwm-zwj/1"
ZWJ = "\u200d"


class TextRule:
    """The rule for one literal set (the shard's `text_literals`)."""

    def __init__(self, escaped: list[str], unescapable: list[str] | None = None):
        self.escaped = list(escaped)
        self.unescapable = list(unescapable or [])
        alternatives = sorted(self.escaped, key=len, reverse=True)
        self._any = re.compile("|".join(re.escape(lit[0]) + ZWJ + "*" + re.escape(lit[1:]) for lit in alternatives)) if alternatives else None
        self._escaped = re.compile("|".join(re.escape(lit[0]) + ZWJ + "+" + re.escape(lit[1:]) for lit in alternatives)) if alternatives else None

    @classmethod
    def from_metadata(cls, metadata: dict) -> "TextRule":
        """From a shard's parsed `lwm_data` metadata."""
        if metadata.get("text_rule") != RULE_ID:
            raise ValueError(f"text rule {metadata.get('text_rule')!r} is not {RULE_ID!r}")
        literals = json.loads(metadata["text_literals"])
        return cls(literals["escaped"], literals["unescapable"])

    @classmethod
    def from_shard(cls, path: str | Path) -> "TextRule":
        """From a shard's Parquet key-value metadata."""
        import pyarrow.parquet as pq

        return cls.from_metadata(json.loads(pq.ParquetFile(path).metadata.metadata[b"lwm_data"]))

    def escape(self, text: str) -> str:
        """The neutralized text: one more U+200D after the first character of every (escaped) literal."""
        if self._any is None:
            return text
        return self._any.sub(lambda m: m.group(0)[0] + ZWJ + m.group(0)[1:], text)

    def unescape(self, text: str) -> str:
        """The original text: one U+200D less in every escaped literal."""
        if self._escaped is None:
            return text
        return self._escaped.sub(lambda m: m.group(0)[0] + m.group(0)[2:], text)

    def has_escapes(self, text: str) -> bool:
        """Whether the rule changed this (escaped) text."""
        return self._escaped is not None and self._escaped.search(text) is not None
