"""verl's own code on `lwm-data export rl --format verl`: its dataset, agent loop and reward path, on CPU.

    .venv-verl/bin/python test/python/check_verl.py VERL_DIR [VERL_DIR ...] --tokenizer-dir DIR

Runs in .venv-verl (test/python/requirements-verl.txt: verl 0.9.1 with its verl-core extra, torch 2.13 CPU).
Everything below is verl's code, wired as its trainer (verl.trainer.main_ppo → ray_trainer.RayPPOTrainer)
wires it; only the two GPU services are replaced: the vLLM server by a scripted policy, Ray actor handles by
in-process calls on one event loop. verl 0.9's default trainer (trainer.use_v1=True) runs the same dataset,
agent loop, token builder and reward worker, but stores the unpadded rollouts in TransferQueue (Ray actors)
instead of padding them into a batch; the padded batch of AgentLoopWorker.generate_sequences is checked here,
and its unpadded prompt (the attention mask's ones) is what v1 stores.

1. Config: hydra composes verl's own `ppo_trainer.yaml` with the README's overrides: data.train_files /
   data.val_files (every `<split>.parquet`: train, validation), data.prompt_key=prompt,
   data.max_prompt_length=8192, data.max_response_length=4096, data.filter_overlong_prompts=True,
   reward.custom_reward_function.path=python/lwm_reward/reward.py, reward.custom_reward_function.name=compute_score;
   verl's defaults for the rest of `data` (return_raw_chat=True, truncation=error, apply_chat_template_kwargs={},
   shuffle=True) and reward.reward_manager.name=naive. Not data, but needed to build a trainer's workers:
   actor_rollout_ref.model.path (a Qwen3 config.json, no weights: verl reads its model_type and architecture),
   actor_rollout_ref.model.tokenizer_path (--tokenizer-dir), actor_rollout_ref.rollout.name=vllm (a name only;
   nothing of vLLM is imported), actor_rollout_ref.rollout.n=2, data.dataloader_num_workers=0.
2. Dataset: verl.trainer.ppo.utils.create_rl_dataset (RLHFDataset: datasets' parquet loader, the overlong-prompt
   filter that tokenizes every prompt with the chat template), the trainer's sampler and collate_fn in a
   StatefulDataLoader, DataProto.from_single_dict. Every row of the file comes out (the filter drops exactly the
   prompts longer than max_prompt_length, counted here independently: none at 8192 on the demo), and
   data_source, prompt/raw_prompt, ability, reward_model and extra_info equal the file's (read with pyarrow).
3. Rollout: the batch split as RayPPOTrainer._get_gen_batch splits it and repeated rollout.n times, through
   verl's AgentLoopWorker.generate_sequences: SingleTurnAgentLoop, whose Continuous Token builder (the qwen3
   family, from the config's model_type) tokenizes raw_prompt with the chat template; left-padded `prompts`,
   `attention_mask`, `input_ids`, `position_ids`. The scripted policy answers only prompts whose ids are exactly
   the ids of transformers' apply_chat_template(prompt, add_generation_prompt=True) of an exported row (computed
   here, not by verl), so a prompt verl renders differently gets no answer. Its first answer to a prompt is
   perfect (the ground truth in the README's format), the second broken: another trajectory's (different)
   observation on even rows, the perfect answer with <predicted_observation> never closed on odd rows; each ends
   with <|im_end|>, as vLLM returns the stop token. (Validation: val_kwargs.n=1, the perfect answer only.)
4. Reward: the agent loop's streaming reward call into verl's RewardLoopWorker → load_reward_manager →
   get_custom_reward_fn (reward.py loaded by path) → NaiveRewardManager.run_single (the response decoded with
   skip_special_tokens=True) → compute_score; `rm_scores` holds the score on the last response token and the
   batch carries score/format/fidelity. Perfect answers score 1 on every row, unclosed ones 0, the other
   observation what compute_score (imported here directly) gives for it, below 1 on most rows. Rows whose
   prompts render alike (one conversation prefix in several trajectories) get the policy's answers for the first
   of them; their rewards are checked against each row's own ground truth all the same, and counted.
5. The output, joined with the dataset batch as the trainer joins them (batch.repeat(n).union(gen_output),
   which asserts raw_prompt equal): each prompt's unpadded ids decode to the rendering of the exported
   messages, and data_source/reward_model/extra_info pass through unchanged.
6. Negative controls, through the same pipeline and comparison (one verl run on a corrupted copy of the first
   file's first 10 rows): one ground truth swapped, one action edited, one extra_info field changed and one row
   dropped must each be reported; with data.max_prompt_length at the 6th shortest prompt, verl's filter must drop
   exactly the 4 longer ones, which the comparison reports as missing unless accounted for. And the pre-0.9 key
   spelling (custom_reward_function.path at the top level) must not reach verl 0.9's reward loader, while
   reward.custom_reward_function.path does (verl's built-in reward, its fallback, refuses lwm-data sources).

"""

