"""Megatron-LM training on lwm-data's loss mask: `MaskedGPTDataset`.

`lwm-data export megatron` writes, per split, `<split>.bin/.idx` (the token ids) and
`<split>_loss_mask.bin/.idx` (uint8, 1 where the token carries the loss), the same documents in
the same order. megatron-core's `GPTDataset` reads only the first: its loss mask is all ones (less
the tokens after an EOD with `--eod-mask-loss`), so system prompts, actions and the observations
lwm-data masked are all trained. `MaskedGPTDataset` is `GPTDataset` with the mask read alongside:

- the windows are GPTDataset's own (its document, sample and shuffle indices, built and cached by
  GPTDataset): the mask window is cut by GPTDataset's `_query_document_sample_shuffle_indices` from
  the `_loss_mask` dataset, so it covers exactly the `seq_length + 1` tokens of the token window,
  across document boundaries, epochs and shuffling;
- GPTDataset's `labels` are `text[1:]`: the loss at position t predicts token t + 1, so it takes
  lwm-data's mask of token t + 1. The result is multiplied into GPTDataset's own `loss_mask`
  (`--eod-mask-loss`, the padding of a last partial window), keys and dtypes unchanged, so
  Megatron-LM's `get_batch` and `loss_func` use it as they are;
- the document boundary for `--reset-position-ids/--reset-attention-mask/--eod-mask-loss` is the
  token the export appended (`--append-eod`, recorded in `megatron.json`). GPTDataset takes the
  tokenizer's `eod`, which for a Hugging Face tokenizer is its `eos_token`: for Qwen3's chat
  tokenizers `<|im_end|>` (151645), so positions would restart at every turn;
- GPTDataset's padding id is the tokenizer's `pad` when it has one, and GPTDataset masks that id in
  the labels and replaces it by 0 in the inputs wherever it occurs: for Qwen3 `<|endoftext|>`
  (151643), the very EOD appended (and the end of every CPT text document). lwm-data's documents
  hold no padding, so this dataset pads with -1, the id megatron-core itself falls back to.

With float weights (`mask.weights`: shards with `loss_weight`), the export also writes
`<split>_loss_weight.bin/.idx` (float32, 0 where the mask is 0) and this dataset puts the weight of
each label token into `loss_mask` instead of its 0/1 mask: Megatron-LM's `loss_func` computes
`sum(losses * loss_mask) / sum(loss_mask)`, so the loss becomes the weighted mean lwm-data's HF
snippet computes (docs/packing-and-trainers.md). GPTDataset's window query concatenates the parts
into int64, which would truncate a float: the weights go through it as their float32 bit patterns
(int32, exact in int64) and are read back as float32.

Use: in Megatron-LM's `pretrain_gpt.py`, `train_valid_test_datasets_provider`, build
`MaskedGPTDataset` instead of `GPTDataset` (docs/exports.md "Megatron-LM"). Tested against the Parquet
shards window by window: test/python/check_megatron_masked.py.
"""

from __future__ import annotations

import copy
import json
import logging
import os
from typing import Any, Dict, Optional

import numpy
import torch
from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
from megatron.core.datasets.indexed_dataset import IndexedDataset
from megatron.core.datasets.object_storage_utils import ObjectStorageConfig, is_object_storage_path
from megatron.core.datasets.utils import Split

logger = logging.getLogger(__name__)

LOSS_MASK_SUFFIX = "_loss_mask"
"""`<prefix>_loss_mask.bin/.idx` beside `<prefix>.bin/.idx`, as `lwm-data export megatron` writes them."""

LOSS_WEIGHT_SUFFIX = "_loss_weight"
"""`<prefix>_loss_weight.bin/.idx` (float32), written only for shards with `loss_weight` (mask.weights)."""

PAD_TOKEN_ID = -1
"""The id GPTDataset pads a short last window with: never a real token (megatron_dataset._PAD_TOKEN_ID)."""


def export_metadata(dataset_path: str) -> Optional[Dict[str, Any]]:
    """The `megatron.json` `lwm-data export megatron` wrote beside the prefix, or None."""
    if is_object_storage_path(dataset_path):
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(dataset_path)), "megatron.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


class _BoundaryTokenizer:
    """The config's tokenizer with `eod` set to the documents' boundary token; all else delegated."""

    def __init__(self, tokenizer: Any, eod: int) -> None:
        self._tokenizer = tokenizer
        self._eod = eod

    @property
    def eod(self) -> int:
        return self._eod

    def __getattr__(self, name: str) -> Any:
        if name in ("_tokenizer", "_eod") or name.startswith("__"):  # not yet set while unpickling
            raise AttributeError(name)
        return getattr(self._tokenizer, name)


class _Float32Bits:
    """A float32 IndexedDataset read as int32 bit patterns: GPTDataset's window query concatenates
    into int64, which keeps integers exactly; `.view(numpy.float32)` of the int32 window restores them."""

    def __init__(self, dataset: IndexedDataset) -> None:
        self._dataset = dataset

    def get(self, idx: int, offset: int = 0, length: Optional[int] = None) -> numpy.ndarray:
        return self._dataset.get(idx, offset=offset, length=length).view(numpy.int32)

    def __len__(self) -> int:
        return len(self._dataset)


