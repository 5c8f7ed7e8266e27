"""`export rl --format openrlhf` through OpenRLHF's own code (OpenRLHF 0.11.2, in .venv-openrlhf).

    .venv-openrlhf/bin/python test/python/check_openrlhf.py EXPORT_DIR --tokenizer-dir DIR [--readme README.md]

EXPORT_DIR holds `<split>.jsonl` from `lwm-data export rl … --format openrlhf`. What runs is OpenRLHF's:

1. Arguments: the documented `python3 -m openrlhf.cli.train_ppo_ray …` command line (DOCUMENTED below, or
   with --readme the one in README.md's "RL: verl and OpenRLHF") goes through train_ppo_ray's own
   argument parser and checks (its `if __name__ == "__main__":` block, with `train` replaced by a function
   that keeps the arguments; the module's top, which imports ray and vLLM, is not run). The flags that
   matter here: --data.prompt_dataset, --data.input_key input, --data.label_key label,
   --data.apply_chat_template, --data.max_len, --rollout.max_new_tokens, --reward.remote_url, and
   --actor.model_name_or_path (the Qwen3 tokenizer folder stands in for a checkpoint: only its tokenizer
   is loaded). OpenRLHF 0.11 renamed its flags (--prompt_data → --data.prompt_dataset, …): the older
   spellings are shown to be rejected.
2. Rows: as trainer/ppo_trainer.py's prepare_datasets does: get_strategy(args) (DeepspeedStrategy),
   get_tokenizer(args.actor.model_name_or_path, …), blending_datasets(args.data.prompt_dataset, …),
   PromptDataset(…, input_template=args.data.input_template) and strategy.setup_dataloader(…) with
   PromptDataset.collate_fn; a `validation.jsonl` goes through the eval branch (--eval.dataset). Every
   (datasource, prompt, label) the dataloader yields must be a line of the export: the prompt equal to
   transformers' apply_chat_template(messages, add_generation_prompt=True) of the line's `input` as json
   reads it, the label the line's `label` string byte for byte, as many rows as lines (none dropped,
   none repeated).
3. Reward: utils/agent.py's SingleTurnAgentExecutor(args.reward.remote_url) loads `reward_func` from
   python/lwm_reward/reward.py (OpenRLHF's own loader), and its execute() runs each yielded row the way a
   rollout does: prompt tokenized, the policy's tokens appended, the whole decoded with special tokens,
   reward_func(queries, prompts, labels) called. Only the inference engine is a stand-in (vLLM needs a
   GPU): it "generates" a given answer's tokens and <|im_end|>. Perfect answers (the README's form:
   <think>…</think> then <predicted_observation> with the ground truth) must get reward 1 on every row;
   broken ones (no tags, an unclosed block, another turn's observation) exactly python/lwm_reward's
   compute_score of the same text, which is lower (0) wherever the verifier rejects them.

Negative controls, run here: a doctored copy of the export (a row dropped, a label and a message changed)
must fail the row comparison; a message holding the text `<image>` (which OpenRLHF's preprocess_data turns
into an image placeholder) must fail it too; the pre-0.11 flag names must be rejected by the parser; and
the reward path with train_ppo_ray's default --data.max_len (2048), which cuts long prompts, must lose the
perfect answers' reward — so the check would notice a truncated prompt.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import json
import os
import re
import shlex
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets  # noqa: E402

datasets.disable_progress_bars()

ROOT = Path(__file__).resolve().parents[2]

# The documented command (docs/exports.md "RL: verl and OpenRLHF"); out/rl/openrlhf/ stands for the export folder,
# the placeholder for a checkpoint. --data.max_len: train_ppo_ray's default, 2048, is below the longest demo
# prompts (about 4,700 tokens), and OpenRLHF cuts a prompt longer than max_len − max_new_tokens from the left.
DOCUMENTED = r"""python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path <your SFT checkpoint> \
  --data.prompt_dataset out/rl/openrlhf/train.jsonl --eval.dataset out/rl/openrlhf/validation.jsonl \
  --data.input_key input --data.label_key label --data.apply_chat_template \
  --data.max_len 12288 --rollout.max_new_tokens 4096 \
  --reward.remote_url python/lwm_reward/reward.py …"""
# What OpenRLHF before 0.11 took (and the README said): 0.11 must refuse them rather than ignore them.
OLD_FLAGS = "--pretrain CKPT --prompt_data data.jsonl --input_key input --label_key label --apply_chat_template --remote_rm_url reward.py"

failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


# ---------------------------------------------------------------------------------------------------------
# OpenRLHF's command line, parsed by its own parser


def command_argv(command: str, export: Path, checkpoint: Path) -> list[str]:
    """The flags of a `python3 -m openrlhf.cli.train_ppo_ray …` command, with the README's placeholders
    bound: the checkpoint, out/rl/openrlhf/ → the export folder (a flag whose file the export lacks, such
    as validation.jsonl without a validation split, is left out)."""
    command = re.sub(r"\\\n", " ", command).replace("…", " ")
    command = re.sub(r"<[^<>]*checkpoint[^<>]*>", shlex.quote(str(checkpoint)), command)
    words = shlex.split(command)
    words = words[words.index("openrlhf.cli.train_ppo_ray") + 1 :]
    argv: list[str] = []
    k = 0
    while k < len(words):
        word = words[k]
        value = words[k + 1] if k + 1 < len(words) and not words[k + 1].startswith("--") else None
        if value is not None and value.startswith("out/rl/openrlhf/"):
            value = str(export / value.removeprefix("out/rl/openrlhf/"))
            if not Path(value).exists():
                k += 2
                continue
        argv += [word] if value is None else [word, value]
        k += 1 if value is None else 2
    return argv


def openrlhf_args(argv: list[str]):
    """train_ppo_ray's arguments as its own __main__ block builds them (parser, hierarchize, checks)."""
    import openrlhf.cli

    source_path = Path(openrlhf.cli.__file__).with_name("train_ppo_ray.py")
    tree = ast.parse(source_path.read_text(), str(source_path))
    main_blocks = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    assert len(main_blocks) == 1, f"{source_path}: no single `if __name__ == '__main__':` block"
    body = main_blocks[0].body
    last = ast.unparse(body[-1])
    # The block ends by starting training: that call gets a function that keeps the arguments instead.
    assert last == "train(args)", f"{source_path}: its __main__ block ends with {last!r}, not train(args)"
    kept = {}
    namespace = {"__name__": "train_ppo_ray_main", "argparse": argparse, "os": os, "train": lambda args: kept.setdefault("args", args)}
    namespace["datetime"] = __import__("datetime").datetime
    saved = sys.argv
    sys.argv = ["train_ppo_ray.py", *argv]
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), str(source_path), "exec"), namespace)
    finally:
        sys.argv = saved
    return kept["args"]


