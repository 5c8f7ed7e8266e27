"""Batching lwm-data shards in PyTorch: collate functions for `torch.utils.data.DataLoader`.

Rows of an lwm-data output have different lengths, so `DataLoader(ds, batch_size=8)` with the
default collate fails ("each element in list of batch should be of equal size"). Pick one:

- `PadCollator(pad_id)`: padded batches from unpacked shards (one sample per row). Returns
  `input_ids` (B, L) long, padded with `pad_id`; `attention_mask` (B, L) long, 1 on real tokens;
  `labels` (B, L) long: the token where `loss_mask` is 1, -100 where it is 0 and on padding.
  By default labels are NOT shifted: position t holds token t, as Hugging Face causal LMs and
  `Trainer` expect (the model shifts internally: logits at t are scored against labels at t + 1).
  `shift=True` gives the target of position t at t (labels[:, t] = labels_unshifted[:, t + 1],
  the last column -100), for a loop that computes `cross_entropy(logits, labels)` directly.
  `max_length` truncates longer rows (from the end); `pad_to_multiple_of` rounds L up.

- `packed_collate` / `PackedCollator()`: one flat sequence per batch (padding-free), the keys and
  dtypes of transformers' own `DataCollatorWithFlattening(return_flash_attn_kwargs=True)` (and of
  TRL's padding-free collator), plus `cu_seqlens` / `max_seqlen` for `flash_attn_varlen_func`.
  Works on packed shards (rows with `cu_seqlens` / `position_ids`: their documents are kept apart)
  and on unpacked shards (each row is one document). Returns:
  `input_ids` (1, T) long, the rows' tokens concatenated;
  `position_ids` (1, T) long, restarting at 0 at every document;
  `labels` (1, T) long, -100 where `loss_mask` is 0 and at every document's first token (so no
  document is trained to predict the next one's start; lwm-data masks those tokens anyway);
  `cu_seq_lens_q`, `cu_seq_lens_k` (n_docs + 1,) int32, the document boundaries
  `[0, len_1, len_1 + len_2, ..., T]`; `max_length_q`, `max_length_k` (int), the longest document;
  `cu_seqlens` (int32) and `max_seqlen` (int): the same two values under flash-attn's names.
  `shift=True` shifts labels as above, never across a document boundary (for your own loss; a
  transformers model shifts itself, so give it the default, unshifted labels).

  A transformers causal LM (checked with Qwen3, attn_implementation "sdpa", "eager",
  "flex_attention", transformers 5.23) keeps the documents apart only when it sees `position_ids`,
  NO `attention_mask`, and NO cache:

      out = model(**batch, use_cache=False)    # or set model.config.use_cache = False once

  transformers finds packed documents from `position_ids` restarts only when no KV cache exists,
  and a causal LM creates one by default (config.use_cache=True), in training too: the default
  call `model(**batch)` lets every document attend to the ones before it in the batch. Adding an
  `attention_mask` (even all ones) turns the detection off as well. The flash-attention kwargs
  (`cu_seq_lens_*`, `max_length_*`, `cu_seqlens`, `max_seqlen`) are ignored by "sdpa", "eager" and
  "flex_attention" (they neither break the call nor keep documents apart there); "flash_attention_2"
  / "_3" read `cu_seq_lens_*` / `max_length_*`. `Trainer` calls `model(**batch)`: set
  `model.config.use_cache = False` (gradient checkpointing turns the cache off in training only,
  not in evaluation) and `remove_unused_columns=False` (so `loss_mask`, `cu_seqlens`,
  `position_ids` reach the collate); TRL's `SFTTrainer` passes `use_cache=False` itself (README
  "Hugging Face Trainer and TRL").

Only torch is needed. Example (docs/packing-and-trainers.md "Batching in PyTorch"):

    import datasets, torch, lwm_collate
    ds = datasets.load_dataset("out/demo", split="train").select_columns(["input_ids", "loss_mask"])
    loader = torch.utils.data.DataLoader(ds, batch_size=8, collate_fn=lwm_collate.PadCollator(pad_id=151643))
    batch = next(iter(loader))   # input_ids, attention_mask, labels: (8, longest row)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

IGNORE_INDEX = -100


def _long(values: Any) -> torch.Tensor:
    return torch.as_tensor(values).to(torch.long).reshape(-1)


def _labels(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.where(mask == 1, ids, torch.full_like(ids, IGNORE_INDEX))


def _shift(labels: torch.Tensor, starts: torch.Tensor | None = None) -> torch.Tensor:
    """labels[..., t] <- labels[..., t + 1]; the last position, and each position before a
    document start (in `starts`, 1-D index over the last axis), get -100."""
    shifted = torch.full_like(labels, IGNORE_INDEX)
    shifted[..., :-1] = labels[..., 1:]
    if starts is not None and starts.numel() > 0:
        before = starts[starts > 0] - 1
        shifted[..., before] = IGNORE_INDEX
    return shifted


class PadCollator:
    """Collate for unpacked rows (`input_ids`, `loss_mask`): right-padded batches."""

    def __init__(self, pad_id: int, *, shift: bool = False, max_length: int | None = None, pad_to_multiple_of: int | None = None):
        if not isinstance(pad_id, int):
            raise TypeError(f"pad_id must be a token id (int), got {pad_id!r}")
        self.pad_id = pad_id
        self.shift = shift
        self.max_length = max_length
        self.pad_to_multiple_of = pad_to_multiple_of

    def __call__(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        if len(rows) == 0:
            raise ValueError("empty batch")
        for row in rows:
            if "cu_seqlens" in row:
                raise ValueError("a packed row (it has cu_seqlens): use packed_collate, or pad packed rows on purpose with their documents kept apart")
        ids = [_long(row["input_ids"]) for row in rows]
        masks = [_long(row["loss_mask"]) for row in rows]
        for k, (i, m) in enumerate(zip(ids, masks)):
            if i.shape != m.shape:
                raise ValueError(f"row {k}: {i.numel()} input_ids but {m.numel()} loss_mask values")
        if self.max_length is not None:
            ids = [i[: self.max_length] for i in ids]
            masks = [m[: self.max_length] for m in masks]
        width = max(i.numel() for i in ids)
        if self.pad_to_multiple_of:
            width = -(-width // self.pad_to_multiple_of) * self.pad_to_multiple_of
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
        labels = torch.full((len(rows), width), IGNORE_INDEX, dtype=torch.long)
        for r, (i, m) in enumerate(zip(ids, masks)):
            n = i.numel()
            input_ids[r, :n] = i
            attention_mask[r, :n] = 1
            labels[r, :n] = _labels(i, m)
        if self.shift:
            labels = _shift(labels)
        return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


class PackedCollator:
    """Collate into one flat varlen sequence (see the module docstring)."""

    def __init__(self, *, shift: bool = False):
        self.shift = shift

    def __call__(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        if len(rows) == 0:
            raise ValueError("empty batch")
        ids, labels, positions, bounds = [], [], [], [0]
        for k, row in enumerate(rows):
            i, m = _long(row["input_ids"]), _long(row["loss_mask"])
            if i.shape != m.shape:
                raise ValueError(f"row {k}: {i.numel()} input_ids but {m.numel()} loss_mask values")
            n = i.numel()
            if "cu_seqlens" in row:
                cu = _long(row["cu_seqlens"])
                if cu.numel() < 2 or int(cu[0]) != 0 or int(cu[-1]) != n or bool((cu[1:] <= cu[:-1]).any()):
                    raise ValueError(f"row {k}: cu_seqlens {cu.tolist()[:8]}... is not 0 < ... < num_tokens ({n})")
            else:
                cu = torch.tensor([0, n], dtype=torch.long)
            lengths = cu[1:] - cu[:-1]
            pos = _long(row["position_ids"]) if "position_ids" in row else torch.cat([torch.arange(int(length)) for length in lengths])
            expected = torch.cat([torch.arange(int(length)) for length in lengths])
            if not torch.equal(pos, expected):
                raise ValueError(f"row {k}: position_ids do not restart at 0 at each cu_seqlens boundary")
            row_labels = _labels(i, m)
            row_labels[cu[:-1]] = IGNORE_INDEX
            offset = bounds[-1]
            ids.append(i)
            labels.append(row_labels)
            positions.append(pos)
            bounds.extend(int(b) + offset for b in cu[1:])
        cu_seqlens = torch.tensor(bounds, dtype=torch.int32)
        flat_labels = torch.cat(labels)
        if self.shift:
            flat_labels = _shift(flat_labels, cu_seqlens[:-1].to(torch.long))
        longest = int((cu_seqlens[1:] - cu_seqlens[:-1]).max())
        # transformers' DataCollatorWithFlattening names and dtypes (int32 boundaries, Python int
        # lengths), then flash-attn's names for flash_attn_varlen_func.
        return {
            "input_ids": torch.cat(ids).unsqueeze(0),
            "position_ids": torch.cat(positions).unsqueeze(0),
            "labels": flat_labels.unsqueeze(0),
            "cu_seq_lens_q": cu_seqlens.clone(),
            "cu_seq_lens_k": cu_seqlens.clone(),
            "max_length_q": longest,
            "max_length_k": longest,
            "cu_seqlens": cu_seqlens,
            "max_seqlen": longest,
        }


def packed_collate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`PackedCollator()` as a plain function (unshifted labels)."""
    return PackedCollator()(rows)