from __future__ import annotations

import time

STARTED = time.monotonic()  # the run time printed at the end includes the imports (verl, ray, torch: seconds)

import argparse  # noqa: E402
import atexit  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import uuid  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REWARD_PATH = ROOT / "python/lwm_reward/reward.py"
# datasets' cache (verl loads through load_dataset and .filter) in a throwaway folder: each run re-runs verl's
# filter instead of reusing a previous run's result, and nothing lands in ~/.cache.
_cache = tempfile.mkdtemp(prefix="check-verl-")
atexit.register(shutil.rmtree, _cache, ignore_errors=True)
warnings.filterwarnings("ignore", message=".*set_vital.*")  # torchdata's StatefulDataLoader on torch 2.13
os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(_cache, "datasets"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import verl  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from transformers import AutoTokenizer, Qwen3Config  # noqa: E402

datasets.disable_progress_bars()  # verl's filter would draw one per split

README_OVERRIDES = [
    "data.prompt_key=prompt",
    "data.max_prompt_length=8192",
    "data.max_response_length=4096",
    "data.filter_overlong_prompts=True",
    f"reward.custom_reward_function.path={REWARD_PATH}",
    "reward.custom_reward_function.name=compute_score",
]
ROLLOUT_N = 2


def load_reward():
    """reward.py as a plain module, for the expected scores (verl loads it on its own, by path)."""
    spec = importlib.util.spec_from_file_location("lwm_reward_expected", REWARD_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def perfect_answer(truth: str) -> str:
    # The README's answer format (section "RL: verl and OpenRLHF").
    return f"<think>\nThe action reads state the history already shows.\n</think>\n\n<predicted_observation>\n{truth}\n</predicted_observation>"


def unclosed_answer(truth: str) -> str:
    return f"<think>\nThe action reads state the history already shows.\n</think>\n\n<predicted_observation>\n{truth}\n"


def compose_config(model_dir: str, tokenizer_dir: Path, train: list[str], val: list[str], extra: list[str] = ()):
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer/config")
    overrides = [
        f"data.train_files={json.dumps(train)}",
        f"data.val_files={json.dumps(val)}",
        *README_OVERRIDES,
        f"actor_rollout_ref.model.path={model_dir}",
        f"actor_rollout_ref.model.tokenizer_path={tokenizer_dir.resolve()}",
        "actor_rollout_ref.rollout.name=vllm",
        f"actor_rollout_ref.rollout.n={ROLLOUT_N}",
        "data.dataloader_num_workers=0",
        *extra,
    ]
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose("ppo_trainer", overrides=overrides)
    OmegaConf.resolve(config)  # as TaskRunner.run does before building the trainer
    return config


class ScriptedPolicy:
    """Stands in for verl's LLM server client: answers a prompt only when its ids are an exported row's.

    Its first answer to a prompt is perfect, the next one broken: another trajectory's observation (even rows) or
    the perfect answer with <predicted_observation> never closed (odd rows). Rows whose prompts render alike
    (the same conversation prefix in two trajectories) share one lookup entry: the policy answers from the first.
    """

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.serve([])

    def serve(self, rows: list[dict]) -> None:
        self.by_ids: dict[tuple, tuple[int, dict]] = {}
        for k, row in enumerate(rows):
            self.by_ids.setdefault(tuple(row["_ids"]), (k, row))
        # A plausible wrong answer: the observation of the next row from another trajectory, if it differs.
        self.others = {}
        for k, row in enumerate(rows):
            tid = row["extra_info"]["trajectory_id"]
            truth = row["reward_model"]["ground_truth"]
            other = next((r for r in rows[k + 1 :] + rows[:k] if r["extra_info"]["trajectory_id"] != tid and r["reward_model"]["ground_truth"] != truth), row)
            self.others[row["extra_info"]["prompt_id"]] = other["reward_model"]["ground_truth"]
        self.calls: Counter = Counter()
        self.unknown = 0

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        found = self.by_ids.get(tuple(prompt_ids))
        if found is None:
            self.unknown += 1
            text = "unknown prompt"
        else:
            k, row = found
            pid, truth = row["extra_info"]["prompt_id"], row["reward_model"]["ground_truth"]
            call = self.calls[pid]
            self.calls[pid] += 1
            if call % 2 == 0:
                text = perfect_answer(truth)
            else:
                text = perfect_answer(self.others[pid]) if k % 2 == 0 else unclosed_answer(truth)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.end]
        return TokenOutput(token_ids=ids, stop_reason="completed")


class _Remote:
    def __init__(self, fn):
        self.remote = fn


class LocalHandle:
    """A RewardLoopWorker where the agent loop expects its Ray actor handle: `.compute_score.remote(data)`.

    The data goes through pickle as Ray serializes an actor call's arguments, so that what the reward manager
    adds to extra_info (num_turns, rollout_reward_scores) stays on its side as it does across processes."""

    def __init__(self, worker):
        self.compute_score = _Remote(lambda data: worker.compute_score(pickle.loads(pickle.dumps(data))))


_workers: dict = {}


def workers(config, tokenizer):
    """verl's AgentLoopWorker and RewardLoopWorker for a config (built once per rollout shape: each loads the
    tokenizer and hydra-instantiates its configs, seconds on CPU)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    key = (config.actor_rollout_ref.rollout.prompt_length, config.actor_rollout_ref.rollout.response_length)
    if key not in _workers:
        policy = ScriptedPolicy(tokenizer)
        reward_worker = RewardLoopWorker(config)
        agent = AgentLoopWorker(config, llm_client=policy, reward_loop_worker_handles=[LocalHandle(reward_worker)])
        _workers[key] = (policy, agent)
    return _workers[key]


def run_verl(config, tokenizer, expected_rows: list[dict], split_files: dict[str, list[str]], rollout: bool = True):
    """verl's dataset → dataloader → agent loop → reward on each split; returns what verl yielded per split."""
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl import DataProto
    from verl.trainer.ppo.utils import create_rl_dataset, create_rl_sampler
    from verl.utils import omega_conf_to_dataclass
    from verl.utils.dataset.rl_dataset import collate_fn
    from verl.utils.ray_utils import get_event_loop

    # The trainer's _init_tokenizer (HFModelConfig: tokenizer and processor), once per run: the model is the same
    # in every build here and loading it takes seconds.
    if "model" not in _workers:
        _workers["model"] = omega_conf_to_dataclass(config.actor_rollout_ref.model)
    model = _workers["model"]
    policy, agent = workers(config, tokenizer) if rollout else (ScriptedPolicy(tokenizer), None)
    policy.serve(expected_rows)
    loop = get_event_loop()

    results = {}
    for split, files in split_files.items():
        is_train = split == "train"
        clock = time.monotonic()
        dataset = create_rl_dataset(
            files, config.data, model.tokenizer, model.processor, is_train=is_train,
            max_samples=config.data.get("train_max_samples" if is_train else "val_max_samples", -1),
        )
        dataset_rows = [dataset[i] for i in range(len(dataset))]
        results[split] = {"dataset_rows": dataset_rows, "output": None, "n": 0, "dataset_s": time.monotonic() - clock}
        clock = time.monotonic()
        if not rollout:
            continue
        # The trainer's loaders differ only in batching (train: train_batch_size with drop_last; validation: the
        # whole set): here batches of 32 with nothing dropped, so that every row is seen.
        sampler = create_rl_sampler(config.data, dataset) if is_train else None
        loader = StatefulDataLoader(dataset=dataset, batch_size=32, num_workers=0, drop_last=False, collate_fn=collate_fn, sampler=sampler, shuffle=None if is_train else False)
        outputs = []
        n = config.actor_rollout_ref.rollout.n if is_train else config.actor_rollout_ref.rollout.val_kwargs.n
        for batch_dict in loader:
            batch = DataProto.from_single_dict(batch_dict)
            batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch))], dtype=object)
            # RayPPOTrainer._get_gen_batch: everything but the reward keys moves to the generation batch, which
            # also gets a copy of the reward keys for the agent loop's streaming reward.
            reward_keys = {"data_source", "reward_model", "extra_info", "uid"} & batch.non_tensor_batch.keys()
            gen = batch.pop(batch_keys=[], non_tensor_batch_keys=list(set(batch.non_tensor_batch) - reward_keys))
            gen.non_tensor_batch.update(batch.non_tensor_batch)
            gen.meta_info["global_steps"] = 1
            if not is_train:
                gen.meta_info["validate"] = True
            gen = gen.repeat(repeat_times=n, interleave=True)
            output = loop.run_until_complete(agent.generate_sequences(gen))
            # The trainer joins the rollout to the batch (union asserts the shared raw_prompt equal).
            outputs.append(batch.repeat(repeat_times=n, interleave=True).union(output))
        results[split].update(output=DataProto.concat(outputs) if outputs else None, n=n, rollout_s=time.monotonic() - clock)
    results["_policy"] = policy
    return results


