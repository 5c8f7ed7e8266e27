"""Weighted loss over `loss_weight` (mask.weights) in TRL's SFTTrainer, padding-free over packed rows.

Usage: test_loss_weight_trl.py <packed output with loss_weight> --tokenizer-dir DIR   (run by test/loss-weight-trainers.test.ts)

TRL's SFTTrainer reads `assistant_masks` (labels) and `seq_lengths` (documents of a packed row), not
`loss_weight`: `WeightedSFTTrainer` wraps TRL's own collator to carry the weights beside the labels
(concatenated like them, padding-free) and overrides compute_loss with the HF snippet's
`weighted_lm_loss` (test/python/test_loss_weight.py, docs/packing-and-trainers.md). Checked on two
packed demo rows of several documents with a tiny random Qwen3, the batch taken from the trainer's
own dataloader (TRL's dataset preparation and collator). The rows are shortened as in
test_loss_weight.py (`runs_shortened`: every document, weight and untrained gap kept, each run cut to
its first tokens), since the full-vocabulary logits cost CPU time in proportion to the tokens:
1. the labels TRL built are the shards' loss_mask, less each document's first token;
2. the trainer's loss equals a weighted cross-entropy computed by hand in float64 from the Parquet
   (shortened) rows (target = input_ids[t+1] where loss_mask[t+1] = 1 and t+1 does not start a document,
   weight = loss_weight[t+1]);
3. negative control: TRL's own SFTTrainer.compute_loss on the same batch (the weights ignored)
   gives another number, and the weighted loss with all weights 1 gives TRL's;
4. one training step runs and compute_loss receives the weights.
"""

import argparse
import math
import sys
from pathlib import Path

import pyarrow.parquet as pq
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_loss_weight import runs_shortened, tiny_qwen3, weighted_lm_loss  # noqa: E402


