"""Rule-based rewards for world-model RL, equal to lwm-data's SFT verifiers.

A world model answers `<think>…</think>` then `<predicted_observation>…</predicted_observation>`
for the next observation of an agent trajectory. lwm-data's SFT stage keeps a teacher's answer only
when its rules pass (src/sft/verify/): the `format` rule (one closed prediction, non-empty thinking
before it, length bounds, no stray tags or chat control strings) and the per-domain `fidelity`
rule against the real observation (terminal/SWE: line diff; MCP: JSON leaves; search: structure +
result URLs/titles; web/Android/OS: accessibility-tree nodes). This module is those rules in
Python, so a reward in RL is exactly the decision the verifier makes in SFT (tested on the same
candidates: test/python/check_rl_reward.py). Standard library only; one self-contained file, as
verl and OpenRLHF load a reward file by path.

- verl: `reward.custom_reward_function.path=python/lwm_reward/reward.py reward.custom_reward_function.name=compute_score`
  (before verl 0.9 without `reward.`) with the Parquet files of `lwm-data export rl --format verl`.
- OpenRLHF (0.10.2 and later): `--reward.remote_url python/lwm_reward/reward.py --data.label_key label` with the JSONL files of
  `lwm-data export rl --format openrlhf` (`reward_func` below).

The `leakage` rule (a teacher shown the observation as a hint must not quote it) has no RL
counterpart: the policy's prompt never holds the observation. The `truncated` rule needs a finish
reason the trainers do not pass; a response cut at the length limit fails the format rule anyway.

JavaScript semantics are kept where they decide a score: string lengths and the 64-character
bound of control strings count UTF-16 code units, whitespace is ECMAScript's `\\s`, JSON numbers
are doubles (so 1 and 1.0 are the same value) and NaN/Infinity literals are not JSON.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "DEFAULT_FIDELITY",
    "DEFAULT_LENGTHS",
    "FIDELITY_RULES",
    "compute_score",
    "reward_func",
    "verify",
    "fidelity",
    "line_similarity",
    "json_structure",
    "search_fidelity",
    "tree_similarity",
    "parse_candidate",
    "token_strings",
]

# ── Defaults (configs/defaults.yaml sft.verify; src/sft/verify/index.ts) ─────────────────────────

DEFAULT_FIDELITY: Dict[str, float] = {
    "terminal": 0.9,
    "swe": 0.9,
    "mcp": 0.95,
    "search": 0.8,
    "android": 0.9,
    "web": 0.9,
    "os": 0.9,
}
DEFAULT_LENGTHS: Dict[str, int] = {
    "think_min_chars": 20,
    "think_max_chars": 32_768,
    "prediction_min_chars": 0,
    "prediction_max_chars": 131_072,
}
# The fidelity measure per domain, by the name `export rl` writes into extra_info.fidelity_rule.
FIDELITY_RULES: Dict[str, str] = {
    "terminal": "line_similarity",
    "swe": "line_similarity",
    "mcp": "json_structure",
    "search": "search_overlap",
    "android": "tree_similarity",
    "web": "tree_similarity",
    "os": "tree_similarity",
}

# ── JavaScript string semantics ──────────────────────────────────────────────────────────────────

# ECMAScript WhiteSpace + LineTerminator: what `\s`, `trim()` and `trimEnd()` mean in JavaScript.
_JS_WS = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS_RUN = re.compile(f"[{_JS_WS}]+")
_WS_CHARS = "\t\n\x0b\x0c\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _trim(text: str) -> str:
    return text.strip(_WS_CHARS)


def _trim_end(text: str) -> str:
    return text.rstrip(_WS_CHARS)


def _trim_start(text: str) -> str:
    return text.lstrip(_WS_CHARS)


def _collapse(text: str) -> str:
    """`text.trim().replace(/\\s+/g, " ")`."""
    return _WS_RUN.sub(" ", _trim(text))


def _to_utf16_units(text: str) -> str:
    """The text as JavaScript sees it: one character per UTF-16 code unit (astral characters as surrogate pairs)."""
    if not _ASTRAL.search(text):
        return text

    def pair(match: "re.Match[str]") -> str:
        code = ord(match.group(0)) - 0x10000
        return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))

    return _ASTRAL.sub(pair, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _from_utf16_units(text: str) -> str:
    """Surrogate pairs joined back into characters (lone surrogates stay as they are)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# ── The format rule (src/sft/verify/candidate-format.ts) ─────────────────────────────────────────

