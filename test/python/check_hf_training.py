"""Hugging Face transformers, Trainer and TRL's SFTTrainer on lwm-data shards, through their own code.

    python test/python/check_hf_training.py PACKED_DIR UNPACKED_DIR --tokenizer-dir DIR [--readme README.md]

The model is a tiny random-initialised transformers Qwen3 (2 layers, hidden 64). Its vocabulary is
compacted: a forward pre-hook maps the real token ids the model is given (input_ids and labels) to
the ~2,000 distinct ids of the two outputs, so logits stay small on a CPU (151,936-entry logits over
a 4k-token row took 10 GB and a minute a step on the 2-core build machine). Everything before the
model (datasets, collators, label building, Trainer and TRL) runs on the real ids, and the hook
records what the model receives before mapping.

1. `model(**packed_collate([row]), use_cache=False)` (notebooks/lwm_collate.py) over every packed
   row of several documents in PACKED_DIR with attn_implementation "sdpa", and over the shortest
   with "eager" and "flex_attention" (its eager path: compiling the kernel takes minutes on this CPU,
   and flex has no backward on CPU): every document's logits and summed loss equal the same
   document run alone, and the model's own loss over the batch equals the documents' losses alone.
   A model configured with use_cache=False isolates with the plain `model(**batch)`. Negative
   controls, each shown to be detected as leaking: the default call, in eval and in train mode (a
   cache is created, so transformers never looks for packed documents; with every attention), and
   with sdpa: position_ids that do not restart (a collate that ignores documents), an all-ones
   attention_mask next to position_ids, and cu_seq_lens_* without position_ids (sdpa ignores them).
2. Trainer: padded (PadCollator over UNPACKED_DIR) and packed (PackedCollator over PACKED_DIR, with
   model.config.use_cache=False), a few optimiser steps each. The labels the model receives in
   every step, and those of every batch of the trainer's own train dataloader, equal the Parquet
   rows token for token (pyarrow): the token where loss_mask is 1, -100 where it is 0, at every
   document start of a packed row and on padding. In the packed run, a hook on the backbone runs
   every document of each step alone and compares hidden states (documents taken from the Parquet
   rows' cu_seqlens, not from what the model was given). Controls: a collator that ignores the mask
   (transformers' DataCollatorForLanguageModeling, mlm=False) is caught by the label comparison;
   the packed run with the config's default use_cache=True is caught leaking; the default
   remove_unused_columns=True drops loss_mask before the collate.
3. TRL SFTTrainer: padded (loss_mask renamed to TRL's `assistant_masks`) and padding-free over the
   packed rows (`assistant_masks` + `seq_lengths` = the documents' lengths, padding_free=True,
   max_length=None), the same label and isolation comparisons. Controls: the shards' own
   `loss_mask` column (not renamed) is ignored by TRL and caught by the label comparison; packed
   rows without `seq_lengths` are caught leaking.
4. `--readme README.md`: docs/packing-and-trainers.md "Hugging Face Trainer and TRL"'s snippet runs as written (the tiny
   model for the pretrained one, one step per trainer), and every call it makes gets the Parquet
   rows' labels and keeps packed documents apart.
Losses must be finite; no speed is asserted.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import math
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import torch
import torch.nn.attention.flex_attention

# Trainer and TRL compile nothing here; flex_attention's compiled CPU kernel takes minutes to build on
# the build machine, so it runs its eager path (the same BlockMask and mask_mod, unfused; no backward,
# which flex lacks on CPU anyway).
torch._dynamo.config.disable = True
torch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True

import transformers  # noqa: E402
import trl  # noqa: E402
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM, Trainer, TrainingArguments  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
import lwm_collate  # noqa: E402

transformers.logging.set_verbosity_error()
datasets.disable_progress_bars()
warnings.filterwarnings("ignore")

failures: list[str] = []
CACHE = tempfile.mkdtemp(prefix="lwm-hf-training-")
atexit.register(shutil.rmtree, CACHE, ignore_errors=True)
LOGITS_TOL = 1e-4  # float32: a kernel's masked vs causal path differ by ~1e-6; a leak by ~0.1 or more
LEAK = 1e-2  # a negative control must differ by more than this somewhere


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)
        print(f"  FAIL: {message}", file=sys.stderr)


# --- The reference: the Parquet rows, read with pyarrow --------------------------------------------


class Rows:
    """Every row of the outputs' shards, found again by its tokens."""

    def __init__(self, *outs: Path):
        self.rows = []
        for path in [p for out in outs for p in sorted((out / "data").glob("*.parquet"))]:
            table = pq.read_table(path)
            names = table.column_names
            for record in table.to_pylist():
                ids = np.asarray(record["input_ids"], dtype=np.int64)
                cu = np.asarray(record["cu_seqlens"], dtype=np.int64) if "cu_seqlens" in names else np.asarray([0, len(ids)])
                mask = np.asarray(record["loss_mask"], dtype=np.int64)
                labels = np.where(mask == 1, ids, -100)
                # Padding-free batches: a document's first token is never a target either (lwm-data
                # masks it anyway, so both rules give the same labels on its outputs).
                flat = labels.copy()
                flat[cu[:-1]] = -100
                self.rows.append({"ids": ids, "mask": mask, "cu": cu, "labels": labels, "flat_labels": flat, "split": path.name.split("-")[0]})
        self.by_prefix: dict[tuple, list[int]] = {}
        for k, row in enumerate(self.rows):
            self.by_prefix.setdefault(tuple(row["ids"][:8].tolist()), []).append(k)

    def match(self, tokens: np.ndarray, offset: int) -> tuple[int | None, str]:
        """The row whose tokens start at `offset` of `tokens`."""
        found = [k for k in self.by_prefix.get(tuple(tokens[offset : offset + 8].tolist()), []) if np.array_equal(tokens[offset : offset + len(self.rows[k]["ids"])], self.rows[k]["ids"])]
        if not found:
            return None, f"tokens at {offset} are no Parquet row (truncated or altered)"
        # The longest match (a packed row starts with an unpacked row's document); identical rows are
        # fine when their masks and boundaries are too, and count once.
        longest = max(len(self.rows[k]["ids"]) for k in found)
        found = [k for k in found if len(self.rows[k]["ids"]) == longest]
        if len({(self.rows[k]["flat_labels"].tobytes(), self.rows[k]["cu"].tobytes()) for k in found}) > 1:
            return None, f"tokens at {offset} match {len(found)} Parquet rows with different masks"
        return min(found), ""

    def parse_flat(self, tokens: np.ndarray) -> tuple[list[int], str]:
        """A padding-free batch (1, T) as the Parquet rows it concatenates."""
        offset, found = 0, []
        while offset < len(tokens):
            k, why = self.match(tokens, offset)
            if k is None:
                return found, why
            found.append(k)
            offset += len(self.rows[k]["ids"])
        return found, ""


