"""A stand-in teacher for the trainer-side check: answers every prompt of `lwm-data sft prompts`
with a short reasoning and the real observation (plus a wrong candidate), as a candidate file.

    python test/python/perfect_teacher.py PROMPTS.jsonl CANDIDATES.jsonl
"""

import json
import sys

with open(sys.argv[1]) as prompts, open(sys.argv[2], "w") as out:
    for line in prompts:
        prompt = json.loads(line)
        action = prompt["messages"][-1]["content"]
        think = f"The agent ran {json.dumps(action[:60])}; the {prompt['domain']} environment answers it from the state so far."
        right = f"<think>\n{think}\n</think>\n\n<predicted_observation>\n{prompt['ground_truth']}\n</predicted_observation>"
        wrong = f"<think>\n{think}\n</think>\n\n<predicted_observation>\nsegmentation fault\n</predicted_observation>"
        out.write(json.dumps({"prompt_id": prompt["prompt_id"], "candidates": [wrong, right]}) + "\n")