# Our four tags (any ASCII case: `<Think>` is a misspelling, not prose) and chat control strings:
# ChatML/Llama `<|im_end|>`, `<|eot_id|>`, DeepSeek's full-width `<｜end▁of▁sentence｜>`. Matched on
# UTF-16 code units with ASCII-only case folding, as JavaScript's /gi does without the u flag.
_TOKEN = re.compile(
    r"</?(?:think|predicted_observation)>|<\|[^|<>\n]{0,64}\|>|<｜[^｜<>\n]{0,64}｜>",
    re.IGNORECASE | re.ASCII,
)
_EXACT = {
    "<think>": "think-open",
    "</think>": "think-close",
    "<predicted_observation>": "prediction-open",
    "</predicted_observation>": "prediction-close",
}
_ORDER = ["think-open", "think-close", "prediction-open", "prediction-close"]


class _Token:
    __slots__ = ("kind", "text", "index", "end")

    def __init__(self, kind: str, text: str, index: int, end: int) -> None:
        self.kind, self.text, self.index, self.end = kind, text, index, end


def _tokenize(text: str) -> List[_Token]:
    tokens = []
    for m in _TOKEN.finditer(text):
        s = m.group(0)
        kind = _EXACT.get(s) or ("control" if s.startswith("<|") or s.startswith("<｜") else "miscased")
        tokens.append(_Token(kind, s, m.start(), m.end()))
    return tokens


def token_strings(text: str) -> List[str]:
    """The distinct tags and control strings a text holds (what `export rl` lists as extra_info.quotable_tags)."""
    seen: Dict[str, None] = {}
    for m in _TOKEN.finditer(_to_utf16_units(text)):
        seen.setdefault(_from_utf16_units(m.group(0)), None)
    return list(seen)


def _frame(text: str, tokens: List[_Token]) -> Optional[Tuple[int, int, int, int]]:
    first = next((i for i, t in enumerate(tokens) if t.kind == "think-open"), -1)
    last = next((i for i in range(len(tokens) - 1, -1, -1) if tokens[i].kind == "prediction-close"), -1)
    if first < 0:
        return None
    i = first + 1
    while i + 1 < last:
        close, open_ = tokens[i], tokens[i + 1]
        if close.kind == "think-close" and open_.kind == "prediction-open" and _trim(text[close.end : open_.index]) == "":
            return (first, i, i + 1, last)
        i += 1
    return None


def _structural_tokens(text: str, tokens: List[_Token], quoted) -> List[_Token]:
    found = _frame(text, tokens)
    if found is None:
        return tokens
    first, think_close, prediction_open, last = found
    kept = []
    for i, token in enumerate(tokens):
        inside = first < i < think_close or prediction_open < i < last
        if not (inside and quoted(token.text)):
            kept.append(token)
    return kept


def _excerpt(text: str, limit: int = 40) -> str:
    flat = _collapse(text)
    return json.dumps(_from_utf16_units(flat[:limit] + "…" if len(flat) > limit else flat), ensure_ascii=False)


def _block(text: str, tokens: List[_Token], open_: str, close: str) -> Optional[str]:
    start = next((t for t in tokens if t.kind == open_), None)
    if start is None:
        return None
    end = next((t for t in tokens if t.kind == close and t.index >= start.end), None)
    return text[start.end : end.index] if end is not None else None