def label_mismatches(received: dict, rows: Rows) -> tuple[list[str], set[int]]:
    """Compares a batch's labels with the Parquet rows: token where loss_mask is 1, -100 elsewhere,
    at every document start, and on padding. Returns problems and the rows seen."""
    problems, seen = [], set()
    ids, labels = received["input_ids"].numpy(), received["labels"].numpy()
    if ids.shape != labels.shape:
        return [f"labels {labels.shape} vs input_ids {ids.shape}"], seen
    attention = received.get("attention_mask")
    flat = attention is None and ids.shape[0] == 1
    if flat:
        found, why = rows.parse_flat(ids[0])
        if why:
            problems.append(why)
        want = np.concatenate([rows.rows[k]["flat_labels"] for k in found]) if found else np.zeros(0, dtype=np.int64)
        got = labels[0, : len(want)]
        if len(want) == ids.shape[1] and not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            problems.append(f"{len(bad)} of {len(want)} labels differ from the Parquet rows (first at {bad[0]}: {got[bad[0]]} vs {want[bad[0]]})")
        seen.update(found)
        return problems, seen
    for r in range(ids.shape[0]):
        n = int(attention[r].sum()) if attention is not None else ids.shape[1]
        k, why = rows.match(ids[r, :n], 0)
        if k is None or len(rows.rows[k]["ids"]) != n:
            problems.append(f"row {r}: {why or 'only a prefix of a Parquet row'}")
            continue
        want = np.concatenate([rows.rows[k]["labels"], np.full(ids.shape[1] - n, -100)])
        if not np.array_equal(labels[r], want):
            bad = np.flatnonzero(labels[r] != want)
            problems.append(f"row {r}: {len(bad)} of {ids.shape[1]} labels differ from the Parquet row (first at {bad[0]}: {labels[r, bad[0]]} vs {want[bad[0]]})")
        seen.add(k)
    return problems, seen


