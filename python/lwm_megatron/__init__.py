"""Megatron-LM training on lwm-data's loss mask (see dataset.py; docs/exports.md "Megatron-LM")."""

from .dataset import LOSS_MASK_SUFFIX, PAD_TOKEN_ID, MaskedGPTDataset, export_metadata  # noqa: F401

__all__ = ["LOSS_MASK_SUFFIX", "PAD_TOKEN_ID", "MaskedGPTDataset", "export_metadata"]
