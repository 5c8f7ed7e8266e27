"""Check of `lwm-data export agentworldbench` against the layout Qwen-AgentWorld's eval/eval.py reads.

    python test/python/check_awb_export.py EXPORT_DIR OUTPUT_DIR [--split validation] [--turns all|trained]

eval.py (QwenLM/Qwen-AgentWorld) loads every `*_test.jsonl` of --data-dir; for a row it takes the
domain from `task` (its last `/` part), and

- infer (after #8): the chat messages system_str, then (prompt[j] as user, response[j] as
  assistant) for j < turn_idx − 1, then current_prompt (or prompt[turn_idx − 1]) as user; before #8
  (issue #7) only system_str and current_prompt;
- judge: the context prompt[j] + response[j] for j < turn_idx − 1, the current turn, and the ground
  truth response[turn_idx − 1].

This check rebuilds those from each row as eval.py does and compares them with the output's
shards (pyarrow; the messages column un-escaped with notebooks/lwm_text.py): one row per evaluated
turn of the split, the whole history before it in every row, actions and observations byte for
byte under the "### Turn N\\n**Action:**\\n" / "**Environment Observation:**\\n" markup, the ground
truth the turn's observation, and total_turns the trajectory's length.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
import lwm_text  # noqa: E402

failures: list[str] = []
ACTION = re.compile(r"\A### Turn (\d+)\n\*\*Action:\*\*\n")
OBSERVATION = "**Environment Observation:**\n"


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def inference_messages(row: dict) -> list[dict]:
    """The messages eval.py's inference step sends for a row (the version with the history)."""
    prompts, responses = row.get("prompt", []), row.get("response", [])
    current = max(row.get("turn_idx", 1) - 1, 0)
    messages = [{"role": "system", "content": row["system_str"]}] if row.get("system_str") else []
    for j in range(min(current, len(prompts), len(responses))):
        messages += [{"role": "user", "content": prompts[j]}, {"role": "assistant", "content": responses[j]}]
    action = row.get("current_prompt") or (prompts[current] if current < len(prompts) else "")
    return messages + [{"role": "user", "content": action}]


def judge_ground_truth(row: dict) -> str:
    current = max(row.get("turn_idx", 1) - 1, 0)
    return row["response"][current] if current < len(row["response"]) else ""


def expected_turns(output: Path, split: str, turns: str) -> dict[str, dict]:
    manifest = json.loads((output / "manifest.json").read_text())
    expected = {}
    for shard in manifest["shards"]:
        if shard.get("split", "train") != split:
            continue
        path = output / shard["path"]
        rule = lwm_text.TextRule.from_shard(path)
        for row in pq.read_table(path).to_pylist():
            if re.search(r"#copy\d+$", row["id"]) or any(m["role"] == "text" for m in row["messages"]):
                continue
            messages = [dict(m, content=rule.unescape(m["content"])) for m in row["messages"]]
            system, rest = messages[0]["content"], messages[1:]
            pairs = [(rest[2 * t]["content"], rest[2 * t + 1]["content"], rest[2 * t + 1]["loss"]) for t in range(len(rest) // 2)]
            for t, (_, _, loss) in enumerate(pairs):
                if turns == "trained" and not loss:
                    continue
                expected[f"{row['id']}#{t}"] = {"domain": row["domain"], "system": system, "pairs": pairs[: t + 1], "total": len(pairs)}
    return expected


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--split", default="validation")
    parser.add_argument("--turns", choices=["all", "trained"], default="all")
    args = parser.parse_args()

    expected = expected_turns(args.output, args.split, args.turns)
    refused = {json.loads(line)["prompt_id"] for line in (args.export / "refused.jsonl").read_text().split("\n") if line.strip()}
    seen: set[str] = set()
    rows_total = 0
    for file in sorted(args.export.glob("*_test.jsonl")):
        domain = file.name[: -len("_test.jsonl")]
        for n, line in enumerate(file.read_text(encoding="utf-8").split("\n")):
            if not line.strip():
                continue
            rows_total += 1
            row = json.loads(line)
            where = f"{file.name}:{n + 1}"
            for key, kind in (("task", str), ("id", str), ("prompt", list), ("response", list), ("current_prompt", str), ("system_str", str), ("turn_idx", int), ("total_turns", int)):
                check(isinstance(row.get(key), kind), f"{where}: {key} is {type(row.get(key)).__name__}")
            check(row["task"].split("/")[-1] == domain, f"{where}: task {row['task']} in {file.name}")
            pid = row["lwm_prompt_id"]
            check(pid not in seen, f"{where}: {pid} twice")
            seen.add(pid)
            want = expected.get(pid)
            if want is None:
                check(False, f"{where}: {pid} is not a turn of the {args.split} split")
                continue
            check(row["id"] == pid.rsplit("#", 1)[0] and row["total_turns"] == want["total"], f"{where}: id / total_turns")
            turn = int(pid.rsplit("#", 1)[1])
            # The whole history is in the row: turn_idx − 1 earlier turns.
            check(row["turn_idx"] == turn + 1 == len(row["prompt"]) == len(row["response"]), f"{where}: turn_idx {row['turn_idx']} for turn {turn} with {len(row['prompt'])} prompts")
            check(row["lwm_turn_index"] == turn, f"{where}: lwm_turn_index")
            for j, (action, observation, _) in enumerate(want["pairs"]):
                marker = ACTION.match(row["prompt"][j]) if j < len(row["prompt"]) else None
                check(marker is not None and int(marker.group(1)) == j + 1, f"{where}: prompt[{j}] lacks its '### Turn {j + 1}' markup")
                if marker:
                    check(row["prompt"][j][marker.end() :] == action, f"{where}: prompt[{j}] differs from the turn's action")
                check(j < len(row["response"]) and row["response"][j] == OBSERVATION + observation, f"{where}: response[{j}] differs from the turn's observation")
            # What eval.py sends and what its judge compares against.
            messages = inference_messages(row)
            check(messages[0] == {"role": "system", "content": want["system"]}, f"{where}: system_str differs from the system message")
            check(len(messages) == 2 * turn + 2, f"{where}: inference sees {len(messages)} messages, expected {2 * turn + 2}")
            check(messages[-1]["content"] == row["prompt"][-1] == row["current_prompt"], f"{where}: current_prompt is not the last action")
            check(judge_ground_truth(row) == OBSERVATION + want["pairs"][-1][1], f"{where}: the judge's ground truth is not the turn's observation")
    missing = set(expected) - seen - refused
    check(not missing, f"{len(missing)} turns of the split neither exported nor refused, e.g. {sorted(missing)[:3]}")
    check(rows_total > 0, f"{args.export}: no rows")
    if failures:
        print(f"check_awb_export: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    print(
        f"check_awb_export: {rows_total} rows = the {args.split} split's {args.turns} turns ({len(refused)} refused); "
        "eval.py's inference messages and judge ground truth rebuilt from every row equal the shards' history, action and observation"
    )


if __name__ == "__main__":
    main()