def _count_problems(tokens: List[_Token]) -> List[str]:
    problems: List[str] = []

    def n(kind: str) -> int:
        return sum(1 for t in tokens if t.kind == kind)

    def expect_pair(open_: str, close: str, tag: str) -> None:
        opens, closes = n(open_), n(close)
        if opens == 0 and closes == 0:
            problems.append(f"no <{tag}> block")
        elif opens == 0:
            problems.append(f"</{tag}> without <{tag}>")
        elif closes == 0:
            problems.append(f"<{tag}> is never closed")
        if opens > 1:
            problems.append(f"{opens} <{tag}> tags (expected exactly one)")
        if closes > 1:
            problems.append(f"{closes} </{tag}> tags (expected exactly one)")

    expect_pair("think-open", "think-close", "think")
    expect_pair("prediction-open", "prediction-close", "predicted_observation")
    for t in tokens:
        if t.kind == "control":
            problems.append(f"control string {_from_utf16_units(t.text)} at char {t.index}")
        if t.kind == "miscased":
            problems.append(f"unknown tag {t.text} at char {t.index}")
    return problems


def _layout_problems(text: str, tokens: List[_Token]) -> List[str]:
    tags = [t for t in tokens if t.kind in _ORDER]
    if any(t.kind != _ORDER[i] for i, t in enumerate(tags)):
        seen = " … ".join(t.text for t in tags)
        return [f"tags out of order: {seen} (expected <think>…</think> then <predicted_observation>…</predicted_observation>)"]
    think_open, think_close, prediction_open, prediction_close = tags
    outside = [text[: think_open.index], text[think_close.end : prediction_open.index], text[prediction_close.end :]]
    outside = [_TOKEN.sub("", s) for s in outside]
    return [f"text outside the tags: {_excerpt(s)}" for s in outside if _trim(s) != ""]


_LEADING_NEWLINE = re.compile(r"\A\r?\n")
_TRAILING_NEWLINE = re.compile(r"\r?\n\Z")


def parse_candidate(text: str, quotable: Sequence[str] = (), quotable_tags: Sequence[str] = ()) -> Dict[str, Any]:
    """The answer's thinking and prediction and its shape problems (`parseCandidate`).

    `quotable`: texts whose tags and control strings the blocks may quote (the ground truth, the
    prompt's contents); `quotable_tags`: such strings known beforehand (extra_info.quotable_tags).
    Returns `think` and `prediction` (absent when there is no closed block) and `problems`.
    """
    units = _to_utf16_units(text)
    sources = [_to_utf16_units(q) for q in quotable]
    tags = {_to_utf16_units(t) for t in quotable_tags}
    held: Dict[str, bool] = {}

    def quoted(token: str) -> bool:
        if token not in held:
            held[token] = token in tags or any(token in source for source in sources)
        return held[token]

    tokens = _tokenize(units)
    if sources or tags:
        tokens = _structural_tokens(units, tokens, quoted)
    problems = _count_problems(tokens)
    if all(sum(1 for t in tokens if t.kind == kind) == 1 for kind in _ORDER):
        problems.extend(_layout_problems(units, tokens))
    think = _block(units, tokens, "think-open", "think-close")
    if think is not None:
        think = _trim(think)
        if think == "":
            problems.append("<think> is empty")
    prediction = _block(units, tokens, "prediction-open", "prediction-close")
    if prediction is not None:
        prediction = _TRAILING_NEWLINE.sub("", _LEADING_NEWLINE.sub("", prediction, count=1), count=1)
    parsed: Dict[str, Any] = {"problems": problems}
    # Lengths are UTF-16 code units (JavaScript's String.length), as the bounds are.
    if think is not None:
        parsed["think"] = _from_utf16_units(think)
        parsed["think_units"] = len(think)
    if prediction is not None:
        parsed["prediction"] = _from_utf16_units(prediction)
        parsed["prediction_units"] = len(prediction)
    return parsed