# --- The model: a tiny Qwen3 whose vocabulary is compacted by a pre-hook ----------------------------


class Vocab:
    """Bijection from the real ids that occur to 0..n-1."""

    def __init__(self, ids: set[int]):
        real = torch.tensor(sorted(ids))
        self.table = torch.full((int(real.max()) + 1,), -1, dtype=torch.long)
        self.table[real] = torch.arange(len(real))
        self.size = -(-len(real) // 64) * 64

    def __call__(self, ids: torch.Tensor, ignore: bool = False) -> torch.Tensor:
        keep = ids != -100 if ignore else torch.ones_like(ids, dtype=torch.bool)
        mapped = torch.where(keep, self.table[torch.where(keep, ids, 0)], ids)
        if bool((mapped[keep] < 0).any()):
            raise ValueError("a token id outside the compacted vocabulary reached the model")
        return mapped


class Recorder:
    """Hooks on a model: records what it receives (real ids), maps ids for the compact vocabulary and,
    when `rows` is given, runs each document of a padding-free batch alone through the backbone and
    compares hidden states (documents from the Parquet rows' cu_seqlens)."""

    def __init__(self, model: Qwen3ForCausalLM, vocab: Vocab, rows: Rows | None = None):
        self.vocab, self.rows, self.calls, self.inside = vocab, rows, [], False
        model.register_forward_pre_hook(self.before, with_kwargs=True)
        model.model.register_forward_hook(self.after, with_kwargs=True)

    def before(self, module, args, kwargs):
        if self.inside:
            return None
        if args:
            raise TypeError("the trainer called the model with positional arguments")
        record = {k: v.detach().clone() for k, v in kwargs.items() if isinstance(v, torch.Tensor) and k in ("input_ids", "labels", "position_ids", "attention_mask")}
        record["use_cache"] = kwargs.get("use_cache")
        record["keys"] = sorted(kwargs)
        self.calls.append(record)
        kwargs = dict(kwargs, input_ids=self.vocab(kwargs["input_ids"]))
        if kwargs.get("labels") is not None:
            kwargs["labels"] = self.vocab(kwargs["labels"], ignore=True)
        return args, kwargs

    def after(self, module, args, kwargs, output):
        if self.inside or self.rows is None or not self.calls:
            return None
        record = self.calls[-1]
        if record["input_ids"].shape[0] != 1 or "attention_mask" in record:
            return None
        found, why = self.rows.parse_flat(record["input_ids"][0].numpy())
        if why:
            record["isolation"] = why
            return None
        bounds, offset = [], 0
        for k in found:
            bounds += [(offset + int(a), offset + int(b)) for a, b in zip(self.rows.rows[k]["cu"][:-1], self.rows.rows[k]["cu"][1:])]
            offset += len(self.rows.rows[k]["ids"])
        hidden = output.last_hidden_state.detach()
        self.inside = True
        try:
            with torch.no_grad():
                diffs = [float((module(input_ids=kwargs["input_ids"][:, a:b], use_cache=False).last_hidden_state - hidden[:, a:b]).abs().max()) for a, b in bounds]
        finally:
            self.inside = False
        record["isolation"] = diffs
        return None


def tiny_qwen3(vocab: Vocab, attn: str = "sdpa", use_cache: bool = True) -> Qwen3ForCausalLM:
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=vocab.size, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=8192, use_cache=use_cache, tie_word_embeddings=False,
    )
    model = Qwen3ForCausalLM._from_config(config, attn_implementation=attn, dtype=torch.float32)
    if model.config._attn_implementation != attn:
        raise RuntimeError(f"asked for {attn}, the model uses {model.config._attn_implementation}")
    return model


# --- 1. model(**packed_collate(rows)) keeps documents apart ----------------------------------------


