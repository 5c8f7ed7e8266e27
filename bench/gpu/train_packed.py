"""Packed lwm-data shards in a real training loop on a GPU: bf16 training of a small transformers
Qwen3 (random weights: nothing can be downloaded on the device), per-document isolation, the loss
curve, and the loader's tokens/s against the model's training tokens/s.

    python bench/gpu/train_packed.py PACKED_DIR [--steps 200] [--out results.json]

PACKED_DIR is an lwm-data output with `pack.enabled` (e.g. `lwm-data run configs/demo-packed.yaml`).
Needs torch, transformers and pyarrow (the device image has them; `datasets` is not needed).
Falls back to the CPU in float32 when no GPU is there, so it can be tried anywhere on a few steps.

What it measures, each in the JSON it writes:

1. isolation: every document of the first packed rows, run inside its packed row through the
   README's call (`model(input_ids, position_ids=…, use_cache=False)`) and alone; the largest
   logit difference and per-document loss difference, in the training dtype, for sdpa (and
   flex_attention when it works there). The same with the model's default call (a cache is
   created, so transformers does not see the packing): how far documents leak without it.
2. loss curve: the training loss every step (AdamW, cosine schedule), on batches from
   notebooks/lwm_collate.py's packed_collate, labels -100 where the loss mask is 0.
3. throughput: tokens/s of the loader alone (pyarrow → DataLoader → packed_collate) and of the
   training step (forward + backward + optimizer, CUDA-synchronized), and their ratio: how many
   times faster the loader is than the model consumes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
import lwm_collate  # noqa: E402

QWEN3_VOCAB = 151936


def packed_rows(out: Path, split: str = "train") -> list[dict]:
    rows = []
    for path in sorted((out / "data").glob(f"{split}-*.parquet")):
        rows.extend(pq.read_table(path, columns=["input_ids", "loss_mask", "position_ids", "cu_seqlens"]).to_pylist())
    if not rows:
        raise SystemExit(f"train_packed: no {split}-*.parquet under {out / 'data'}: run a packed job first")
    if "cu_seqlens" not in rows[0] or rows[0]["cu_seqlens"] is None:
        raise SystemExit(f"train_packed: {out} is not packed (no cu_seqlens): run a job with pack.enabled")
    return rows


def tiny_qwen3(attn: str, device: torch.device, dtype: torch.dtype, size: str):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    dims = {"small": (256, 4, 4, 2, 768), "base": (768, 12, 12, 4, 2048)}[size]
    hidden, layers, heads, kv_heads, intermediate = dims
    config = Qwen3Config(
        vocab_size=QWEN3_VOCAB,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=hidden // heads,
        intermediate_size=intermediate,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        attn_implementation=attn,
    )
    torch.manual_seed(0)
    return Qwen3ForCausalLM(config).to(device=device, dtype=dtype)


def document_losses(logits: torch.Tensor, labels: torch.Tensor, bounds: list[int]) -> list[float]:
    """Summed next-token loss per document, shifted inside each document only."""
    losses = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        doc_logits, doc_labels = logits[start : end - 1].float(), labels[start + 1 : end]
        losses.append(float(torch.nn.functional.cross_entropy(doc_logits, doc_labels, ignore_index=-100, reduction="sum")))
    return losses


@torch.no_grad()
def isolation(model, rows: list[dict], device: torch.device, max_rows: int) -> dict:
    """Largest difference between a document in its packed row and the document alone."""
    result = {"documents": 0, "readme_call": {"max_logit_diff": 0.0, "max_loss_diff": 0.0}, "default_call": {"max_logit_diff": 0.0, "max_loss_diff": 0.0}}
    for row in rows[:max_rows]:
        batch = lwm_collate.packed_collate([row])
        ids, pos, labels = batch["input_ids"].to(device), batch["position_ids"].to(device), batch["labels"][0].to(device)
        bounds = [int(b) for b in batch["cu_seqlens"]]
        calls = {
            "readme_call": model(input_ids=ids, position_ids=pos, use_cache=False).logits[0],
            "default_call": model(input_ids=ids, position_ids=pos).logits[0],
        }
        alone_logits = [model(input_ids=ids[:, s:e], use_cache=False).logits[0] for s, e in zip(bounds[:-1], bounds[1:])]
        alone_losses = [document_losses(lg, labels[s:e], [0, e - s])[0] for lg, (s, e) in zip(alone_logits, zip(bounds[:-1], bounds[1:]))]
        result["documents"] += len(alone_logits)
        for name, logits in calls.items():
            losses = document_losses(logits, labels, bounds)
            for k, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
                diff = float((logits[s:e].float() - alone_logits[k].float()).abs().max())
                into = result[name]
                into["max_logit_diff"] = max(into["max_logit_diff"], diff)
                into["max_loss_diff"] = max(into["max_loss_diff"], abs(losses[k] - alone_losses[k]) / max(1.0, abs(alone_losses[k])))
    return result


def loader_tokens_per_second(out: Path, batch_rows: int, epochs: int) -> tuple[float, int]:
    """The whole input side: Parquet → rows → DataLoader → packed_collate, no model."""
    started = time.perf_counter()
    tokens = 0
    for _ in range(epochs):
        rows = packed_rows(out)
        loader = torch.utils.data.DataLoader(rows, batch_size=batch_rows, shuffle=False, collate_fn=lwm_collate.packed_collate)
        for batch in loader:
            tokens += batch["input_ids"].numel()
    return tokens / (time.perf_counter() - started), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packed_dir", type=Path)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-rows", type=int, default=1, help="packed rows per step (one flat sequence)")
    parser.add_argument("--size", choices=["small", "base"], default="small")
    parser.add_argument("--isolation-rows", type=int, default=4)
    parser.add_argument("--loader-epochs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda else torch.float32
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    rows = packed_rows(args.packed_dir)
    results: dict = {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "dtype": str(dtype).removeprefix("torch."),
        "torch": torch.__version__,
        "rows": len(rows),
        "size": args.size,
    }
    import transformers

    results["transformers"] = transformers.__version__

    # 1. Isolation, per attention implementation that runs here.
    results["isolation"] = {}
    for attn in ["sdpa", "flex_attention", "eager"]:
        try:
            model = tiny_qwen3(attn, device, dtype, args.size).eval()
            results["isolation"][attn] = isolation(model, rows, device, args.isolation_rows)
        except Exception as err:  # an implementation this torch/transformers cannot run here
            results["isolation"][attn] = {"error": f"{type(err).__name__}: {str(err)[:200]}"}
        print(f"isolation {attn}: {json.dumps(results['isolation'][attn])}", flush=True)

    # 2 + 3. Training: loss curve and tokens/s.
    model = tiny_qwen3("sdpa", device, dtype, args.size).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, args.steps) / args.steps)))
    loader = torch.utils.data.DataLoader(rows, batch_size=args.batch_rows, shuffle=True, collate_fn=lwm_collate.packed_collate, generator=torch.Generator().manual_seed(0))
    losses, step_tokens, step_seconds = [], 0, 0.0
    step = 0
    while step < args.steps:
        for batch in loader:
            if step >= args.steps:
                break
            ids, pos, labels = (batch[k].to(device, non_blocking=True) for k in ("input_ids", "position_ids", "labels"))
            sync()
            started = time.perf_counter()
            loss = model(input_ids=ids, position_ids=pos, labels=labels, use_cache=False).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            sync()
            if step >= 3:  # the first steps compile kernels and warm allocators
                step_seconds += time.perf_counter() - started
                step_tokens += ids.numel()
            losses.append(round(float(loss), 4))
            step += 1
    train_tps = step_tokens / step_seconds if step_seconds > 0 else float("nan")
    loader_tps, loader_tokens = loader_tokens_per_second(args.packed_dir, args.batch_rows, args.loader_epochs)
    results["loss_curve"] = losses
    results["loss_first_last"] = [losses[0], sum(losses[-10:]) / len(losses[-10:])]
    results["train_tokens_per_s"] = round(train_tps)
    results["loader_tokens_per_s"] = round(loader_tps)
    results["loader_tokens"] = loader_tokens
    results["loader_over_train"] = round(loader_tps / train_tps, 1)
    if cuda:
        results["max_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    print(json.dumps({k: v for k, v in results.items() if k != "loss_curve"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