def _length_problem(what: str, length: int, low: int, high: int) -> List[str]:
    if length < low:
        return [f"{what} is {length} chars, under the {low}-char minimum"]
    if length > high:
        return [f"{what} is {length} chars, over the {high}-char maximum"]
    return []


def format_rule(parsed: Dict[str, Any], lengths: Dict[str, int]) -> Tuple[float, str]:
    """`formatRule`: 1 when well-formed and within the length bounds, else 0; and the reason."""
    problems = list(parsed["problems"])
    if parsed.get("think"):
        problems += _length_problem("<think>", parsed["think_units"], lengths["think_min_chars"], lengths["think_max_chars"])
    if "prediction" in parsed:
        problems += _length_problem(
            "<predicted_observation>", parsed["prediction_units"], lengths["prediction_min_chars"], lengths["prediction_max_chars"]
        )
    if not problems:
        return 1.0, f"one <think> ({parsed.get('think_units')} chars) then one <predicted_observation> ({parsed.get('prediction_units')} chars)"
    return 0.0, "; ".join(problems)


# ── Line similarity: terminal, SWE (src/sft/verify/line-similarity.ts) ───────────────────────────

MAX_EDIT_LENGTH = 4000
_LINE_BREAK = re.compile(r"\r?\n")


def output_lines(text: str) -> List[str]:
    lines = [_trim_end(line) for line in _LINE_BREAK.split(text)]
    start, end = 0, len(lines)
    while start < end and lines[start] == "":
        start += 1
    while end > start and lines[end - 1] == "":
        end -= 1
    return lines[start:end]


def _multiset_overlap(a: List[str], b: List[str]) -> int:
    counts: Dict[str, int] = {}
    for line in a:
        counts[line] = counts.get(line, 0) + 1
    shared = 0
    for line in b:
        left = counts.get(line, 0)
        if left > 0:
            shared += 1
            counts[line] = left - 1
    return shared