def document_losses(logits: torch.Tensor, labels: torch.Tensor, bounds: list[tuple[int, int]]) -> list[tuple[float, int]]:
    """Summed cross-entropy and target count per document, shifted as HF causal LMs do, inside each."""
    out = []
    for a, b in bounds:
        target = labels[0, a + 1 : b]
        keep = target != -100
        loss = torch.nn.functional.cross_entropy(logits[0, a : b - 1][keep].double(), target[keep], reduction="sum")
        out.append((float(loss), int(keep.sum())))
    return out


def isolation(model, batch: dict, alone: list[torch.Tensor], bounds, **call) -> tuple[list[float], torch.Tensor]:
    """Max |logits - logits alone| per document for `model(**batch, **call)`."""
    with torch.no_grad():
        out = model(**batch, **call)
    return [float((out.logits[0, a:b] - solo).abs().max()) for (a, b), solo in zip(bounds, alone)], out


def check_model_isolation(packed_dir: Path, vocab: Vocab, sdpa_rows: int, other_rows: int) -> None:
    dataset = datasets.load_dataset(str(packed_dir), cache_dir=CACHE)
    rows = [dataset[split][k] for split in dataset for k in range(len(dataset[split]))]
    # One packed row per batch (the Trainer and TRL runs below batch two): the rows of several
    # documents; eager and flex (its eager path) materialise T x T scores, so the shortest of them.
    several = [row for row in rows if len(row["cu_seqlens"]) > 2]
    short = sorted(several, key=lambda row: row["num_tokens"])
    for attn, chosen in (("sdpa", several[:sdpa_rows]), ("eager", short[:other_rows]), ("flex_attention", short[:other_rows])):
        started = time.monotonic()
        model = tiny_qwen3(vocab, attn).eval()
        Recorder(model, vocab)
        documents = batches = 0
        worst = 0.0
        controls_done = False
        for start in range(len(chosen)):
            chunk = chosen[start : start + 1]
            batch = lwm_collate.packed_collate(chunk)
            cu = batch["cu_seq_lens_q"].tolist()
            bounds = list(zip(cu[:-1], cu[1:]))
            where = f"{attn}, packed row {chunk[0]['document_ids'][:3]}..."
            ids, labels = batch["input_ids"], batch["labels"]
            compact = vocab(labels, ignore=True)  # what the model's own loss sees after the pre-hook
            with torch.no_grad():
                alone = [model(input_ids=ids[:, a:b]).logits[0] for a, b in bounds]
                alone_losses = []
                for (a, b), solo in zip(bounds, alone):
                    alone_losses += document_losses(solo[None], compact[:, a:b], [(0, b - a)])
            # The documented call: every key of the batch, use_cache=False.
            diffs, out = isolation(model, batch, alone, bounds, use_cache=False)
            bad = [d for d, x in enumerate(diffs) if x > LOGITS_TOL]
            worst = max([worst, *diffs])
            check(not bad, f"{where}: model(**batch, use_cache=False): documents {bad} differ from alone by up to {max(diffs):.3g}")
            packed_losses = document_losses(out.logits, compact, bounds)
            for d, ((own, n), (ref, m)) in enumerate(zip(packed_losses, alone_losses)):
                check(n == m and abs(own - ref) <= 1e-5 * max(1.0, abs(ref)), f"{where} document {d}: summed loss {own:.6f} ({n} targets) packed vs {ref:.6f} ({m}) alone")
            total = sum(loss for loss, _ in alone_losses) / sum(n for _, n in alone_losses)
            check(abs(float(out.loss) - total) <= 1e-5 * max(1.0, total), f"{where}: the model's own loss {float(out.loss):.6f} != documents alone {total:.6f}")
            documents += len(bounds)
            batches += 1
            if controls_done or len(bounds) < 2:
                continue
            controls_done = True
            # A model configured once with use_cache=False isolates with the plain call.
            cacheless = tiny_qwen3(vocab, attn, use_cache=False).eval()
            Recorder(cacheless, vocab)
            configured, _ = isolation(cacheless, batch, alone, bounds)
            check(max(configured) <= LOGITS_TOL, f"{where}: config.use_cache=False + model(**batch) differs from alone by {max(configured):.3g}")
            # Negative controls: each must be seen leaking somewhere in the batch (all of them with
            # sdpa; the default call with the others, to show the comparison catches their leaks too).
            controls = {"default call model(**batch)": isolation(model, batch, alone, bounds)[0]}
            if attn == "sdpa":
                model.train()  # the issue: a cache is made in training mode too (a hand-written loop)
                controls["default call in train mode"] = isolation(model, batch, alone, bounds)[0]
                model.eval()
                running = dict(batch, position_ids=torch.arange(ids.shape[1])[None])
                controls["position_ids not restarting"] = isolation(model, running, alone, bounds, use_cache=False)[0]
                controls["all-ones attention_mask"] = isolation(model, batch, alone, bounds, use_cache=False, attention_mask=torch.ones_like(ids))[0]
                # The flash-attention kwargs alone: accepted, but sdpa does not read them.
                varlen_only = {k: v for k, v in batch.items() if k != "position_ids"}
                controls["cu_seq_lens_* without position_ids"] = isolation(model, varlen_only, alone, bounds, use_cache=False)[0]
            for name, found in controls.items():
                check(max(found) > LEAK, f"control ({attn}): {name} was not detected as leaking (max difference {max(found):.3g})")
            print(f"  {attn} controls, {len(bounds)} documents: " + "; ".join(f"{name}: {sum(x <= LOGITS_TOL for x in found)} match alone, max diff {max(found):.3g}" for name, found in controls.items()))
        check(controls_done, f"{attn}: no batch with two documents, the negative controls did not run")
        print(f"model(**packed_collate([row]), use_cache=False), {attn}: {batches} batches, {documents} documents, each equal to itself alone (logits within {worst:.2g}, loss); config.use_cache=False too [{time.monotonic() - started:.0f} s]")


