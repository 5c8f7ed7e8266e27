"""Weighted loss over `loss_weight` (mask.weights) in Hugging Face transformers / Trainer.

Usage: test_loss_weight.py <packed output with loss_weight>   (run by test/loss-weight.test.ts)

The snippet (`weighted_lm_loss`, `weighted_packed_collate`, `WeightedLossTrainer`) is what a trainer
copies. Checked here on a packed batch of the demo with a tiny random Qwen3, its rows shortened by
`runs_shortened` (every document kept, each of its runs of equal weight cut to its first tokens: all the
weights, the untrained gaps between them and the document boundaries stay, at about a sixth of the tokens, since
the full-vocabulary logits cost CPU time in proportion to the tokens):
1. the snippet's loss equals a weighted cross-entropy computed by hand, token by token in float64
   (sum over trained targets of w * -log p(target) / sum of w), and so does Trainer's compute_loss;
2. negative controls: the model's own (unweighted) loss, and the snippet given all-ones weights,
   differ from it; the weights in the batch are not all equal;
3. Trainer trains a step with the collator (remove_unused_columns=False keeps loss_weight), and
   compute_loss sees the weights.
"""

import math
import sys
from pathlib import Path

import pyarrow.parquet as pq
import torch
import torch.nn.functional as F

import lwm_collate  # notebooks/lwm_collate.py


# --- the snippet ----------------------------------------------------------------------------------
def weighted_packed_collate(rows):
    """lwm_collate.packed_collate plus `loss_weight` (1, T), concatenated like the labels."""
    batch = lwm_collate.packed_collate(rows)
    batch["loss_weight"] = torch.cat([torch.tensor(row["loss_weight"], dtype=torch.float32) for row in rows])[None]
    return batch


def weighted_lm_loss(logits, labels, loss_weight):
    """Causal-LM loss with per-token weights: logits at t score the label at t + 1 (labels unshifted,
    as transformers takes them); -100 labels (untrained tokens, document starts) weigh nothing.
    Normalized by the weights' sum: with 0/1 weights this is the usual mean over trained tokens."""
    logits = logits[:, :-1].float()
    targets = labels[:, 1:]
    weights = loss_weight[:, 1:] * (targets != -100)
    per_token = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-100, reduction="none")
    return (per_token * weights.reshape(-1)).sum() / weights.sum()


def weighted_trainer_class():
    from transformers import Trainer

    class WeightedLossTrainer(Trainer):
        """Trainer(..., data_collator=weighted_packed_collate, args=TrainingArguments(remove_unused_columns=False))."""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            weights = inputs.pop("loss_weight")
            outputs = model(**inputs, use_cache=False)
            loss = weighted_lm_loss(outputs.logits, inputs["labels"], weights)
            return (loss, outputs) if return_outputs else loss

    return WeightedLossTrainer


# --- the checks -----------------------------------------------------------------------------------
def tiny_qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=151936, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=8, max_position_embeddings=40960, tie_word_embeddings=True,
        # A wide init: token losses that vary, so weighting them changes the mean (a default-init
        # random model gives every token about log(vocab) and hides the weights).
        initializer_range=1.0,
    )  # fmt: skip
    torch.manual_seed(0)
    return Qwen3ForCausalLM(config).eval()


def runs_shortened(row, keep=16):
    """The packed row with each document's runs of equal (loss_mask, loss_weight), trained or not, cut
    to their first `keep` tokens; cu_seqlens and position_ids recomputed. Every document, every weight,
    every gap between trained runs (and any weight off the mask) stays: the loss over it checks the
    same alignment and normalization as over the whole row, with far fewer full-vocabulary logits."""
    cu = row["cu_seqlens"]
    kind = list(zip(row["loss_mask"], row["loss_weight"]))
    kept, bounds = [], [0]
    for start, end in zip(cu, cu[1:]):
        run_start = start
        for t in range(start, end + 1):
            if t == end or kind[t] != kind[run_start]:
                kept.extend(range(run_start, min(t, run_start + keep)))
                run_start = t
        bounds.append(len(kept))
    short = {key: [row[key][t] for t in kept] for key in ("input_ids", "loss_mask", "loss_weight")}
    short["cu_seqlens"] = bounds
    if "position_ids" in row:
        short["position_ids"] = [p for a, b in zip(bounds, bounds[1:]) for p in range(b - a)]
    return short