def rejects(argv: list[str]) -> bool:
    """Whether train_ppo_ray's parser refuses these flags (argparse exits with status 2)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            openrlhf_args(argv)
    except SystemExit as exit:
        return exit.code == 2
    return False


# ---------------------------------------------------------------------------------------------------------
# The strategy: DeepspeedStrategy, whose module imports openrlhf.models


@contextlib.contextmanager
def flash_attn_stub():
    """openrlhf.models.ring_attn_utils imports flash_attn at module level (for ring attention and packed
    training); openrlhf.utils.deepspeed imports openrlhf.models, so DeepspeedStrategy cannot be imported
    without it. flash-attn cannot be installed on a CPU machine (it compiles CUDA kernels). Nothing on the
    path this check runs (strategy construction, setup_dataloader) calls those functions: they are stubs
    that raise if anything does. The stub lives in sys.modules only while openrlhf.utils.deepspeed is
    imported, so nothing else (transformers' availability checks) sees a fake flash_attn."""
    if importlib.util.find_spec("flash_attn") is not None:
        yield  # the real one (a GPU machine)
        return

    def unavailable(*_args, **_kwargs):
        raise RuntimeError("flash_attn is a stub in check_openrlhf.py: this path was not expected to use it")

    names = {
        "flash_attn": {},
        "flash_attn.bert_padding": dict.fromkeys(["index_first_axis", "pad_input", "rearrange", "unpad_input"], unavailable),
        "flash_attn.utils": {},
        "flash_attn.utils.distributed": {"all_gather": unavailable},
    }
    # transformers asks importlib whether flash_attn exists while OpenRLHF's imports load it: its own checks
    # run first, without the stub; a stub module then has a spec but no file or version, which transformers
    # reads as "not installed" (the truth).
    import transformers.activations  # noqa: F401
    import transformers.modeling_flash_attention_utils  # noqa: F401

    for name, attributes in names.items():
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        module.__dict__.update(attributes)
        sys.modules[name] = module
    try:
        yield
    finally:
        for name in names:
            sys.modules.pop(name, None)


# ---------------------------------------------------------------------------------------------------------
# Rows


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def prepare_dataloaders(args, strategy, tokenizer):
    """trainer/ppo_trainer.py prepare_datasets, as 0.11.2 writes it: that module imports ray and vLLM, so
    its calls are made here in the same order with the same arguments."""
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets

    # blending_datasets prints the datasets, PromptDataset shows a progress bar, the dataloader warns that
    # there is no accelerator to pin memory on.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        train_data = blending_datasets(
            args.data.prompt_dataset,
            args.data.prompt_probs,
            strategy,
            args.train.seed,
            max_count=args.data.max_samples,
            dataset_split=args.data.prompt_split,
        )
        train_data = train_data.select(range(min(args.data.max_samples, len(train_data))))
        prompts_dataset = PromptDataset(train_data, tokenizer, strategy, input_template=args.data.input_template)
        prompts_dataloader = strategy.setup_dataloader(
            prompts_dataset, 1, True, True, prompts_dataset.collate_fn, num_workers=args.data.dataloader_num_workers
        )
        eval_dataloader = None
        if getattr(args.eval, "dataset", None):
            eval_data = blending_datasets(args.eval.dataset, None, strategy, dataset_split=args.eval.split)
            eval_data = eval_data.select(range(min(args.data.max_samples, len(eval_data))))
            eval_dataset = PromptDataset(eval_data, tokenizer, strategy, input_template=args.data.input_template)
            eval_dataloader = strategy.setup_dataloader(
                eval_dataset, 1, True, False, eval_dataset.collate_fn, num_workers=args.data.dataloader_num_workers
            )
    return prompts_dataloader, eval_dataloader