# --- 2 and 3. Trainer and SFTTrainer ----------------------------------------------------------------


def run_trainer(make, steps: int) -> tuple[object, float]:
    """Builds a trainer with `make()` and trains `steps` steps; returns it and the seconds taken."""
    started = time.monotonic()
    trainer = make()
    with contextlib.redirect_stdout(io.StringIO()):
        trainer.train()
    return trainer, time.monotonic() - started


def training_args(cls, out: str, steps: int, batch_size: int, **extra):
    return cls(
        output_dir=out, max_steps=steps, per_device_train_batch_size=batch_size, learning_rate=3e-3, logging_steps=1,
        report_to="none", save_strategy="no", use_cpu=True, dataloader_num_workers=0, seed=0, disable_tqdm=True, **extra,
    )


def check_run(name: str, trainer, recorder: Recorder, rows: Rows, steps: int, packed: bool, seconds: float) -> None:
    """The labels the model received in each step, and every batch of the trainer's own dataloader,
    equal the Parquet rows'; losses finite; packed: every document isolated."""
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    check(trainer.state.global_step == steps, f"{name}: ran {trainer.state.global_step} of {steps} steps")
    check(len(losses) > 0 and all(math.isfinite(x) for x in losses), f"{name}: losses {losses}")
    # `labels` appear in every call (Trainer: the model's loss; TRL: its fused head's log-probs).
    calls = [c for c in recorder.calls if "labels" in c]
    check(len(calls) == steps, f"{name}: the model was called with labels {len(calls)} times for {steps} steps")
    seen: set[int] = set()
    for step, call in enumerate(calls):
        problems, found = label_mismatches(call, rows)
        seen |= found
        for problem in problems[:3]:
            check(False, f"{name} step {step}: {problem}")
        if packed:
            check("attention_mask" not in call and call["input_ids"].shape[0] == 1, f"{name} step {step}: not a padding-free batch")
            check(call["use_cache"] is False or trainer.model.config.use_cache is False, f"{name} step {step}: a cache would be created")
            diffs = call.get("isolation")
            if not isinstance(diffs, list):
                check(False, f"{name} step {step}: isolation not measured ({diffs})")
            else:
                check(max(diffs) <= LOGITS_TOL, f"{name} step {step}: {sum(x > LOGITS_TOL for x in diffs)} of {len(diffs)} documents differ from alone, by up to {max(diffs):.3g}")
    # Every row, through the trainer's own dataloader and collator.
    all_seen: set[int] = set()
    batches = 0
    for batch in trainer.get_train_dataloader():
        batches += 1
        record = {k: v for k, v in batch.items() if isinstance(v, torch.Tensor) and k in ("input_ids", "labels", "attention_mask")}
        problems, found = label_mismatches(record, rows)
        all_seen |= found
        for problem in problems[:3]:
            check(False, f"{name} dataloader batch {batches}: {problem}")
    train_rows = {rows.match(row["ids"], 0)[0] for row in rows.rows if row["split"] == "train"}
    check(all_seen == train_rows, f"{name}: the dataloader yielded {len(all_seen)} of the {len(train_rows)} distinct train rows")
    isolated = sum(len(c["isolation"]) for c in calls if isinstance(c.get("isolation"), list))
    print(
        f"{name}: {steps} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}; labels equal the Parquet rows in every step ({len(seen)} rows) and every dataloader batch ({len(all_seen)} rows)"
        + (f"; {isolated} documents each equal to itself alone" if packed else "")
        + f" [{seconds:.0f} s]"
    )