def _edit_distance(a: List[int], b: List[int], limit: int) -> Optional[int]:
    """Myers' shortest edit script length (insertions + deletions), or None when it exceeds `limit`."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        d = n + m
        return d if d <= limit else None
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    for d in range(0, min(limit, n + m) + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[offset + k] = x
            if x >= n and y >= m:
                return d
    return None


def _lcs_length(a: List[int], b: List[int]) -> int:
    """Longest common subsequence by Hunt–Szymanski: O(r log n) for r matching line pairs."""
    positions: Dict[int, List[int]] = {}
    for i, line in enumerate(a):
        positions.setdefault(line, []).append(i)
    tails: List[int] = []  # tails[k]: the smallest end in `a` of a common subsequence of length k + 1
    for line in b:
        for i in reversed(positions.get(line, ())):
            k = bisect_left(tails, i)
            if k == len(tails):
                tails.append(i)
            else:
                tails[k] = i
    return len(tails)


def matched_lines(a: List[str], b: List[str]) -> Tuple[int, bool]:
    """Lines of `b` matched in order by lines of `a` (the longest common subsequence), and whether exact.

    `exact` is false when the texts are over MAX_EDIT_LENGTH line edits apart (where the
    TypeScript rule stops diffing): `matched` is then the same upper bound it uses.
    """
    overlap = _multiset_overlap(a, b)
    total = len(a) + len(b)
    if total - 2 * overlap > MAX_EDIT_LENGTH:
        return min(overlap, (total - MAX_EDIT_LENGTH - 1) // 2), False
    # A common prefix and suffix never change the distance; lines compare as small integers.
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    ids: Dict[str, int] = {}
    xs = [ids.setdefault(line, len(ids)) for line in a[start:end_a]]
    ys = [ids.setdefault(line, len(ids)) for line in b[start:end_b]]
    counts: Dict[int, int] = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    pairs = sum(counts.get(y, 0) for y in ys)
    if pairs <= 4_000_000:
        # Exact LCS; the distance decides, as Myers' bounded search would, whether it is within the limit.
        common = start + (len(a) - end_a) + _lcs_length(xs, ys)
        distance: Optional[int] = total - 2 * common
        if distance > MAX_EDIT_LENGTH:
            distance = None
    else:
        inner = _edit_distance(xs, ys, MAX_EDIT_LENGTH)
        distance = inner
    if distance is None:
        return min(overlap, (total - MAX_EDIT_LENGTH - 1) // 2), False
    return (total - distance) // 2, True


def line_similarity(prediction: str, ground_truth: str) -> Tuple[float, str]:
    predicted = output_lines(prediction)
    truth = output_lines(ground_truth)
    if len(predicted) + len(truth) == 0:
        return 1.0, "prediction and ground truth are both empty"
    matched, exact = matched_lines(predicted, truth)
    score = (2 * matched) / (len(predicted) + len(truth))
    if exact:
        detail = f"prediction matches {matched}/{len(truth)} ground-truth lines in order (prediction has {len(predicted)})"
    else:
        detail = (
            f"prediction matches at most {matched}/{len(truth)} ground-truth lines "
            f"(over {MAX_EDIT_LENGTH} line edits apart; prediction has {len(predicted)})"
        )
    return score, detail


# ── JSON structure: MCP (src/sft/verify/json-structure.ts) ───────────────────────────────────────

VALUE_CREDIT = 1.0
TYPE_CREDIT = 0.5
_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_document(text: str) -> Any:
    """A JSON object or array as JavaScript's JSON.parse reads it (numbers as doubles), or None."""
    try:
        value = json.loads(text, parse_int=float, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _leaf(value: Any) -> Tuple[str, Any]:
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, float):
        # JSON.stringify writes Infinity (an overflowing literal) as null; 0 and -0 alike.
        return ("number", None if math.isinf(value) else value)
    return ("string", value)


def json_leaves(value: Any, path: str = "$", into: Optional[Dict[str, Tuple[str, Any]]] = None) -> Dict[str, Tuple[str, Any]]:
    if into is None:
        into = {}
    if isinstance(value, list):
        if not value:
            into[path] = ("array", "[]")
        for i, item in enumerate(value):
            json_leaves(item, f"{path}[{i}]", into)
    elif isinstance(value, dict):
        if not value:
            into[path] = ("object", "{}")
        for key, item in value.items():
            segment = key if _PLAIN_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
            json_leaves(item, f"{path}.{segment}", into)
    else:
        into[path] = _leaf(value)
    return into


def _leaf_match(predicted: Dict[str, Tuple[str, Any]], truth: Dict[str, Tuple[str, Any]]) -> Tuple[int, int]:
    exact = type_only = 0
    for path, (kind, value) in truth.items():
        other = predicted.get(path)
        if other is None or other[0] != kind:
            continue
        if other[1] == value:
            exact += 1
        else:
            type_only += 1
    return exact, type_only


def json_structure(prediction: str, ground_truth: str) -> Tuple[float, str]:
    truth = parse_json_document(ground_truth)
    if truth is None:
        score, detail = line_similarity(prediction, ground_truth)
        return score, f"ground truth is not JSON; {detail}"
    predicted = parse_json_document(prediction)
    if predicted is None:
        return 0.0, "ground truth is JSON but the prediction is not a JSON object or array"
    p, t = json_leaves(predicted), json_leaves(truth)
    exact, type_only = _leaf_match(p, t)
    score = (2 * (VALUE_CREDIT * exact + TYPE_CREDIT * type_only)) / (len(p) + len(t))
    return score, (
        f"prediction matches {exact}/{len(t)} ground-truth JSON leaves exactly and {type_only} more "
        f"by path and type only (prediction has {len(p)})"
    )


# ── Search: structure + result sets (src/sft/verify/search-overlap.ts) ───────────────────────────

