"""Trainer-side check of `lwm-data export rl`: verl's Parquet and OpenRLHF's JSONL.

    python test/python/check_rl_export.py --verl DIR --openrlhf DIR --tokenizer-dir DIR \
        (--output OUTPUT_DIR --turns trained|all | --prompts PROMPTS.jsonl) [--readme README.md]

1. verl: pyarrow reads every `<split>.parquet` with verl's RL schema (data_source string, prompt
   list<struct<role, content>>, ability string, reward_model struct<style, ground_truth>,
   extra_info struct); Hugging Face `datasets.load_dataset("parquet", …)` loads it as verl's
   RLHFDataset does, and transformers' `apply_chat_template(prompt, add_generation_prompt=True)`
   renders every prompt with the trainer's tokenizer.
2. The rows are the source's turns: for an output folder, each conversation of the shards (its
   messages column un-escaped with notebooks/lwm_text.py) gives one prompt per observation turn
   (only the trained ones with --turns trained), the prompt being the system message, the history
   and the action, the ground truth the observation, byte for byte; for a prompts file, its lines.
3. The reward as verl computes it: the file loaded by path (custom_reward_function.path), a perfect
   answer tokenized, decoded with skip_special_tokens=True as the NaiveRewardManager decodes, and
   scored with compute_score(data_source, solution_str, ground_truth, extra_info) gives 1 on every
   row; an answer that predicts another turn's observation gives 0 where the verifier would reject it.
4. OpenRLHF: `<split>.jsonl` holds the same prompts in the same order (`input`), `label` is the
   ground truth, data source and extra_info as JSON, and the reward file's `reward_func(queries,
   prompts, labels)` on rendered prompt + answer + end of turn gives the same rewards as compute_score.
5. --readme: the README's verl snippet (a ```python block under "RL: verl and OpenRLHF") runs as written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from transformers import AutoTokenizer

datasets.disable_progress_bars()

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "notebooks"))
import lwm_text  # noqa: E402

failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def load_reward():
    spec = importlib.util.spec_from_file_location("custom_module", ROOT / "python/lwm_reward/reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MESSAGE = pa.struct([pa.field("role", pa.string(), nullable=False), pa.field("content", pa.string(), nullable=False)])
EXTRA_INFO_FIELDS = {
    "index": pa.int64(),
    "split": pa.string(),
    "prompt_id": pa.string(),
    "trajectory_id": pa.string(),
    "domain": pa.string(),
    "turn_index": pa.int32(),
    "source": pa.string(),
    "fidelity_rule": pa.string(),
    "fidelity_threshold": pa.float64(),
    "think_min_chars": pa.int32(),
    "think_max_chars": pa.int32(),
    "prediction_min_chars": pa.int32(),
    "prediction_max_chars": pa.int32(),
    "quotable_tags": pa.list_(pa.field("item", pa.string(), nullable=False)),
    "literals_escaped": pa.bool_(),
}


def expected_from_output(output: Path, turns: str) -> dict[str, dict]:
    """prompt_id → {messages, ground_truth, split, domain} from the shards' messages column."""
    manifest = json.loads((output / "manifest.json").read_text())
    expected = {}
    for shard in manifest["shards"]:
        path = output / shard["path"]
        rule = lwm_text.TextRule.from_shard(path)
        for row in pq.read_table(path).to_pylist():
            if re.search(r"#copy\d+$", row["id"]) or any(m["role"] == "text" for m in row["messages"]):
                continue
            messages = [dict(m, content=rule.unescape(m["content"])) for m in row["messages"]]
            system, rest = messages[0], messages[1:]
            for t in range(len(rest) // 2):
                observation = rest[2 * t + 1]
                if turns == "trained" and not observation["loss"]:
                    continue
                prompt = [{"role": "system", "content": system["content"]}] + [
                    {"role": m["role"], "content": m["content"]} for m in rest[: 2 * t + 1]
                ]
                expected[f"{row['id']}#{t}"] = {
                    "messages": prompt,
                    "ground_truth": observation["content"],
                    "split": shard.get("split", "train"),
                    "domain": row["domain"],
                }
    return expected


def expected_from_prompts(path: Path) -> dict[str, dict]:
    expected = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            prompt = json.loads(line)
            expected[prompt["prompt_id"]] = {
                "messages": prompt["messages"],
                "ground_truth": prompt["ground_truth"],
                "split": None,
                "domain": prompt["domain"],
            }
    return expected


def perfect_answer(ground_truth: str) -> str:
    return f"<think>\nThe history shows what the environment holds, so this follows.\n</think>\n\n<predicted_observation>\n{ground_truth}\n</predicted_observation>"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--verl", type=Path, required=True)
    parser.add_argument("--openrlhf", type=Path, required=True)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--turns", choices=["trained", "all"], default="trained")
    parser.add_argument("--prompts", type=Path)
    parser.add_argument("--readme", type=Path)
    args = parser.parse_args()

    expected = expected_from_output(args.output, args.turns) if args.output else expected_from_prompts(args.prompts)
    refused = {json.loads(line)["prompt_id"] for line in (args.verl / "refused.jsonl").read_text().split("\n") if line.strip()}
    reward = load_reward()
    tokenizer = AutoTokenizer.from_pretrained(str(args.tokenizer_dir))

    files = sorted(args.verl.glob("*.parquet"))
    check(len(files) > 0, f"{args.verl}: no <split>.parquet")
    seen: set[str] = set()
    verl_rows: dict[str, list[dict]] = {}
    rejected_checked = 0
    for file in files:
        split = file.stem
        schema = pq.read_schema(file)
        check(schema.field("data_source").type == pa.string(), f"{file}: data_source is {schema.field('data_source').type}")
        check(schema.field("ability").type == pa.string(), f"{file}: ability")
        check(pa.types.is_list(schema.field("prompt").type) and schema.field("prompt").type.value_type == MESSAGE, f"{file}: prompt is {schema.field('prompt').type}")
        reward_model = schema.field("reward_model").type
        check({f.name: f.type for f in reward_model} == {"style": pa.string(), "ground_truth": pa.string()}, f"{file}: reward_model is {reward_model}")
        extra = {f.name: f.type for f in schema.field("extra_info").type}
        for name, kind in EXTRA_INFO_FIELDS.items():
            check(name in extra and (extra[name] == kind or (pa.types.is_list(kind) and pa.types.is_list(extra[name]))), f"{file}: extra_info.{name} is {extra.get(name)}")
        # As verl's RLHFDataset loads its data files.
        rows = datasets.load_dataset("parquet", data_files=str(file))["train"].to_list()
        verl_rows[split] = rows
        for index, row in enumerate(rows):
            info = row["extra_info"]
            pid = info["prompt_id"]
            where = f"{file.name} row {index} ({pid})"
            check(pid not in seen, f"{where}: prompt exported twice")
            seen.add(pid)
            want = expected.get(pid)
            if want is None:
                check(False, f"{where}: not a turn of the source")
                continue
            check(info["index"] == index and info["split"] == split, f"{where}: index {info['index']}, split {info['split']}")
            if want["split"] is not None:
                check(split == want["split"], f"{where}: in {split}, its shard is {want['split']}")
            check(row["data_source"] == f"lwm-data/{want['domain']}" and info["domain"] == want["domain"], f"{where}: data source {row['data_source']}")
            check(row["ability"] == "world_model" and row["reward_model"]["style"] == "rule", f"{where}: ability/style")
            check(row["reward_model"]["ground_truth"] == want["ground_truth"], f"{where}: ground truth differs from the source's observation")
            check(info["fidelity_rule"] == reward.FIDELITY_RULES[want["domain"]], f"{where}: fidelity rule {info['fidelity_rule']}")
            prompt = row["prompt"]
            if info["literals_escaped"]:
                check([m["role"] for m in prompt] == [m["role"] for m in want["messages"]], f"{where}: roles")
            else:
                check(prompt == want["messages"], f"{where}: prompt differs from the source's system + history + action")
            # The trainer renders it with its tokenizer's template.
            rendered = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
            check(rendered.endswith("<|im_start|>assistant\n"), f"{where}: rendered prompt does not end with the generation prompt")
            check(all(m["content"] in rendered for m in prompt if m["role"] != "assistant"), f"{where}: a content is missing from the rendered prompt")
            # The reward as verl computes it: response ids decoded without special tokens.
            ids = tokenizer.encode(perfect_answer(row["reward_model"]["ground_truth"]) + "<|im_end|>", add_special_tokens=False)
            solution = tokenizer.decode(ids, skip_special_tokens=True)
            extra_info = dict(info, num_turns=None, rollout_reward_scores={})
            score = reward.compute_score(data_source=row["data_source"], solution_str=solution, ground_truth=row["reward_model"]["ground_truth"], extra_info=extra_info)
            check(score["score"] == 1.0, f"{where}: the perfect answer scores {score}")
            other = expected.get(f"{info['trajectory_id']}#{info['turn_index'] + 1}")
            if other is not None and other["ground_truth"] != want["ground_truth"]:
                wrong = reward.compute_score(row["data_source"], perfect_answer(other["ground_truth"]), row["reward_model"]["ground_truth"], info)
                verdict = reward.verify(want["domain"], perfect_answer(other["ground_truth"]), row["reward_model"]["ground_truth"], info)
                check(wrong["score"] == (1.0 if verdict["passed"] else 0.0), f"{where}: the next turn's observation scores {wrong}")
                rejected_checked += 0 if verdict["passed"] else 1
    missing = set(expected) - seen - refused
    check(not missing, f"{len(missing)} source turns neither exported nor refused, e.g. {sorted(missing)[:3]}")
    check(rejected_checked > 0, "no prompt was checked with a wrong answer")

    # OpenRLHF: the same prompts, in the same order, and the same rewards through reward_func.
    for split, rows in verl_rows.items():
        path = args.openrlhf / f"{split}.jsonl"
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        check(len(lines) == len(rows), f"{path}: {len(lines)} lines, verl's {split} has {len(rows)} rows")
        queries, prompts, labels, expected_rewards = [], [], [], []
        for k, (line, row) in enumerate(zip(lines, rows)):
            label = json.loads(line["label"])
            check(line["input"] == row["prompt"], f"{path} line {k + 1}: input differs from verl's prompt")
            check(line["datasource"] == row["data_source"] and label["data_source"] == row["data_source"], f"{path} line {k + 1}: data source")
            check(label["ground_truth"] == row["reward_model"]["ground_truth"], f"{path} line {k + 1}: ground truth")
            check(label["extra_info"] == row["extra_info"], f"{path} line {k + 1}: extra_info")
            rendered = tokenizer.apply_chat_template(line["input"], add_generation_prompt=True, tokenize=False)
            # Every other answer predicts the next line's observation instead (mostly wrong).
            truth = label["ground_truth"] if k % 2 == 0 else json.loads(lines[(k + 1) % len(lines)]["label"])["ground_truth"]
            answer = perfect_answer(truth)
            queries.append(rendered + answer + "<|im_end|><|endoftext|>")
            prompts.append(rendered)
            labels.append(line["label"])
            expected_rewards.append(reward.compute_score(row["data_source"], answer, label["ground_truth"], label["extra_info"])["score"])
        result = reward.reward_func(queries, prompts, labels)
        check(result["rewards"].tolist() == expected_rewards, f"{path}: reward_func {result['rewards'].tolist()[:8]} vs compute_score {expected_rewards[:8]}")
        check(0.0 in expected_rewards and 1.0 in expected_rewards, f"{path}: rewards are all {expected_rewards[:1]}")

    if args.readme:
        text = args.readme.read_text()
        section = text[text.index("## RL: verl and OpenRLHF") :]
        snippet = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
        cwd = os.getcwd()
        try:
            os.chdir(ROOT)
            namespace: dict = {"__name__": "readme"}
            exec(compile(snippet.replace("out/demo/export/rl/verl", str(args.verl.resolve())), "README snippet", "exec"), namespace)
        finally:
            os.chdir(cwd)

    if failures:
        print(f"check_rl_export: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    total = sum(len(rows) for rows in verl_rows.values())
    print(
        f"check_rl_export: {total} prompts ({', '.join(f'{s} {len(r)}' for s, r in verl_rows.items())}) are the source's turns; "
        f"verl schema, chat template and reward (perfect answers 1, {rejected_checked} wrong ones as the verifier decides); "
        f"OpenRLHF rows and reward_func agree; {len(refused)} refused"
    )


if __name__ == "__main__":
    main()
