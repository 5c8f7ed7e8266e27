"""Megatron-LM trains lwm-data's loss mask: python/lwm_megatron's MaskedGPTDataset, window by window.

    python test/python/check_megatron_masked.py EXPORT_DIR OUTPUT_DIR --tokenizer-dir DIR

EXPORT_DIR is `lwm-data export megatron OUTPUT_DIR --append-eod <id>` (without --append-eod only the
flag-free configurations run, and the dataset must refuse the reset/eod flags). Megatron-core builds
the datasets as pretrain_gpt.py does (BlendedMegatronDatasetBuilder, GPTDatasetConfig, Megatron's own
HuggingFaceTokenizer over DIR; the compiled index helpers ship in the megatron-core wheel). For every
window of every configuration (the export's splits as --train/valid-data-path, one epoch and several,
with and without --reset-position-ids/--reset-attention-mask/--eod-mask-loss, a padded last
validation window, add_extra_token_to_sequence off), compared with what the Parquet shards say,
read here with pyarrow and concatenated in GPTDataset's document order (its `document_index`):

- the window is tokens [j*S, j*S + S + 1) of that concatenation for unshuffled sample j (S =
  seq_length): tokens, labels (the next tokens) equal the shards';
- loss_mask[t] is the shards' mask of token t + 1 (the label), 0 on padding and, with
  --eod-mask-loss, where the input is the appended EOD;
- position_ids restart and attention is block-diagonal after the appended EOD (not after the
  tokenizer's eos, `<|im_end|>` for Qwen3);
- over an epoch the trained tokens equal the manifest's loss tokens less the first token and the
  tail GPTDataset drops (its last partial window).

Negative controls, run here and required to fail the same comparison: megatron-core's plain
GPTDataset (all-ones mask; for Qwen3 also the EOD replaced by its pad id 0 and positions reset at
every `<|im_end|>`), and a MaskedGPTDataset whose mask is not shifted to the labels.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from megatron_windows import build, check, compare, dataset_config, failures, megatron_tokenizer, shard_documents  # noqa: E402  (sets up megatron-core and python/)
import torch  # noqa: E402
from megatron.core.datasets.gpt_dataset import GPTDataset  # noqa: E402

from lwm_megatron import MaskedGPTDataset  # noqa: E402

notes: list[str] = []


class UnshiftedMask(MaskedGPTDataset):
    """Negative control: the mask of token t put on label t (it belongs to label t - 1)."""

    def _label_loss_mask(self, window_mask):
        return window_mask[:-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    args = parser.parse_args()
    started = time.time()

    meta = json.loads((args.export / "megatron.json").read_text())
    manifest = json.loads((args.output / "manifest.json").read_text())
    eod = meta.get("append_eod")
    tokenizer = megatron_tokenizer(args.tokenizer_dir)
    boundary = tokenizer.eod if eod is None else eod
    notes.append(f"tokenizer eod {tokenizer.eod}, pad {tokenizer.pad}; export EOD {eod}")
    splits = [s for s in ("train", "validation", "test") if s in meta["splits"]]
    documents = {s: shard_documents(args.output, s, eod) for s in splits}
    for s in splits:
        loss = sum(int(m.sum()) for _, m in documents[s])
        want = manifest["splits"][s]["loss_tokens"] if "splits" in manifest else manifest["tokens"]["loss"]
        check(loss == want == meta["splits"][s]["loss_tokens"], f"{s}: shards hold {loss} loss tokens, manifest {want}, megatron.json {meta['splits'][s]['loss_tokens']}")
    prefixes = [str((args.export / meta["splits"][s]["prefix"]).resolve()) for s in splits]
    per_split = [([p], None) for p in prefixes] + [None] * (3 - len(prefixes))
    flags = eod is not None

    checked: list[str] = []
    with tempfile.TemporaryDirectory() as cache:
        def config(name, **overrides):
            return dataset_config(tokenizer, cache, name, flags, **{"blend_per_split": per_split, **overrides})

        epoch = sum(len(d[0]) for d in documents["train"])
        scenarios = [
            # (name, config, sizes): the export's splits as --train/--valid-data-path, one epoch each.
            ("flags", config("flags"), [None, None, None]),
            ("no-flags", config("no-flags", sequence_length=777, reset_position_ids=False, reset_attention_mask=False, eod_mask_loss=False), [None, None, None]),
            # ~2.5 epochs of train (training asks for iterations × batch): the last epoch shuffled apart.
            ("epochs", config("epochs", sequence_length=2048), [int(2.5 * epoch) // 2048, None, None]),
            ("no-extra-token", config("no-extra-token", sequence_length=1000, add_extra_token_to_sequence=False), [None, None, None]),
            # --data-path + --split: a validation share of train, its last partial window padded.
            ("split-padded", config("split-padded", blend_per_split=None, blend=([prefixes[0]], None), split="90,10,0", sequence_length=700, drop_last_partial_validation_sequence=False), [None, None, None]),
        ]
        for name, cfg, sizes in scenarios:
            built = build(MaskedGPTDataset, cfg, sizes)
            for slot, dataset in enumerate(built):
                if dataset is None:
                    continue
                split = splits[0] if cfg.blend is not None else splits[slot]
                label = f"{name}/{split}[{dataset.index_split.name}]"
                check(type(dataset) is MaskedGPTDataset, f"{label}: the builder returned {type(dataset).__name__}")
                differ, trained, concat_mask, padded = compare(dataset, documents[split], cfg, boundary, label)
                if name == "split-padded" and dataset.index_split.name == "valid":
                    check(padded == 1, f"{label}: {padded} padded windows, expected the last one (drop_last_partial_validation_sequence off)")
                for field, windows in differ.items():
                    check(False, f"{label}: {field} differs from the shards' in {len(windows)} of {len(dataset)} windows (first: {windows[0]})")
                check(float(dataset[None]["loss_mask"].sum()) == 0, f"{label}: the batch-padding sample trains tokens")
                checked.append(f"{label} {len(dataset)}×{cfg.sequence_length}" + (f" ({len(dataset.document_index) // len(dataset.indices)} epochs)" if len(dataset.document_index) > len(dataset.indices) else ""))
                if name in ("flags", "no-flags") and cfg.add_extra_token_to_sequence:
                    # One epoch: labels are tokens 1..n*S of the concatenation; the rest is dropped.
                    n, S = len(dataset), cfg.sequence_length
                    ends = np.concatenate([documents[split][d][0] for d in dataset.document_index]) == boundary
                    after_eod = int((concat_mask[1 : n * S + 1] * ends[: n * S]).sum()) if cfg.eod_mask_loss else 0
                    total = int(concat_mask.sum())
                    tail = int(concat_mask[n * S + 1 :].sum())
                    check(trained == total - int(concat_mask[0]) - tail - after_eod, f"{label}: {trained:.0f} tokens trained over the epoch, the shards give {total} - {int(concat_mask[0])} - {tail} - {after_eod}")
                    notes.append(f"{label}: {n} windows of {S}, {trained:,.0f} tokens trained = {total:,} loss tokens - {tail:,} in the dropped tail - {int(concat_mask[0])} first")

        notes.insert(1, "windows checked: " + ", ".join(checked))

        # Megatron-LM's loader: a torch DataLoader with worker processes (fork) and the default
        # collate gives the same batches as the dataset itself.
        main_cfg = scenarios[0][1]
        dataset = build(MaskedGPTDataset, main_cfg, [None, None, None])[0]
        loader = torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=2, multiprocessing_context="fork")
        for k, batch in enumerate(loader):
            rows = [dataset[8 * k + r] for r in range(len(batch["tokens"]))]
            for field, value in batch.items():
                check(torch.equal(value, torch.stack([row[field] for row in rows])), f"DataLoader batch {k}: {field} differs from the dataset's samples")

        # Negative controls: the same comparison must catch them.
        plain = build(GPTDataset, main_cfg, [None, None, None])[0]
        differ, trained, _, _ = compare(plain, documents[splits[0]], main_cfg, boundary, "control/plain")
        check("loss_mask" in differ, "control: plain GPTDataset's loss mask passed the comparison (it trains every token)")
        notes.append(
            f"control: plain GPTDataset ({splits[0]}) trains {trained:,.0f} tokens; windows that differ: "
            + ", ".join(f"{field} {len(w)}/{len(plain)}" for field, w in sorted(differ.items()))
        )
        unshifted = build(UnshiftedMask, main_cfg, [None, None, None])[0]
        differ, _, _, _ = compare(unshifted, documents[splits[0]], main_cfg, boundary, "control/unshifted")
        check(set(differ) == {"loss_mask"}, f"control: the unshifted mask gave differences {sorted(differ)}, expected loss_mask only")
        notes.append(f"control: mask not shifted to the labels: loss_mask differs in {len(differ.get('loss_mask', []))}/{len(unshifted)} windows")
        if eod is None:
            # Without an appended EOD the reset/eod flags would cut documents at the tokenizer's eos.
            try:
                build(MaskedGPTDataset, config("refuse", reset_position_ids=True), [None, None, None])
                check(False, "an export without --append-eod was accepted with --reset-position-ids")
            except ValueError:
                notes.append("without --append-eod the reset/eod flags are refused")

    if failures:
        print(f"check_megatron_masked: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures[:30]:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"check_megatron_masked: MaskedGPTDataset equals the shards window by window ({time.time() - started:.0f} s)")
    for note in notes:
        print(f"  {note}")


if __name__ == "__main__":
    main()
