"""The RL reward equals the SFT verifier's decision on the same answers.

    python test/python/check_rl_reward.py <cases.jsonl>

`cases.jsonl` comes from test/support/rl-reward-cases.ts: answers to the prompts of an `export rl`
dataset (perfect ones, near misses per domain, format failures, quoted tags, astral characters,
JavaScript-only whitespace, seeded random edits, synthetic prompts) with the TypeScript verifier's
verdict on each. The reward file is loaded by path, as verl (`custom_reward_function.path`) and
OpenRLHF (`--remote_rm_url`) load it, and called with verl's keyword arguments. Every case must
agree: the reward (1/0) with the verdict, the format score, and the fidelity score to the last bit.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_reward_module():
    path = ROOT / "python/lwm_reward/reward.py"
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    cases_path = Path(sys.argv[1])
    reward = load_reward_module()
    cases = [json.loads(line) for line in cases_path.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert len(cases) > 100, f"only {len(cases)} cases in {cases_path}"
    mismatches = []
    outcomes: Counter = Counter()
    for case in cases:
        expected = case["expected"]
        # verl's NaiveRewardManager adds these to extra_info before calling the reward.
        extra_info = dict(case["extra_info"], num_turns=None, rollout_reward_scores={})
        got = reward.compute_score(
            data_source=case["data_source"],
            solution_str=case["solution_str"],
            ground_truth=case["ground_truth"],
            extra_info=extra_info,
        )
        verdict = reward.verify(case["extra_info"]["domain"], case["solution_str"], case["ground_truth"], case["extra_info"])
        problems = []
        if got["score"] != (1.0 if expected["passed"] else 0.0):
            problems.append(f"reward {got['score']} but the verifier {'keeps' if expected['passed'] else 'rejects'} it")
        if verdict["format_score"] != expected["format"]:
            problems.append(f"format {verdict['format_score']} vs {expected['format']} ({verdict['format_reason']})")
        if verdict["fidelity_score"] != expected["fidelity"]:
            problems.append(f"fidelity {verdict['fidelity_score']!r} vs {expected['fidelity']!r} ({verdict['fidelity_reason']})")
        if problems:
            mismatches.append(f"{case['name']}: {'; '.join(problems)}")
        outcomes[(case["extra_info"]["domain"], expected["passed"])] += 1
    if mismatches:
        print(f"check_rl_reward: {len(mismatches)} of {len(cases)} cases disagree with the SFT verifier:", file=sys.stderr)
        for line in mismatches[:40]:
            print(f"  {line}", file=sys.stderr)
        sys.exit(1)
    domains = sorted({domain for domain, _ in outcomes})
    # Both outcomes occur in every domain, so agreement is not one-sided.
    for domain in domains:
        assert outcomes[(domain, True)] > 0 and outcomes[(domain, False)] > 0, f"{domain}: cases only {'pass' if outcomes[(domain, True)] else 'fail'}"
    summary = ", ".join(f"{d} {outcomes[(d, True)]}/{outcomes[(d, True)] + outcomes[(d, False)]}" for d in domains)
    print(f"check_rl_reward: {len(cases)} answers, reward = SFT verifier decision on all (passing per domain: {summary})")


if __name__ == "__main__":
    main()