def hand_weighted_ce(logits, labels, weights) -> float:
    """sum_t w[t+1] * -log softmax(logits[t])[labels[t+1]] / sum w, over trained targets, in float64."""
    logits = logits[0].double()
    numerator = 0.0
    denominator = 0.0
    for t in range(labels.size(1) - 1):
        target = int(labels[0, t + 1])
        if target == -100:
            continue
        row = logits[t]
        # log sum exp, written out (float64), not F.cross_entropy: an independent computation.
        log_z = float(row.max()) + math.log(float(torch.exp(row - row.max()).sum()))
        nll = log_z - float(row[target])
        w = float(weights[0, t + 1])
        numerator += w * nll
        denominator += w
    return numerator / denominator


def main() -> int:
    output = Path(sys.argv[1])
    shards = sorted((output / "data").glob("*.parquet"))
    columns = ["input_ids", "loss_mask", "loss_weight", "position_ids", "cu_seqlens"]
    rows = [row for shard in shards for row in pq.read_table(shard, columns=columns).to_pylist()]
    # The two shortest rows of several documents: a real packed, weighted batch, small enough for a CPU step.
    batch_rows = sorted((r for r in rows if len(r["cu_seqlens"]) > 2), key=lambda r: len(r["input_ids"]))[:2]
    assert len(batch_rows) == 2, "want two packed rows of several documents"
    batch_rows = [runs_shortened(r) for r in batch_rows]
    batch = weighted_packed_collate(batch_rows)
    labels, weights = batch["labels"], batch["loss_weight"]
    trained = weights[labels != -100]
    assert len(set(trained.tolist())) >= 3, f"the batch's trained weights are too uniform: {sorted(set(trained.tolist()))}"
    assert torch.equal((weights > 0), torch.cat([torch.tensor(r["loss_mask"]) for r in batch_rows])[None].bool()), "loss_weight > 0 off loss_mask"

    model = tiny_qwen3()
    inputs = {k: v for k, v in batch.items() if k != "loss_weight"}
    with torch.no_grad():
        outputs = model(**inputs, use_cache=False)
    snippet = float(weighted_lm_loss(outputs.logits, labels, weights))
    hand = hand_weighted_ce(outputs.logits, labels, weights)
    unweighted = float(outputs.loss)
    ones = float(weighted_lm_loss(outputs.logits, labels, torch.ones_like(weights)))
    print(f"weighted (snippet) {snippet:.6f}  by hand {hand:.6f}  unweighted (model) {unweighted:.6f}  snippet with weights 1 {ones:.6f}")
    tolerance = 1e-5 * max(1.0, abs(hand))  # float32 logits against a float64 sum
    assert abs(snippet - hand) < tolerance, f"snippet {snippet} != hand-computed {hand}"
    # With weights 1 the snippet is the model's own loss; ignoring the weights gives another number.
    assert abs(ones - unweighted) < 1e-5, f"snippet with weights 1 {ones} != model loss {unweighted}"
    assert abs(unweighted - hand) > 20 * tolerance, f"negative control: the unweighted loss {unweighted} equals the weighted {hand}"

    from transformers import TrainingArguments

    Trainer = weighted_trainer_class()
    work = output / "hf-weighted"
    args = TrainingArguments(
        output_dir=str(work), per_device_train_batch_size=2, max_steps=1, remove_unused_columns=False,
        report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no", learning_rate=1e-3,
    )  # fmt: skip
    seen = []

    class Checked(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            seen.append(inputs["loss_weight"].clone())
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    trainer = Checked(model=model, args=args, train_dataset=batch_rows, data_collator=weighted_packed_collate)
    with torch.no_grad():
        via_trainer = float(trainer.compute_loss(model, weighted_packed_collate(batch_rows)))
    assert abs(via_trainer - hand) < 1e-5 * max(1.0, abs(hand)), f"Trainer.compute_loss {via_trainer} != hand-computed {hand}"
    seen.clear()
    trainer.train()
    assert seen and seen[0].shape == weights.shape, "compute_loss did not get loss_weight in training"
    print(f"Trainer.compute_loss {via_trainer:.6f}; one training step with loss_weight of shape {tuple(seen[0].shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