def control_labels(name: str, recorder: Recorder, rows: Rows) -> None:
    """A negative control: the label comparison must report the run's labels as wrong."""
    calls = [c for c in recorder.calls if "labels" in c]
    problems = [p for c in calls for p in label_mismatches(c, rows)[0]]
    check(bool(calls) and bool(problems), f"control: {name} was not caught by the label comparison")
    if problems:
        print(f"  control caught: {name}: {problems[0]}")


def control_leak(name: str, recorder: Recorder) -> None:
    calls = [c for c in recorder.calls if "labels" in c]
    worst = max((max(c["isolation"]) for c in calls if isinstance(c.get("isolation"), list)), default=0.0)
    check(worst > LEAK, f"control: {name} was not detected as leaking (max difference {worst:.3g})")
    if worst > LEAK:
        print(f"  control caught: {name}: documents differ from alone by up to {worst:.3g}")


def check_trainer(packed_dir: Path, unpacked_dir: Path, vocab: Vocab, tokenizer, packed_rows: Rows, unpacked_rows: Rows, steps: int, work: str) -> None:
    pad_id = tokenizer.pad_token_id
    unpacked = datasets.load_dataset(str(unpacked_dir), split="train", cache_dir=CACHE).select_columns(["input_ids", "loss_mask"])
    packed = datasets.load_dataset(str(packed_dir), split="train", cache_dir=CACHE).select_columns(["input_ids", "loss_mask", "position_ids", "cu_seqlens"])

    # Padded: remove_unused_columns=False, so loss_mask reaches the collate.
    model = tiny_qwen3(vocab)
    recorder = Recorder(model, vocab)
    args = training_args(TrainingArguments, f"{work}/padded", steps, 2, remove_unused_columns=False)
    trainer, seconds = run_trainer(lambda: Trainer(model=model, args=args, train_dataset=unpacked, data_collator=lwm_collate.PadCollator(pad_id)), steps)
    check_run("Trainer, padded (PadCollator)", trainer, recorder, unpacked_rows, steps, False, seconds)

    # Packed: padding-free batches. The model's config says use_cache=True, as a pretrained Qwen3's
    # does; Trainer sets model.config.use_cache = TrainingArguments.use_cache (default False).
    model = tiny_qwen3(vocab)
    recorder = Recorder(model, vocab, packed_rows)
    args = training_args(TrainingArguments, f"{work}/packed", steps, 2, remove_unused_columns=False)
    trainer, seconds = run_trainer(lambda: Trainer(model=model, args=args, train_dataset=packed, data_collator=lwm_collate.packed_collate), steps)
    check(model.config.use_cache is False, f"Trainer left model.config.use_cache={model.config.use_cache}: it no longer turns the cache off")
    check_run("Trainer, packed (packed_collate, TrainingArguments.use_cache=False)", trainer, recorder, packed_rows, steps, True, seconds)

    # Controls.
    model = tiny_qwen3(vocab)
    recorder = Recorder(model, vocab, packed_rows)
    args = training_args(TrainingArguments, f"{work}/packed-cache", 1, 2, remove_unused_columns=False, use_cache=True)
    run_trainer(lambda: Trainer(model=model, args=args, train_dataset=packed, data_collator=lwm_collate.packed_collate), 1)
    control_leak("Trainer + packed_collate with TrainingArguments(use_cache=True)", recorder)

    model = tiny_qwen3(vocab)
    recorder = Recorder(model, vocab)
    args = training_args(TrainingArguments, f"{work}/no-mask", 1, 2)
    lm = transformers.DataCollatorForLanguageModeling(tokenizer, mlm=False)
    run_trainer(lambda: Trainer(model=model, args=args, train_dataset=unpacked, data_collator=lm), 1)
    control_labels("Trainer with DataCollatorForLanguageModeling(mlm=False) (loss_mask ignored)", recorder, unpacked_rows)

    args = training_args(TrainingArguments, f"{work}/dropped", 1, 2)  # remove_unused_columns left at True
    trainer = Trainer(model=tiny_qwen3(vocab), args=args, train_dataset=unpacked, data_collator=lwm_collate.PadCollator(pad_id))
    try:
        next(iter(trainer.get_train_dataloader()))
        check(False, "control: with remove_unused_columns=True the collate still received loss_mask (the README's remove_unused_columns=False may be unneeded)")
    except KeyError as error:
        print(f"  control caught: Trainer's default remove_unused_columns=True drops loss_mask before the collate (KeyError {error})")