class MaskedGPTDataset(GPTDataset):
    """megatron-core's GPTDataset whose `loss_mask` also carries lwm-data's loss mask.

    Same constructor as GPTDataset (BlendedMegatronDatasetBuilder builds it from a
    GPTDatasetConfig); `<dataset_path>_loss_mask` must exist with the same sequence lengths.
    """

    def __init__(
        self,
        indexed_dataset: IndexedDataset,
        dataset_path: Optional[str],
        indexed_indices: numpy.ndarray,
        num_samples: Optional[int],
        index_split: Split,
        config: GPTDatasetConfig,
    ) -> None:
        super().__init__(indexed_dataset, dataset_path, indexed_indices, num_samples, index_split, config)
        if dataset_path is None:
            raise ValueError("MaskedGPTDataset needs a dataset path (mock data has no loss mask)")
        self.loss_mask_dataset = self._load_loss_mask(dataset_path, config, indexed_dataset)
        self.loss_weight_dataset = self._load_loss_weight(dataset_path, config, indexed_dataset)

        # Pad only with an id no document holds (see the module docstring).
        self._pad_token_id = PAD_TOKEN_ID

        # The document boundary GPTDataset's reset/eod flags act on: the export's appended EOD.
        uses_eod = config.reset_position_ids or config.reset_attention_mask or config.eod_mask_loss
        meta = export_metadata(dataset_path)
        boundary = None if meta is None or meta.get("append_eod") is None else int(meta["append_eod"])
        if uses_eod and meta is not None and boundary is None:
            raise ValueError(
                f"{dataset_path}: --reset-position-ids/--reset-attention-mask/--eod-mask-loss need an "
                "end-of-document token after every document, and this export has none: export with "
                "`lwm-data export megatron <output> --append-eod <id>` (Qwen: 151643), or drop those flags"
            )
        if boundary is not None and boundary != config.tokenizer.eod:
            if uses_eod:
                logger.info(
                    "MaskedGPTDataset: document boundary %d (megatron.json append_eod), not the tokenizer's eod %d",
                    boundary,
                    config.tokenizer.eod,
                )
            self.config = copy.copy(config)  # the builder shares `config` between datasets
            self.config.tokenizer = _BoundaryTokenizer(config.tokenizer, boundary)
        self.document_boundary = self.config.tokenizer.eod

        # A view of this dataset over the mask: GPTDataset's window query run on it cuts the mask
        # window exactly as the token window (padding with 0: no loss).
        # With weights, the view reads them (their bit patterns; 0.0 is all-zero bits, so padding stays 0).
        self._mask_view = copy.copy(self)
        self._mask_view.dataset = self.loss_mask_dataset if self.loss_weight_dataset is None else _Float32Bits(self.loss_weight_dataset)
        self._mask_view._pad_token_id = 0

    @staticmethod
    def _load_loss_mask(dataset_path: str, config: GPTDatasetConfig, tokens: IndexedDataset) -> IndexedDataset:
        prefix = dataset_path + LOSS_MASK_SUFFIX
        storage = None
        if is_object_storage_path(prefix):
            storage = ObjectStorageConfig(path_to_idx_cache=config.object_storage_cache_path)
        elif not (os.path.isfile(prefix + ".idx") and os.path.isfile(prefix + ".bin")):
            raise FileNotFoundError(
                f"{prefix}.idx/.bin not found: MaskedGPTDataset reads the loss mask `lwm-data export megatron` "
                "writes beside the token ids"
            )
        mask = IndexedDataset(prefix, multimodal=False, mmap=config.mmap_bin_files, object_storage_config=storage)
        if mask.index.dtype != numpy.uint8 or not numpy.array_equal(mask.sequence_lengths, tokens.sequence_lengths):
            raise ValueError(f"{prefix}: not a uint8 loss mask with the sequence lengths of {dataset_path}")
        return mask

    @staticmethod
    def _load_loss_weight(dataset_path: str, config: GPTDatasetConfig, tokens: IndexedDataset) -> Optional[IndexedDataset]:
        """`<prefix>_loss_weight` when the export wrote one (shards with loss_weight), else None."""
        prefix = dataset_path + LOSS_WEIGHT_SUFFIX
        if is_object_storage_path(prefix):
            return None  # no megatron.json to say whether weights exist there: the 0/1 mask is used
        if not (os.path.isfile(prefix + ".idx") and os.path.isfile(prefix + ".bin")):
            meta = export_metadata(dataset_path)
            if meta is not None and meta.get("loss_weight_dtype") is not None:
                raise FileNotFoundError(f"{prefix}.idx/.bin not found, but megatron.json says the export has loss weights")
            return None
        weights = IndexedDataset(prefix, multimodal=False, mmap=config.mmap_bin_files)
        if weights.index.dtype != numpy.float32 or not numpy.array_equal(weights.sequence_lengths, tokens.sequence_lengths):
            raise ValueError(f"{prefix}: not float32 loss weights with the sequence lengths of {dataset_path}")
        return weights

    def _label_loss_mask(self, window_mask: torch.Tensor) -> torch.Tensor:
        """lwm-data's mask of each label: label t is token t + 1 of the window."""
        if self.config.add_extra_token_to_sequence:
            return window_mask[1:]
        # labels = roll(text, -1) with the last one padding (masked by GPTDataset already).
        return torch.cat([window_mask[1:], window_mask.new_zeros(1)])

    def __getitem__(self, idx: Optional[int]) -> Dict[str, torch.Tensor]:
        sample = super().__getitem__(idx)
        window_mask, _ = GPTDataset._query_document_sample_shuffle_indices(self._mask_view, 0 if idx is None else idx)
        if self.loss_weight_dataset is not None:
            window_mask = window_mask.astype(numpy.int32).view(numpy.float32)
        label_mask = self._label_loss_mask(torch.from_numpy(window_mask))
        sample["loss_mask"] = sample["loss_mask"] * label_mask.to(sample["loss_mask"].dtype)
        return sample