def expected_for(tokenizer, rows: list[dict]) -> list[dict]:
    """The exported rows (pyarrow) with their chat-template rendering and ids, computed outside verl."""
    for row in rows:
        text = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)
        row["_text"] = text
        row["_ids"] = tokenizer.encode(text, add_special_tokens=False)
    return rows


def compare(expected: dict[str, list[dict]], results: dict, tokenizer, reward, max_prompt_length: int, account_filter: bool = True) -> tuple[list[str], dict]:
    """What verl yielded against the export; returns the problems and counts."""
    problems: list[str] = []
    stats = Counter()
    policy = results["_policy"]
    if policy.unknown:
        problems.append(f"{policy.unknown} rollout(s) asked for a prompt whose ids are not any exported row's chat-template ids")
    # Rows whose prompts render alike, in any split (the policy answers them from one row), and whether their
    # ground truths differ.
    groups: dict[tuple, list[dict]] = {}
    for rows in expected.values():
        for r in rows:
            groups.setdefault(tuple(r["_ids"]), []).append(r)
    shared = {r["extra_info"]["prompt_id"] for g in groups.values() if len(g) > 1 for r in g}
    stats["shared_prompt_rows"] = len(shared)
    stats["shared_prompt_conflicts"] = sum(1 for g in groups.values() if len({r["reward_model"]["ground_truth"] for r in g}) > 1)
    for split, rows in expected.items():
        got = results.get(split)
        if got is None:
            problems.append(f"{split}: verl yielded nothing")
            continue
        by_pid = {r["extra_info"]["prompt_id"]: r for r in rows}
        kept = {pid for pid, r in by_pid.items() if len(r["_ids"]) <= max_prompt_length} if account_filter else set(by_pid)
        stats[f"{split}_filtered"] = len(by_pid) - len(kept)
        # 2. The dataset: one row per kept exported row, the columns unchanged.
        seen = Counter(r["extra_info"]["prompt_id"] for r in got["dataset_rows"])
        missing = kept - set(seen)
        if missing:
            problems.append(f"{split}: {len(missing)} exported row(s) not yielded by RLHFDataset, e.g. {sorted(missing)[:3]}")
        extra = set(seen) - kept
        if extra:
            problems.append(f"{split}: RLHFDataset yielded {len(extra)} row(s) not expected, e.g. {sorted(extra)[:3]}")
        twice = [pid for pid, c in seen.items() if c > 1]
        if twice:
            problems.append(f"{split}: {len(twice)} row(s) yielded twice, e.g. {twice[:3]}")
        for item in got["dataset_rows"]:
            pid = item["extra_info"]["prompt_id"]
            want = by_pid.get(pid)
            if want is None:
                continue
            for key in ("data_source", "ability", "reward_model", "extra_info"):
                if item[key] != want[key]:
                    problems.append(f"{split} {pid}: dataset {key} differs from the export's")
            if item["raw_prompt"] != want["prompt"] or item["prompt"] != want["prompt"]:
                problems.append(f"{split} {pid}: dataset prompt/raw_prompt differs from the export's messages")
        stats[f"{split}_rows"] = len(got["dataset_rows"])
        stats[f"{split}_dataset_s"] = got["dataset_s"]
        stats[f"{split}_rollout_s"] = got.get("rollout_s", 0.0)
        # 3–5. The rollout batch: ids, masks, the pass-through columns and the rewards.
        out = got["output"]
        if out is None:
            continue
        n = got["n"]
        prompts, responses = out.batch["prompts"], out.batch["responses"]
        attention, input_ids, rm_scores = out.batch["attention_mask"], out.batch["input_ids"], out.batch["rm_scores"]
        width = prompts.shape[1]
        answered: dict[str, Counter] = {}
        for i in range(len(out)):
            info = out.non_tensor_batch["extra_info"][i]
            pid = info["prompt_id"]
            want = by_pid.get(pid)
            if want is None:
                problems.append(f"{split} rollout {i}: prompt_id {pid} is not an exported row")
                continue
            where = f"{split} {pid}"
            mask = attention[i, :width].bool()
            ids = prompts[i][mask].tolist()
            # Left padding: the prompt's tokens are the last ones of the prompt block.
            if not mask[width - len(ids) :].all():
                problems.append(f"{where}: prompt not left-padded")
            if ids != want["_ids"]:
                problems.append(f"{where}: verl's prompt ids ({len(ids)}) differ from the chat template's ({len(want['_ids'])})")
            elif tokenizer.decode(ids) != want["_text"]:
                problems.append(f"{where}: verl's prompt ids decode to another text than the chat template's rendering")
            if not input_ids[i, :width].equal(prompts[i]) or not input_ids[i, width:].equal(responses[i]):
                problems.append(f"{where}: input_ids is not prompts + responses")
            for key in ("data_source", "reward_model"):
                if out.non_tensor_batch[key][i] != want[key]:
                    problems.append(f"{where}: rollout batch {key} differs from the export's")
            if info != want["extra_info"]:
                problems.append(f"{where}: rollout batch extra_info differs from the export's")
            # The response and its reward, expected from the row's own ground truth.
            valid = int(attention[i, width:].sum())
            text = tokenizer.decode(responses[i, :valid].tolist(), skip_special_tokens=True)
            truth = want["reward_model"]["ground_truth"]
            if text == perfect_answer(truth):
                variant, score = "perfect", 1.0
            elif text == unclosed_answer(truth):
                variant, score = "unclosed", 0.0
            else:
                variant = "other"
                score = reward.compute_score(want["data_source"], text, truth, dict(want["extra_info"]))["score"]
            answered.setdefault(pid, Counter())[variant] += 1
            got_score = float(rm_scores[i].sum())
            if got_score != score:
                problems.append(f"{where}: verl's reward for the {variant} answer is {got_score}, expected {score}")
            if got_score and rm_scores[i].nonzero().flatten().tolist() != [valid - 1]:
                problems.append(f"{where}: rm_scores not on the last response token")
            if float(out.non_tensor_batch["score"][i]) != got_score:
                problems.append(f"{where}: reward_extra_info score {out.non_tensor_batch['score'][i]} vs rm_scores {got_score}")
            stats[f"{variant}_{'one' if got_score == 1.0 else 'below'}"] += 1
        # Every kept row with a prompt of its own got its perfect answer and, in training (n=2), a broken one.
        for pid in kept - shared:
            counts = answered.get(pid, Counter())
            if counts["perfect"] != 1 or sum(counts.values()) != n:
                problems.append(f"{split} {pid}: answers {dict(counts)}, expected one perfect of {n}")
        stats[f"{split}_rollouts"] = len(out)
    return problems, stats