def check_sft(packed_dir: Path, unpacked_dir: Path, vocab: Vocab, tokenizer, packed_rows: Rows, unpacked_rows: Rows, steps: int, work: str) -> None:
    from trl import SFTConfig, SFTTrainer

    unpacked = datasets.load_dataset(str(unpacked_dir), split="train", cache_dir=CACHE).select_columns(["input_ids", "loss_mask"])
    packed = datasets.load_dataset(str(packed_dir), split="train", cache_dir=CACHE).select_columns(["input_ids", "loss_mask", "cu_seqlens"])

    def seq_lengths(row):
        return {"seq_lengths": [b - a for a, b in zip(row["cu_seqlens"][:-1], row["cu_seqlens"][1:])]}

    # The README's datasets: loss_mask -> assistant_masks (TRL builds labels from it); packed rows also
    # carry their documents' lengths as seq_lengths.
    padded_ds = unpacked.rename_column("loss_mask", "assistant_masks")
    packed_ds = packed.map(seq_lengths, remove_columns=["cu_seqlens"]).rename_column("loss_mask", "assistant_masks")

    def sft(dataset, out: str, n: int, padding_free: bool, rows: Rows | None):
        model = tiny_qwen3(vocab)  # config.use_cache=True: SFTTrainer passes use_cache=False itself
        recorder = Recorder(model, vocab, rows)
        # bf16/gradient_checkpointing: TRL defaults to both; fp32 here for the float32 comparisons.
        config = training_args(SFTConfig, out, n, 2, max_length=None, padding_free=padding_free, bf16=False, gradient_checkpointing=True)
        trainer, seconds = run_trainer(lambda: SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer), n)
        return trainer, recorder, seconds

    trainer, recorder, seconds = sft(padded_ds, f"{work}/sft-padded", steps, False, None)
    check_run("TRL SFTTrainer, padded (assistant_masks)", trainer, recorder, unpacked_rows, steps, False, seconds)
    trainer, recorder, seconds = sft(packed_ds, f"{work}/sft-packed", steps, True, packed_rows)
    check_run("TRL SFTTrainer, padding-free packed rows (assistant_masks, seq_lengths)", trainer, recorder, packed_rows, steps, True, seconds)

    # Controls: the shards' own column name is not one TRL reads; packed rows without seq_lengths.
    _, recorder, _ = sft(unpacked, f"{work}/sft-loss-mask", 1, False, None)
    control_labels("SFTTrainer given the loss_mask column as the shards name it", recorder, unpacked_rows)
    _, recorder, _ = sft(packed.rename_column("loss_mask", "assistant_masks").remove_columns(["cu_seqlens"]), f"{work}/sft-no-seq-lengths", 1, True, packed_rows)
    control_leak("SFTTrainer padding_free on packed rows without seq_lengths", recorder)