STRUCTURE_WEIGHT = 0.5
_URL_KEYS = {"url", "link"}
_TITLE_KEYS = {"title"}
_URL_IN_TEXT = re.compile(f"https?://[^{_JS_WS}\"'<>()\\[\\]{{}}]+")
_URL_TAIL = re.compile(r"[.,;:!?]+\Z")


def _collect(value: Any, urls: set, titles: set) -> None:
    if isinstance(value, list):
        for item in value:
            _collect(item, urls, titles)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and key in _URL_KEYS:
                urls.add(item)
            elif isinstance(item, str) and key in _TITLE_KEYS:
                titles.add(_collapse(item))
            else:
                _collect(item, urls, titles)


def result_sets(text: str) -> Tuple[set, set]:
    urls: set = set()
    titles: set = set()
    document = parse_json_document(text)
    if document is not None:
        _collect(document, urls, titles)
    else:
        for m in _URL_IN_TEXT.finditer(text):
            urls.add(_URL_TAIL.sub("", m.group(0)))
    return urls, titles


def search_fidelity(prediction: str, ground_truth: str) -> Tuple[float, str]:
    structure, structure_detail = json_structure(prediction, ground_truth)
    predicted = result_sets(prediction)
    truth = result_sets(ground_truth)
    parts = []
    for name, p, t in (("urls", predicted[0], truth[0]), ("titles", predicted[1], truth[1])):
        if not t:
            continue
        shared = sum(1 for item in t if item in p)
        f1 = (2 * shared) / (len(p) + len(t))
        parts.append((f1, f"{shared}/{len(t)} ground-truth result {name} found (prediction lists {len(p)})"))
    if not parts:
        return structure, f"{structure_detail}; no result URLs or titles to compare"
    overlap = 0.0
    for f1, _ in parts:
        overlap += f1
    overlap /= len(parts)
    score = STRUCTURE_WEIGHT * structure + (1 - STRUCTURE_WEIGHT) * overlap
    sets = ", ".join(text for _, text in parts)
    return score, f"structure {structure:.2f}: {structure_detail}; results {overlap:.2f}: {sets}"


# ── Tree similarity: web, Android, OS (src/sft/verify/tree-similarity.ts) ────────────────────────

PARTIAL_NODE_CREDIT = 0.5
_INDENT = re.compile(r"[ \t]*")
_ID_PREFIX = re.compile(f"\\[[^\\]]*\\][{_JS_WS}]*")
# JavaScript's `.` stops at line terminators; a `\\.` escape inside a quoted name is any other character.
_ESCAPED = r"\\[^\n\r\u2028\u2029]"
_QUOTED = re.compile("(?:\"(?:[^\"\\\\]|" + _ESCAPED + ")*\"|'(?:[^'\\\\]|" + _ESCAPED + ")*')")
_DIFF_EDIT = re.compile("([-+>~]) (\"(?:[^\"\\\\]|" + _ESCAPED + ")*\"|[^" + _JS_WS + ":]+)")
_NON_WS_RUN = re.compile(f"[^{_JS_WS}]+")


def _depth_of(indent: str) -> int:
    tabs = indent.count("\t")
    return tabs + (len(indent) - tabs) // 2


def _role_and_name(content: str) -> str:
    edit = _DIFF_EDIT.match(content)
    if edit:
        return f"{edit.group(1)} {edit.group(2)}"
    prefix = _ID_PREFIX.match(content)
    rest = content[prefix.end() :] if prefix else content
    role_match = _NON_WS_RUN.match(rest)
    role = role_match.group(0) if role_match else ""
    name_match = _QUOTED.match(_trim_start(rest[len(role) :]))
    name = name_match.group(0) if name_match else ""
    return f"{role} {name}"