def yielded_rows(dataloader) -> list[tuple[str, str, str]]:
    rows = []
    for datasources, prompts, labels, images in dataloader:
        for row in zip(datasources, prompts, labels, images):
            rows.append(row[:3])
            check(row[3] is None, f"a row came with images {row[3]!r}")
    return rows


def compare_rows(where: str, yielded: list[tuple[str, str, str]], lines: list[dict], tokenizer) -> list[str]:
    """Problems between what OpenRLHF yielded and the export's lines (as a multiset: the dataloader
    shuffles). Expected prompt: the chat template's rendering of the line's messages, read with json."""
    problems = []
    expected = Counter()
    for line in lines:
        prompt = tokenizer.apply_chat_template(line["input"], add_generation_prompt=True, tokenize=False)
        expected[(line["datasource"], prompt, line["label"])] += 1
    got = Counter(yielded)
    if sum(got.values()) != len(lines):
        problems.append(f"{where}: OpenRLHF yielded {sum(got.values())} rows, the export has {len(lines)} lines")
    by_label = {label: (source, prompt) for (source, prompt, label) in expected}
    for source, prompt, label in (got - expected):
        if label not in by_label:
            problems.append(f"{where}: a yielded label is no line's label: {label[:80]!r}…")
            continue
        want_source, want_prompt = by_label[label]
        if prompt != want_prompt:
            at = next((k for k, (a, b) in enumerate(zip(prompt, want_prompt)) if a != b), min(len(prompt), len(want_prompt)))
            problems.append(f"{where}: prompt differs from the chat template's rendering at char {at}: {prompt[at : at + 60]!r} vs {want_prompt[at : at + 60]!r}")
        if source != want_source:
            problems.append(f"{where}: datasource {source!r}, the line's is {want_source!r}")
    for row, count in (expected - got).items():
        problems.append(f"{where}: {count} line(s) not yielded (label {row[2][:60]!r}…)")
    return problems