def check_readme_snippet(readme: Path, packed_dir: Path, unpacked_dir: Path, vocab: Vocab, tokenizer_dir: Path, work: str) -> None:
    """Runs docs/packing-and-trainers.md "Hugging Face Trainer and TRL"'s snippet as written, with the tiny model for the
    pretrained one, one CPU step per trainer, and these outputs; then compares every call the model
    received with the Parquet rows (labels, and each packed document against itself alone)."""
    text = readme.read_text()
    section = text[text.index("## Hugging Face Trainer and TRL") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```", start)]
    swaps = {
        'AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B")': "_tiny_model()",
        'AutoTokenizer.from_pretrained("Qwen/Qwen3-0.6B")': f"AutoTokenizer.from_pretrained({str(tokenizer_dir)!r})",
        'output_dir="ckpt"': f'output_dir={work + "/readme"!r}, max_steps=1, use_cpu=True, report_to="none", save_strategy="no", bf16=False, disable_tqdm=True',
        '"out/demo-packed"': repr(str(packed_dir)),
        '"out/demo"': repr(str(unpacked_dir)),
    }
    for old, new in swaps.items():
        check(old in code, f"README snippet: no {old} to substitute any more")
        code = code.replace(old, new)
    model = tiny_qwen3(vocab)
    both = Rows(packed_dir, unpacked_dir)  # the snippet trains on both outputs
    recorder = Recorder(model, vocab, both)
    namespace: dict = {"_tiny_model": lambda: model}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, f"{readme} (Hugging Face Trainer and TRL)", "exec"), namespace)
    calls = [c for c in recorder.calls if "labels" in c]
    before = len(failures)
    check(len(calls) >= 4, f"README snippet: the model received {len(calls)} calls with labels, expected the loop's and three trainers' (>= 4)")
    for n, call in enumerate(calls):
        for problem in label_mismatches(call, both)[0][:3]:
            check(False, f"README snippet call {n}: {problem}")
        diffs = call.get("isolation")
        if "attention_mask" not in call:
            check(isinstance(diffs, list) and max(diffs) <= LOGITS_TOL, f"README snippet call {n}: packed documents not isolated ({diffs if not isinstance(diffs, list) else max(diffs)})")
    if len(failures) == before:
        print(f"README: the Hugging Face Trainer and TRL snippet runs as written ({len(calls)} model calls, labels equal the Parquet rows, packed documents each equal to itself alone)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packed", type=Path)
    parser.add_argument("unpacked", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=2, help="optimiser steps per training run")
    parser.add_argument("--sdpa-rows", type=int, default=1000, help="packed rows of several documents run through sdpa (default: all)")
    parser.add_argument("--readme", type=Path, help="README.md whose Hugging Face Trainer and TRL snippet to run")
    parser.add_argument("--other-rows", type=int, default=1, help="the shortest packed rows of several documents run through eager and flex_attention")
    args = parser.parse_args()
    print(f"transformers {transformers.__version__}, trl {trl.__version__}, torch {torch.__version__}")
    started = time.monotonic()
    packed_rows, unpacked_rows = Rows(args.packed), Rows(args.unpacked)
    tokenizer = AutoTokenizer.from_pretrained(str(args.tokenizer_dir))
    ids = {int(t) for rows in (packed_rows, unpacked_rows) for row in rows.rows for t in np.unique(row["ids"])}
    vocab = Vocab(ids | {tokenizer.pad_token_id, tokenizer.eos_token_id})
    print(f"compacted vocabulary: {vocab.size} entries for the {len(ids)} distinct ids of the two outputs")
    check_model_isolation(args.packed, vocab, args.sdpa_rows, args.other_rows)
    work = tempfile.mkdtemp(prefix="lwm-hf-trainer-", dir=CACHE)
    check_trainer(args.packed, args.unpacked, vocab, tokenizer, packed_rows, unpacked_rows, args.steps, work)
    check_sft(args.packed, args.unpacked, vocab, tokenizer, packed_rows, unpacked_rows, args.steps, work)
    if args.readme:
        check_readme_snippet(args.readme, args.packed, args.unpacked, vocab, args.tokenizer_dir, work)
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(f"HF training check passed [{time.monotonic() - started:.0f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