def tree_node_lines(text: str) -> List[Tuple[str, str]]:
    nodes = []
    for line in _LINE_BREAK.split(text):
        if _trim(line) == "":
            continue
        depth = _depth_of(_INDENT.match(line).group(0))
        content = _collapse(line)
        nodes.append((f"{depth}|{content}", f"{depth}|{_role_and_name(content)}"))
    return nodes


def _take_shared(a: List[Tuple[str, str]], b: List[Tuple[str, str]], key: int):
    pool: Dict[str, int] = {}
    for node in a:
        pool[node[key]] = pool.get(node[key], 0) + 1
    rest_b = []
    for node in b:
        left = pool.get(node[key], 0)
        if left > 0:
            pool[node[key]] = left - 1
        else:
            rest_b.append(node)
    rest_a = []
    for node in a:
        left = pool.get(node[key], 0)
        if left > 0:
            pool[node[key]] = left - 1
            rest_a.append(node)
    return len(b) - len(rest_b), rest_a, rest_b


def tree_similarity(prediction: str, ground_truth: str) -> Tuple[float, str]:
    predicted = tree_node_lines(prediction)
    truth = tree_node_lines(ground_truth)
    if len(predicted) + len(truth) == 0:
        return 1.0, "prediction and ground truth are both empty trees"
    exact, rest_a, rest_b = _take_shared(predicted, truth, 0)
    partial, _, _ = _take_shared(rest_a, rest_b, 1)
    score = (2 * (exact + PARTIAL_NODE_CREDIT * partial)) / (len(predicted) + len(truth))
    return score, (
        f"prediction matches {exact}/{len(truth)} ground-truth nodes exactly and {partial} more "
        f"by role, name and depth only (prediction has {len(predicted)})"
    )


_MEASURES = {
    "line_similarity": line_similarity,
    "json_structure": json_structure,
    "search_overlap": search_fidelity,
    "tree_similarity": tree_similarity,
}


def fidelity(domain: str, prediction: str, ground_truth: str, rule: Optional[str] = None) -> Tuple[float, str]:
    """The domain's fidelity score in [0, 1] and what it counted (`fidelityFor(domain)`)."""
    name = rule or FIDELITY_RULES.get(domain)
    if name not in _MEASURES:
        raise ValueError(f"unknown domain {domain!r} / fidelity rule {rule!r}; domains: {', '.join(FIDELITY_RULES)}")
    return _MEASURES[name](prediction, ground_truth)


# ── The verdict and the trainers' entry points ───────────────────────────────────────────────────

# A generation decoded without skipping special tokens (OpenRLHF's queries) ends with the template's
# end of turn and padding; the SFT verifier sees an API's message content, which never holds them,
# and verl decodes with skip_special_tokens. Only a trailing run goes.
_END_OF_TURN = re.compile(r"(?:\s*(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>|<\|end_of_text\|>|<｜end▁of▁sentence｜>))+\s*\Z")


def _domain_of(data_source: Optional[str], extra_info: Dict[str, Any]) -> str:
    domain = extra_info.get("domain")
    if not domain and data_source:
        domain = str(data_source).rsplit("/", 1)[-1]
    if domain not in FIDELITY_RULES:
        raise ValueError(f"cannot tell the domain from data_source={data_source!r} / extra_info.domain={domain!r}")
    return domain