# --- the snippet ----------------------------------------------------------------------------------
def weighted_sft_trainer_class():
    from trl import SFTTrainer

    class WeightedSFTTrainer(SFTTrainer):
        """SFTTrainer(..., args=SFTConfig(padding_free=True, max_length=None, remove_unused_columns=False))
        over packed rows with columns input_ids, assistant_masks (= loss_mask), seq_lengths, loss_weight."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            trl_collate = self.data_collator

            def collate(examples):
                batch = trl_collate([{k: v for k, v in e.items() if k != "loss_weight"} for e in examples])
                # Padding-free: TRL concatenates the rows into one; the weights follow the same order.
                batch["loss_weight"] = torch.cat([torch.tensor(e["loss_weight"], dtype=torch.float32) for e in examples])[None]
                assert batch["loss_weight"].shape == batch["labels"].shape, "loss_weight does not line up with TRL's labels"
                return batch

            self.data_collator = collate

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            weights = inputs.pop("loss_weight")
            outputs = model(**{k: v for k, v in inputs.items() if k != "labels"}, use_cache=False)
            loss = weighted_lm_loss(outputs.logits, inputs["labels"], weights)
            return (loss, outputs) if return_outputs else loss

    return WeightedSFTTrainer


# --- the checks -----------------------------------------------------------------------------------
def hand_weighted_ce(logits, rows) -> float:
    """From the Parquet rows alone: sum over trained targets of w * -log p(target) / sum of w, float64."""
    ids = [t for r in rows for t in r["input_ids"]]
    mask = [m for r in rows for m in r["loss_mask"]]
    weights = [w for r in rows for w in r["loss_weight"]]
    starts, offset = set(), 0
    for r in rows:
        starts.update(offset + c for c in r["cu_seqlens"][:-1])
        offset += len(r["input_ids"])
    numerator = denominator = 0.0
    for t in range(len(ids) - 1):
        if not mask[t + 1] or (t + 1) in starts:
            continue
        row = logits[0, t].double()  # one row at a time: the whole batch in float64 would be gigabytes
        log_z = float(row.max()) + math.log(float(torch.exp(row - row.max()).sum()))
        numerator += weights[t + 1] * (log_z - float(row[ids[t + 1]]))
        denominator += weights[t + 1]
    return numerator / denominator


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()

    import datasets
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    shards = sorted((args.output / "data").glob("*.parquet"))
    columns = ["input_ids", "loss_mask", "loss_weight", "cu_seqlens"]
    rows = [row for shard in shards for row in pq.read_table(shard, columns=columns).to_pylist()]
    batch_rows = sorted((r for r in rows if len(r["cu_seqlens"]) > 2), key=lambda r: len(r["input_ids"]))[:2]
    assert len(batch_rows) == 2, "want two packed rows of several documents"
    batch_rows = [runs_shortened(r) for r in batch_rows]
    trained = {w for r in batch_rows for w, m in zip(r["loss_weight"], r["loss_mask"]) if m}
    assert len(trained) >= 3, f"the rows' trained weights are too uniform: {sorted(trained)}"

    # The dataset as docs/packing-and-trainers.md gives it to TRL, plus loss_weight.
    dataset = datasets.Dataset.from_list(
        [
            {
                "input_ids": r["input_ids"],
                "assistant_masks": r["loss_mask"],
                "seq_lengths": [b - a for a, b in zip(r["cu_seqlens"], r["cu_seqlens"][1:])],
                "loss_weight": r["loss_weight"],
            }
            for r in batch_rows
        ]
    )
    tokenizer = AutoTokenizer.from_pretrained(str(args.tokenizer_dir))
    config = SFTConfig(
        output_dir=str(args.output / "trl-weighted"), max_length=None, padding_free=True, packing=False,
        per_device_train_batch_size=2, max_steps=1, remove_unused_columns=False, report_to=[], use_cpu=True,
        save_strategy="no", logging_strategy="no", bf16=False, learning_rate=1e-3,
    )  # fmt: skip
    model = tiny_qwen3()
    Weighted = weighted_sft_trainer_class()
    seen = []

    class Checked(Weighted):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            seen.append(inputs["loss_weight"].clone())
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    trainer = Checked(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    batch = next(iter(trainer.get_train_dataloader()))
    # The dataloader may order the two rows either way; the hand computation follows its order.
    first = batch["input_ids"][0, : len(batch_rows[0]["input_ids"])].tolist() == batch_rows[0]["input_ids"]
    ordered = batch_rows if first else batch_rows[::-1]
    assert batch["input_ids"][0].tolist() == [t for r in ordered for t in r["input_ids"]], "TRL's batch is not the two rows concatenated"

    # 1. TRL's labels: the shards' mask less the documents' first tokens.
    starts, offset = set(), 0
    for r in ordered:
        starts.update(offset + c for c in r["cu_seqlens"][:-1])
        offset += len(r["input_ids"])
    mask = [m for r in ordered for m in r["loss_mask"]]
    want = [int(m == 1 and t not in starts) for t, m in enumerate(mask)]
    got = (batch["labels"][0] != -100).int().tolist()
    assert got == want, f"TRL's labels differ from the shards' loss_mask at {sum(a != b for a, b in zip(got, want))} positions"

    # 2. The trainer's loss against the hand computation from the Parquet rows.
    inputs = {k: v for k, v in batch.items()}
    with torch.no_grad():
        weighted = float(trainer.compute_loss(model, dict(inputs)))
        logits = model(**{k: v for k, v in inputs.items() if k not in ("labels", "loss_weight")}, use_cache=False).logits
    hand = hand_weighted_ce(logits, ordered)
    tolerance = 1e-5 * max(1.0, abs(hand))
    assert abs(weighted - hand) < tolerance, f"WeightedSFTTrainer loss {weighted} != hand-computed {hand}"

    # 3. Negative control: TRL's own loss (weights ignored), and the weighted loss with weights 1.
    plain = SFTTrainer(model=model, args=config, train_dataset=dataset.remove_columns(["loss_weight"]), processing_class=tokenizer)
    plain_batch = next(iter(plain.get_train_dataloader()))
    with torch.no_grad():
        trl_loss = float(SFTTrainer.compute_loss(plain, model, dict(plain_batch)))
        ones = float(trainer.compute_loss(model, {**inputs, "loss_weight": torch.ones_like(inputs["loss_weight"])}))
    assert abs(ones - trl_loss) < 1e-5 * max(1.0, abs(trl_loss)), f"weights 1 {ones} != TRL's own loss {trl_loss}"
    assert abs(trl_loss - hand) > 20 * tolerance, f"negative control: TRL's unweighted loss {trl_loss} equals the weighted {hand}"
    print(f"TRL SFTTrainer padding-free: weighted {weighted:.6f}  by hand {hand:.6f}  TRL's own (unweighted) {trl_loss:.6f}  weights 1 {ones:.6f}")

    # 4. One training step through TRL's loop.
    seen.clear()
    trainer.train()
    assert seen and seen[0].shape == batch["labels"].shape, "compute_loss did not get loss_weight in training"
    print(f"one SFTTrainer step with loss_weight of shape {tuple(seen[0].shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
