"""Megatron-LM trains lwm-data's float loss weights: MaskedGPTDataset over a weighted export, window by window.

    python test/python/check_megatron_weighted.py EXPORT_DIR OUTPUT_DIR --tokenizer-dir DIR

OUTPUT_DIR is a run with `mask.weights` (shards with `loss_weight`), EXPORT_DIR its
`lwm-data export megatron --append-eod <id>` (which then also writes `<split>_loss_weight`,
float32). MaskedGPTDataset (python/lwm_megatron), built by megatron-core's
BlendedMegatronDatasetBuilder with Megatron's HuggingFaceTokenizer as pretrain_gpt.py does, must
give in every window `loss_mask[t]` = the shards' `loss_weight` of label token t + 1 (bit for bit,
float32), 0 on padding and after the appended EOD: the comparison of check_megatron_masked.py (megatron_windows.py)
with the weights in place of the 0/1 mask. Megatron-LM's loss_func is sum(losses * loss_mask) / sum(loss_mask):
with these weights, the weighted mean of the HF snippet (docs/packing-and-trainers.md).

Negative controls, required to fail the same comparison: the export with its `_loss_weight` files
removed (MaskedGPTDataset then trains the 0/1 mask), and a dataset that reads the float weights
through GPTDataset's window query as they are (its int64 concatenation truncates them).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import megatron_windows as shared  # noqa: E402  (sets up megatron-core and python/)
from megatron.core.datasets.gpt_dataset import GPTDataset  # noqa: E402

from lwm_megatron import MaskedGPTDataset  # noqa: E402


class RawFloatWeights(MaskedGPTDataset):
    """Negative control: the weights read through GPTDataset's window query as floats (no bit view)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._mask_view.dataset = self.loss_weight_dataset

    def __getitem__(self, idx):
        sample = super(MaskedGPTDataset, self).__getitem__(idx)
        window, _ = GPTDataset._query_document_sample_shuffle_indices(self._mask_view, 0 if idx is None else idx)
        import torch

        sample["loss_mask"] = sample["loss_mask"] * self._label_loss_mask(torch.from_numpy(window)).to(sample["loss_mask"].dtype)
        return sample


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()
    failures: list[str] = []

    meta = json.loads((args.export / "megatron.json").read_text())
    eod = meta.get("append_eod")
    if meta.get("loss_weight_dtype") != "float32":
        sys.exit(f"check_megatron_weighted: {args.export}/megatron.json has no float32 loss weights")
    tokenizer = shared.megatron_tokenizer(args.tokenizer_dir)
    boundary = tokenizer.eod if eod is None else eod
    documents = shared.shard_documents(args.output, "train", eod, column="loss_weight")
    weights = np.concatenate([w for _, w in documents])
    distinct = sorted(set(weights[weights > 0].tolist()))
    if len(distinct) < 3:
        sys.exit(f"check_megatron_weighted: the shards' weights are too uniform to test: {distinct}")
    flags = eod is not None

    with tempfile.TemporaryDirectory() as work:
        def config(name: str, prefix: str, **overrides):
            return shared.dataset_config(tokenizer, work, f"cache-{name}", flags, **{"blend_per_split": [([prefix], None), None, None], **overrides})

        prefix = str((args.export / meta["splits"]["train"]["prefix"]).resolve())
        results = {}
        for name, cfg in (
            ("flags", config("flags", prefix)),
            ("no-extra-token", config("no-extra-token", prefix, sequence_length=1000, add_extra_token_to_sequence=False)),
        ):
            dataset = shared.build(MaskedGPTDataset, cfg, [None, None, None])[0]
            differ, trained, _, _ = shared.compare(dataset, documents, cfg, boundary, f"weighted/{name}")
            results[name] = (len(dataset), trained)
            for field, windows in differ.items():
                failures.append(f"{name}: {field} differs from the shards' weights in {len(windows)} of {len(dataset)} windows (first: {windows[0]})")
            distinct_in_windows = {float(v) for i in range(len(dataset)) for v in dataset[i]["loss_mask"].unique().tolist()}
            if len(distinct_in_windows - {0.0, 1.0}) < 2:
                failures.append(f"{name}: the windows' loss_mask holds no float weights: {sorted(distinct_in_windows)}")

        # Control 1: the same export without its weight files trains the 0/1 mask, which the comparison catches.
        plain_export = Path(work) / "no-weights"
        shutil.copytree(args.export, plain_export)
        for path in plain_export.glob("*_loss_weight.*"):
            path.unlink()
        plain_meta = {k: v for k, v in meta.items() if k != "loss_weight_dtype"}
        (plain_export / "megatron.json").write_text(json.dumps(plain_meta))
        plain_prefix = str(plain_export / meta["splits"]["train"]["prefix"])
        cfg = config("control-mask", plain_prefix)
        dataset = shared.build(MaskedGPTDataset, cfg, [None, None, None])[0]
        differ, _, _, _ = shared.compare(dataset, documents, cfg, boundary, "control/mask")
        if "loss_mask" not in differ:
            failures.append("control: the 0/1 mask passed the comparison with the float weights")
        control_mask = len(differ.get("loss_mask", []))
        # Control 2: floats through GPTDataset's int64 window concatenation are truncated.
        cfg = config("control-raw", prefix)
        dataset = shared.build(RawFloatWeights, cfg, [None, None, None])[0]
        try:
            differ, _, _, _ = shared.compare(dataset, documents, cfg, boundary, "control/raw")
            if "loss_mask" not in differ:
                failures.append("control: weights read as raw floats through the window query passed the comparison")
            control_raw = f"differ in {len(differ.get('loss_mask', []))} windows"
        except TypeError as error:  # numpy refuses the float -> int64 concatenation outright
            control_raw = f"refused ({error})"

    if failures or shared.failures:
        print("check_megatron_weighted: problems:", file=sys.stderr)
        for failure in (failures + shared.failures)[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    n, trained = results["flags"]
    print(
        f"check_megatron_weighted: MaskedGPTDataset's loss_mask equals the shards' loss_weight window by window "
        f"({n} windows of 1024, trained weight {trained:,.2f}, {len(distinct)} distinct weights); "
        f"controls caught: the 0/1 mask differs in {control_mask} windows; raw floats through the window query: {control_raw}"
    )


if __name__ == "__main__":
    main()