def build(tokenizer_dir: Path, model_dir: str, files: dict[str, str], tokenizer, extra=(), rollout: bool = True, expected=None):
    """verl run on the export's files: the trainer's train_files = train.parquet, val_files = validation.parquet.
    `expected` (default: the files' rows) is what the policy knows and the comparison wants."""
    splits = {split: [path] for split, path in files.items()}
    config = compose_config(model_dir, tokenizer_dir, splits["train"], splits.get("validation", splits["train"]), list(extra))
    if expected is None:
        expected = {split: expected_for(tokenizer, pq.read_table(path).to_pylist()) for split, path in files.items()}
    log = io.StringIO()
    with contextlib.redirect_stdout(log):  # verl's own prints (dataset sizes, filter progress)
        results = run_verl(config, tokenizer, [r for rows in expected.values() for r in rows], splits, rollout)
    return expected, results


def negative_controls(tokenizer_dir: Path, model_dir: str, source: Path, tokenizer, reward, work: Path) -> list[str]:
    """The same pipeline and comparison on broken inputs must report each break (one verl run on 10 rows)."""
    lines = []
    table = pq.read_table(source).slice(0, 10)
    rows = expected_for(tokenizer, table.to_pylist())
    # max_prompt_length at the 6th shortest prompt: verl's filter must drop the 4 longer ones.
    order = sorted(range(len(rows)), key=lambda k: len(rows[k]["_ids"]))
    limit = len(rows[order[5]]["_ids"])
    predicted = {rows[k]["extra_info"]["prompt_id"] for k in order if len(rows[k]["_ids"]) > limit}
    # A corrupted copy of the kept rows: the shortest gets its action edited, the next one another row's ground
    # truth, the third an extra_info.turn_index changed, the fourth is dropped; the expectation (and what the
    # policy knows) stays the original rows.
    edited, swapped, changed, dropped = order[:4]
    broken = [dict(r) for r in table.to_pylist()]
    prompt = [dict(m) for m in broken[edited]["prompt"]]
    prompt[-1]["content"] += " --edited"
    broken[edited] = dict(broken[edited], prompt=prompt)
    other_truth = next(r["reward_model"]["ground_truth"] for r in rows if r["reward_model"]["ground_truth"] != rows[swapped]["reward_model"]["ground_truth"])
    broken[swapped] = dict(broken[swapped], reward_model=dict(broken[swapped]["reward_model"], ground_truth=other_truth))
    broken[changed] = dict(broken[changed], extra_info=dict(broken[changed]["extra_info"], turn_index=broken[changed]["extra_info"]["turn_index"] + 100))
    del broken[dropped]
    path = work / "corrupted" / "train.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(broken, schema=table.schema), path)
    # rollout.prompt_length stays the README's 8192 (so the rollout workers are the main run's); only the
    # dataset's filter gets the low limit.
    overrides = [f"data.max_prompt_length={limit}", "actor_rollout_ref.rollout.prompt_length=8192"]
    expected, results = build(tokenizer_dir, model_dir, {"train": str(path)}, tokenizer, overrides, expected={"train": rows})
    problems, stats = compare(expected, results, tokenizer, reward, limit)
    text = "\n".join(problems)
    pid = [r["extra_info"]["prompt_id"] for r in rows]
    wanted = {
        "swapped ground truth": f"{pid[swapped]}: dataset reward_model differs",
        "edited action (dataset)": f"{pid[edited]}: dataset prompt/raw_prompt differs",
        "edited action (rendered ids)": f"{pid[edited]}: verl's prompt ids",
        "edited action (policy)": "not any exported row's chat-template ids",
        "changed extra_info": f"{pid[changed]}: dataset extra_info differs",
        "dropped row": f"1 exported row(s) not yielded by RLHFDataset, e.g. ['{pid[dropped]}']",
    }
    for name, needle in wanted.items():
        if needle not in text:
            raise AssertionError(f"negative control: the {name} was not reported (looked for {needle!r}); problems:\n{text}")
    if any(p in text for p in predicted):
        raise AssertionError(f"negative control: rows verl filters as overlong (max_prompt_length={limit}) were reported although accounted for:\n{text}")
    yielded = {r["extra_info"]["prompt_id"] for r in results["train"]["dataset_rows"]}
    if yielded & predicted or len(yielded) != len(rows) - len(predicted) - 1:
        raise AssertionError(f"negative control: verl's filter kept {sorted(yielded)}, predicted to drop {sorted(predicted)}")
    lines.append(f"a corrupted copy: {len(problems)} problems reported, among them each of the {len(wanted)} breaks")
    unaccounted, _ = compare(expected, results, tokenizer, reward, 10**9)
    if f"{len(predicted) + 1} exported row(s) not yielded" not in "\n".join(unaccounted):
        raise AssertionError("negative control: rows filtered as overlong were not reported when not accounted for")
    lines.append(f"max_prompt_length={limit}: verl's filter dropped exactly the {len(predicted)} longer prompts predicted; reported missing when not accounted for")
    # The pre-0.9 spelling of the reward keys is ignored by verl 0.9's loader (the README's reason for reward.*).
    from verl.trainer.ppo.reward import get_custom_reward_fn

    legacy = compose_config(model_dir, tokenizer_dir, [str(path)], [str(path)], [f"custom_reward_function.path={REWARD_PATH}", "custom_reward_function.name=compute_score", "reward.custom_reward_function.path=null"])
    if get_custom_reward_fn(legacy) is not None:
        raise AssertionError("negative control: verl 0.9 loaded the reward from the top-level custom_reward_function key")
    if get_custom_reward_fn(compose_config(model_dir, tokenizer_dir, [str(path)], [str(path)])) is None:
        raise AssertionError("negative control: verl 0.9 did not load the reward from reward.custom_reward_function")
    # Without it verl falls back to its built-in scores, which know no lwm-data data source.
    from verl.utils.reward_score import default_compute_score

    try:
        default_compute_score(rows[0]["data_source"], perfect_answer("x"), "x", {})
        raise AssertionError(f"negative control: verl's built-in reward scored {rows[0]['data_source']}")
    except NotImplementedError:
        pass
    lines.append(
        "custom_reward_function.path at the top level (the pre-0.9 spelling): not loaded by verl 0.9 (its built-in reward "
        f"raises NotImplementedError for {rows[0]['data_source']}), reward.custom_reward_function.path is"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("verl_dirs", type=Path, nargs="+", help="folders of `export rl --format verl` (<split>.parquet)")
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--skip-controls", action="store_true", help="leave out the negative controls")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(str(args.tokenizer_dir))
    reward = load_reward()
    work = Path(_cache)
    # A model folder without weights: verl's HFModelConfig reads config.json (model_type picks the Qwen3
    # Continuous Token builder), the tokenizer comes from tokenizer_path.
    model_dir = work / "model"
    Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=16, architectures=["Qwen3ForCausalLM"]).save_pretrained(model_dir)

    failures = []
    for folder in args.verl_dirs:
        files = {p.stem: str(p) for p in sorted(folder.glob("*.parquet"))}
        if "train" not in files:
            failures.append(f"{folder}: no train.parquet")
            continue
        expected, results = build(args.tokenizer_dir, str(model_dir), files, tokenizer)
        problems, stats = compare(expected, results, tokenizer, reward, 8192)
        if problems:
            failures.append(f"{folder}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:30]))
            continue
        splits = ", ".join(
            f"{s} {stats[f'{s}_rows']} rows ({stats[f'{s}_filtered']} overlong; RLHFDataset {stats[f'{s}_dataset_s']:.0f} s) → "
            f"{stats[f'{s}_rollouts']} rollouts ({stats[f'{s}_rollout_s']:.0f} s)"
            for s in files
        )
        print(
            f"check_verl: {folder}: {splits}; rewards through verl: perfect 1 on all {stats['perfect_one']}, unclosed 0 on all "
            f"{stats['unclosed_below']}, another observation below 1 on {stats['other_below']} of {stats['other_below'] + stats['other_one']}; "
            f"{stats['shared_prompt_rows']} rows share their prompt with another row ({stats['shared_prompt_conflicts']} such prompts with different ground truths)"
        )
    if not args.skip_controls and not failures:
        first = args.verl_dirs[0] / "train.parquet"
        for line in negative_controls(args.tokenizer_dir, str(model_dir), first, tokenizer, reward, work):
            print(f"check_verl: negative control: {line}")
    if failures:
        print("check_verl: FAILED\n" + "\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"check_verl: passed (verl {verl.__version__}, {time.monotonic() - STARTED:.0f} s)")


if __name__ == "__main__":
    main()