def verify(
    domain: str,
    solution_str: str,
    ground_truth: str,
    extra_info: Optional[Dict[str, Any]] = None,
    quotable: Sequence[str] = (),
) -> Dict[str, Any]:
    """Every rule's verdict on one answer, as the SFT verifier gives it (hints never given).

    extra_info (as `lwm-data export rl` writes it): `fidelity_threshold`, `think_min_chars`,
    `think_max_chars`, `prediction_min_chars`, `prediction_max_chars`, `quotable_tags`; missing
    keys take configs/defaults.yaml's values. `quotable`: further texts the answer may quote tags
    from (the prompt's contents), when known as texts rather than as extra_info.quotable_tags.
    """
    info = extra_info or {}
    threshold = info.get("fidelity_threshold")
    threshold = DEFAULT_FIDELITY[domain] if threshold is None else float(threshold)
    lengths = {key: int(info[key]) if info.get(key) is not None else default for key, default in DEFAULT_LENGTHS.items()}
    # A list, or a NumPy array where the trainer's batch holds extra_info as arrays.
    tags = info.get("quotable_tags")
    parsed = parse_candidate(solution_str, [ground_truth, *quotable], [str(t) for t in tags] if tags is not None else ())
    format_score, format_reason = format_rule(parsed, lengths)
    if format_score < 1 or "prediction" not in parsed:
        fidelity_score: Optional[float] = None
        fidelity_passed = False
        fidelity_reason = f"format failed: {format_reason}"
    else:
        fidelity_score, detail = fidelity(domain, parsed["prediction"], ground_truth, info.get("fidelity_rule"))
        fidelity_passed = fidelity_score >= threshold
        fidelity_reason = f"{domain}: {detail} ({fidelity_score:.2f} {'≥' if fidelity_passed else '<'} {threshold:.2f})"
    return {
        "passed": format_score >= 1 and fidelity_passed,
        "format_score": format_score,
        "format_reason": format_reason,
        "fidelity_score": fidelity_score,
        "fidelity_threshold": threshold,
        "fidelity_reason": fidelity_reason,
        "prediction": parsed.get("prediction"),
    }


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Dict[str, float]:
    """verl's reward function: 1.0 when the SFT verifier would keep this answer, else 0.0.

    Returns a dict (verl takes `score` as the reward and logs the rest per sample): `score`,
    `format` (the format rule's 0/1) and `fidelity` (the domain's fidelity score, 0 when the
    format failed and fidelity did not run).
    """
    info = dict(extra_info or {})
    domain = _domain_of(data_source, info)
    if isinstance(ground_truth, dict):  # the whole reward_model struct
        ground_truth = ground_truth.get("ground_truth", "")
    verdict = verify(domain, solution_str or "", "" if ground_truth is None else str(ground_truth), info)
    fidelity_score = verdict["fidelity_score"]
    return {
        "score": 1.0 if verdict["passed"] else 0.0,
        "format": verdict["format_score"],
        "fidelity": 0.0 if fidelity_score is None else float(fidelity_score),
    }


def reward_func(queries: List[str], prompts: List[str], labels: List[str], **kwargs: Any) -> Dict[str, Any]:
    """OpenRLHF's remote reward function (`--reward.remote_url <this file> --data.label_key label`).

    `queries` are prompt + response, `prompts` the rendered prompts, `labels` the JSON strings
    `export rl --format openrlhf` wrote (`{"ground_truth": …, "data_source": …, "extra_info": …}`).
    Returns `rewards` and `scores` (1 where the SFT verifier would keep the answer) and per-batch
    means of the format and fidelity scores in `extra_logs`.
    """
    import torch

    rewards: List[float] = []
    formats: List[float] = []
    fidelities: List[float] = []
    for query, prompt, label in zip(queries, prompts, labels):
        info = json.loads(label) if isinstance(label, str) else dict(label)
        response = query[len(prompt) :] if query.startswith(prompt) else query
        # OpenRLHF decodes with the special tokens: the end of turn (and padding) closes the response.
        response = _END_OF_TURN.sub("", response)
        result = compute_score(info.get("data_source", ""), response, info.get("ground_truth", ""), info.get("extra_info") or {})
        rewards.append(result["score"])
        formats.append(result["format"])
        fidelities.append(result["fidelity"])
    reward = torch.tensor(rewards, dtype=torch.float32)
    return {
        "rewards": reward,
        "scores": reward,
        "extra_logs": {
            "lwm_format": torch.tensor(formats, dtype=torch.float32),
            "lwm_fidelity": torch.tensor(fidelities, dtype=torch.float32),
        },
    }