# ---------------------------------------------------------------------------------------------------------
# Reward


def perfect_answer(ground_truth: str) -> str:
    return f"<think>\nThe history shows what the environment holds, so this follows.\n</think>\n\n<predicted_observation>\n{ground_truth}\n</predicted_observation>"


class ScriptedEngine:
    """Stands in for OpenRLHF's vLLM engine (trainer/ray/vllm_engine.py generate(), which needs a GPU):
    returns a vLLM-like RequestOutput whose tokens are the given answer and the end of turn, as a policy
    that stops on <|im_end|> would produce."""

    def __init__(self, token_ids: list[int]):
        self.token_ids = token_ids
        self.prompt_token_ids: list[int] | None = None

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.prompt_token_ids = list(prompt_token_ids)
        output = types.SimpleNamespace(token_ids=self.token_ids, text=None, finish_reason="stop", logprobs=None)
        return types.SimpleNamespace(outputs=[output])


def rollout_reward(executor, tokenizer, prompt: str, label: str, answer: str, args):
    """SingleTurnAgentExecutor.execute on one row with the policy answering `answer`: (reward, prompt
    token ids the engine got)."""
    ids = tokenizer(text=answer + "<|im_end|>", add_special_tokens=False)["input_ids"]
    engine = ScriptedEngine(ids)
    # The sampling parameters execute() reads (vLLM SamplingParams in training: max_tokens, logprobs).
    sampling = types.SimpleNamespace(max_tokens=args.rollout.max_new_tokens, logprobs=None)
    output = asyncio.run(
        executor.execute(prompt, label, sampling, args.data.max_len, hf_tokenizer=tokenizer, llm_engine=engine)
    )
    reward = output["reward"]
    return (None if reward is None else float(reward.reshape(-1)[0])), engine.prompt_token_ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path, help="folder of `export rl --format openrlhf`")
    parser.add_argument("--tokenizer-dir", type=Path, required=True, help="stands in for the SFT checkpoint")
    parser.add_argument("--readme", type=Path, help="take the train_ppo_ray command from README.md instead of DOCUMENTED")
    options = parser.parse_args()
    export = options.export.resolve()
    checkpoint = options.tokenizer_dir.resolve()

    command = DOCUMENTED
    if options.readme:
        text = options.readme.read_text()
        section = text[text.index("## RL: verl and OpenRLHF") :]
        section = section[: section.find("\n## ", 1)]
        blocks = [b for b in re.findall(r"```bash\n(.*?)```", section, re.DOTALL) if "openrlhf.cli.train_ppo_ray" in b]
        assert blocks, f"{options.readme}: no ```bash block with openrlhf.cli.train_ppo_ray under 'RL: verl and OpenRLHF'"
        command = blocks[0][blocks[0].index("python3 -m openrlhf.cli.train_ppo_ray") :]

    os.chdir(ROOT)  # the documented command runs from the project root (python/lwm_reward/reward.py)
    from openrlhf.utils import get_strategy, get_tokenizer
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    with flash_attn_stub():
        import openrlhf.utils.deepspeed  # noqa: F401  (get_strategy imports it; see flash_attn_stub)

    sys.path.insert(0, str(ROOT / "python"))
    from lwm_reward import compute_score, verify

    # 1. Arguments, through train_ppo_ray's parser.
    argv = command_argv(command, export, checkpoint)
    with contextlib.redirect_stdout(io.StringIO()):  # its checks print recommendations
        try:
            args = openrlhf_args(argv)
        except SystemExit:
            sys.exit(f"check_openrlhf: train_ppo_ray's parser rejects the command's flags: {argv} (argparse's message above)")
    check(args.data.apply_chat_template and args.data.input_key == "input" and args.data.label_key == "label", f"arguments: {vars(args.data)}")
    check(isinstance(args.reward.remote_url, list) and args.reward.remote_url[0].endswith(".py"), f"--reward.remote_url is {args.reward.remote_url}")
    # Negative control: the pre-0.11 flag names (the README's until now) are refused, not silently ignored.
    check(rejects(OLD_FLAGS.split()), "train_ppo_ray accepted the pre-0.11 flags (--prompt_data, --input_key, --remote_rm_url, …)")

    # 2. Rows, through OpenRLHF's dataset code.
    strategy = get_strategy(args)
    tokenizer = get_tokenizer(args.actor.model_name_or_path, None, "left", strategy, use_fast=not args.data.disable_fast_tokenizer)
    train_loader, eval_loader = prepare_dataloaders(args, strategy, tokenizer)
    splits = {"train": (Path(args.data.prompt_dataset), train_loader)}
    if eval_loader is not None:
        splits["validation"] = (Path(args.eval.dataset), eval_loader)
    files = sorted(p.name for p in export.glob("*.jsonl") if p.name != "refused.jsonl")
    check(files == sorted(p.name for p, _ in splits.values()), f"{export}: split files {files}, the command reads {[p.name for p, _ in splits.values()]}")

    all_rows: list[tuple[str, str, str]] = []
    total_lines = 0
    for split, (path, loader) in splits.items():
        lines = read_lines(path)
        total_lines += len(lines)
        check(len(lines) > 0, f"{path}: empty")
        rows = yielded_rows(loader)
        failures.extend(compare_rows(path.name, rows, lines, tokenizer))
        all_rows += rows

    # Negative controls for the comparison, through the same OpenRLHF path: a doctored export.
    train_lines = read_lines(splits["train"][0])
    control_outcomes: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        doctored = [dict(line) for line in train_lines[1:]]  # the first line dropped
        doctored[0]["label"] = doctored[0]["label"].replace('"ground_truth":"', '"ground_truth":"X', 1)
        doctored[1]["input"] = [dict(m) for m in doctored[1]["input"]]
        doctored[1]["input"][-1]["content"] += " "
        imaged = [dict(line) for line in train_lines]
        imaged[0]["input"] = [dict(m) for m in imaged[0]["input"]]
        imaged[0]["input"][-1]["content"] = "cat page.html | grep '<image>'"
        # A message holding `<image>`: preprocess_data turns it into [{"type": "image"}, {"type": "text", …}],
        # which Qwen3's text template cannot render (it calls content.startswith): OpenRLHF raises.
        controls = [("doctored", doctored, ("yielded", "not yielded", "prompt differs")), ("image-tag", imaged, ("OpenRLHF raised|prompt differs",))]
        for name, broken, expect in controls:
            path = Path(scratch) / f"{name}.jsonl"
            path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in broken), encoding="utf-8")
            with contextlib.redirect_stdout(io.StringIO()):
                control_args = openrlhf_args(command_argv(command, export, checkpoint) + ["--data.prompt_dataset", str(path)])
            try:
                control_loader, _ = prepare_dataloaders(control_args, strategy, tokenizer)
                problems = compare_rows(name, yielded_rows(control_loader), train_lines, tokenizer)
            except Exception as error:  # noqa: BLE001 (any failure of OpenRLHF's path is the control's outcome)
                problems = [f"{name}: OpenRLHF raised {type(error).__name__}: {error}"]
            for kind in expect:
                check(any(re.search(kind, p) for p in problems), f"negative control {name}: the comparison did not report {kind!r}: {problems[:4]}")
            control_outcomes[name] = problems

    # 3. Reward, through OpenRLHF's reward-function loader and rollout executor.
    with contextlib.redirect_stderr(io.StringIO()):
        executor = SingleTurnAgentExecutor(args.reward.remote_url)
    check(executor.reward_func is not None and Path(executor.reward_func.__code__.co_filename).resolve() == ROOT / "python/lwm_reward/reward.py", "SingleTurnAgentExecutor did not load python/lwm_reward/reward.py's reward_func")
    truths = [json.loads(label)["ground_truth"] for _, _, label in all_rows]
    perfect_ok = 0
    broken_scores: Counter = Counter()
    rejected_wrong = 0
    longest = max(range(len(all_rows)), key=lambda k: len(all_rows[k][1]))
    for k, (source, prompt, label) in enumerate(all_rows):
        info = json.loads(label)
        truth = info["ground_truth"]
        reward, prompt_ids = rollout_reward(executor, tokenizer, prompt, label, perfect_answer(truth), args)
        check(prompt_ids == tokenizer(text=prompt, add_special_tokens=False)["input_ids"], f"row {k}: the engine got a cut or altered prompt")
        check(reward == 1.0, f"row {k} ({source}): the perfect answer gets reward {reward} through OpenRLHF's executor")
        perfect_ok += reward == 1.0
        other = next((t for t in truths[k + 1 :] + truths[:k] if t != truth), None)
        broken = {
            "no tags": truth,
            "unclosed": perfect_answer(truth).removesuffix("</predicted_observation>"),
            "another turn's observation": perfect_answer(other) if other is not None else None,
        }
        for kind, answer in broken.items():
            if answer is None:
                continue
            reward, _ = rollout_reward(executor, tokenizer, prompt, label, answer, args)
            want = compute_score(source, answer, truth, info["extra_info"])["score"]
            check(reward == want, f"row {k} ({source}): {kind} gets reward {reward} through OpenRLHF, compute_score gives {want}")
            if kind == "another turn's observation":
                passed = verify(info["extra_info"]["domain"], answer, truth, info["extra_info"])["passed"]
                check(want == (1.0 if passed else 0.0), f"row {k} ({source}): {kind}: reward {want}, the verifier says passed={passed}")
                rejected_wrong += not passed
            else:
                check(want == 0.0, f"row {k} ({source}): {kind} gets {want}, not 0")
            broken_scores[(kind, reward)] += 1
    check(rejected_wrong > 0, "no wrong observation was rejected")
    # Negative control: with train_ppo_ray's defaults (--data.max_len 2048, --rollout.max_new_tokens unset),
    # OpenRLHF cuts the longest prompt from the left; the reward then sees no clean response and the perfect
    # answer loses its reward. The check above would see that.
    with contextlib.redirect_stdout(io.StringIO()):
        defaults = openrlhf_args(
            ["--actor.model_name_or_path", str(checkpoint), "--data.prompt_dataset", args.data.prompt_dataset, "--reward.remote_url", args.reward.remote_url[0]]
        )
    source, prompt, label = all_rows[longest]
    with contextlib.redirect_stderr(io.StringIO()):
        cut_reward, cut_ids = rollout_reward(executor, tokenizer, prompt, label, perfect_answer(truths[longest]), defaults)
    prompt_tokens = len(tokenizer(text=prompt, add_special_tokens=False)["input_ids"])
    check(prompt_tokens > defaults.data.max_len, f"negative control (cut prompt): the longest prompt has {prompt_tokens} tokens, not over the default max_len {defaults.data.max_len}")
    check(len(cut_ids) < prompt_tokens and cut_reward == 0.0, f"negative control (cut prompt): {len(cut_ids)} of {prompt_tokens} prompt tokens, reward {cut_reward}")

    if failures:
        print(f"check_openrlhf: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    version = importlib.metadata.version("openrlhf")
    print(
        f"check_openrlhf: OpenRLHF {version}: {len(all_rows)} rows from {total_lines} lines "
        f"({', '.join(f'{s} {len(read_lines(p))}' for s, (p, _) in splits.items())}) through train_ppo_ray's parser, "
        f"blending_datasets, PromptDataset (apply_chat_template) and setup_dataloader, each equal to its line; "
        f"reward_func via SingleTurnAgentExecutor: {perfect_ok} perfect answers 1, broken ones "
        f"{dict(sorted((f'{k}={v}', n) for (k, v), n in broken_scores.items()))} as compute_score; "
        f"negative controls caught: doctored rows ({len(control_outcomes['doctored'])} problems), `<image>` in a message "
        f"({control_outcomes['image-tag'][0][:90]}…), pre-0.11 flags rejected, a prompt cut at the default max_len scores {cut_reward}"
    )


if __name__ == "__main__":
    main()
