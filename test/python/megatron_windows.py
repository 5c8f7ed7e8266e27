"""What test/python/check_megatron_masked.py and check_megatron_weighted.py share: megatron-core set up
as pretrain_gpt.py uses it, the shards' documents in the export's order, what each GPTDataset window
must be from the shards alone, and the window-by-window comparison.

Importing it sets up megatron-core (warnings quiet, the compiled index helpers checked) and puts
the project's python/ (lwm_megatron) on sys.path.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)  # megatron-core logs every index build at INFO/WARNING

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
try:
    # GPTDataset's sample index is built by this C++ extension; the megatron-core wheel ships it
    # compiled (cp311 manylinux), so nothing is built here.
    from megatron.core.datasets import helpers_cpp  # noqa: E402, F401
except ImportError as error:  # pragma: no cover - an environment problem, said plainly
    sys.exit(
        f"megatron_windows: megatron.core.datasets.helpers_cpp is not importable ({error}); "
        "install the megatron-core wheel for this Python (test/python/requirements.txt), or build it: "
        "pip install pybind11 && make -C $(python -c 'import megatron.core.datasets as d, os; print(os.path.dirname(d.__file__))')"
    )
from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder  # noqa: E402
from megatron.core.datasets.gpt_dataset import GPTDatasetConfig  # noqa: E402
from megatron.core.tokenizers import MegatronTokenizer  # noqa: E402

failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


def megatron_tokenizer(tokenizer_dir: Path):
    """Megatron's --tokenizer-type HuggingFaceTokenizer --tokenizer-model DIR, as build_tokenizer makes it."""
    return MegatronTokenizer.from_pretrained(tokenizer_path=str(tokenizer_dir), metadata_path={"library": "huggingface"})


def shard_documents(output: Path, split: str, eod: int | None, column: str = "loss_mask"):
    """[(ids, labels)] of a split as the export writes them: shards in path order, a packed row's
    documents cut at cu_seqlens, the appended EOD labelled 0. `column` is loss_mask (int64 0/1) or
    loss_weight (float32, the shards' own values)."""
    dtype = np.float32 if column == "loss_weight" else np.int64
    manifest = json.loads((output / "manifest.json").read_text())
    shards = sorted((s for s in manifest["shards"] if s.get("split", "train") == split), key=lambda s: s["path"])
    documents = []
    for shard in shards:
        table = pq.read_table(output / shard["path"])
        packed = "cu_seqlens" in table.column_names
        for row in table.select(["input_ids", column] + (["cu_seqlens"] if packed else [])).to_pylist():
            cuts = row["cu_seqlens"] if packed else [0, len(row["input_ids"])]
            for start, end in zip(cuts, cuts[1:]):
                ids, labels = row["input_ids"][start:end], row[column][start:end]
                if eod is not None:
                    ids, labels = ids + [eod], labels + [0]
                documents.append((np.array(ids, dtype=np.int64), np.array(labels, dtype=dtype)))
    return documents


def dataset_config(tokenizer, cache: str, name: str, flags: bool, **overrides) -> GPTDatasetConfig:
    """pretrain_gpt.py's GPTDatasetConfig: seed 1234, windows of 1024, the reset/eod flags on when the export
    appends an EOD; `overrides` give the data (blend_per_split, or blend + split) and any other field."""
    base = dict(
        random_seed=1234, sequence_length=1024, tokenizer=tokenizer, path_to_cache=f"{cache}/{name}",
        reset_position_ids=flags, reset_attention_mask=flags, eod_mask_loss=flags,
    )  # fmt: skip
    base.update(overrides)
    return GPTDatasetConfig(**base)


def expected_window(concat_ids, concat_mask, j, config, boundary):
    """What sample j (unshuffled) must be, from the shards alone."""
    S, extra = config.sequence_length, int(config.add_extra_token_to_sequence)
    text = concat_ids[j * S : j * S + S + extra]
    lwm = concat_mask[j * S : j * S + S + extra]
    pad = S + extra - len(text)
    text = np.concatenate([text, np.full(pad, -1)])  # GPTDataset pads a short last window
    lwm = np.concatenate([lwm, np.zeros(pad, dtype=np.int64)])
    if extra:
        tokens, labels, label_mask = text[:-1], text[1:], lwm[1:]
    else:
        tokens, labels, label_mask = text, np.append(text[1:], -1), np.append(lwm[1:], 0)
    loss = label_mask * (labels != -1)
    if config.eod_mask_loss:
        loss = loss * (tokens != boundary)
    ends = tokens == boundary
    # A document starts after each boundary token: its segment number and first position.
    segment = np.concatenate([[0], np.cumsum(ends)[:-1]])
    if config.reset_position_ids:
        starts = np.concatenate([[0], np.flatnonzero(ends) + 1])
        positions = np.arange(S) - starts[segment]
    else:
        positions = np.arange(S)
    allowed = np.tril(np.ones((S, S), dtype=bool))
    if config.reset_attention_mask:
        allowed &= segment[:, None] == segment[None, :]
    return {
        "tokens": np.where(tokens == -1, 0, tokens),
        "labels": np.where(labels == -1, 0, labels),
        "loss_mask": loss.astype(np.float32),
        "position_ids": positions,
        "attention_mask": ~allowed[None],  # Megatron: True = not attended
    }


def compare(dataset, documents, config, boundary, label):
    """{field: windows that differ} for every window of `dataset` against the shards, plus the
    total trained tokens and the total GPTDataset's windows cover."""
    lengths = np.array([len(d[0]) for d in documents])
    index_lengths = dataset.dataset.sequence_lengths
    check(np.array_equal(lengths, index_lengths), f"{label}: the shards' documents do not have the indexed dataset's lengths")
    order = np.asarray(dataset.document_index)
    check(np.array_equal(np.sort(order), np.sort(np.tile(dataset.indices, len(order) // max(1, len(dataset.indices))))), f"{label}: document_index is not whole epochs of the split's documents")
    concat_ids = np.concatenate([documents[d][0] for d in order])
    concat_mask = np.concatenate([documents[d][1] for d in order])
    S = config.sequence_length
    # GPTDataset's windows are consecutive: sample j starts at token j*S of the concatenation.
    starts = np.concatenate([[0], np.cumsum(lengths[order])])
    sample_index = np.asarray(dataset.sample_index)
    window_starts = (starts[sample_index[:, 0]] + sample_index[:, 1])[:-1]  # the last row is the end
    check(np.array_equal(window_starts, np.arange(len(window_starts)) * S), f"{label}: GPTDataset's windows are not consecutive runs of {S} tokens")
    differ: dict[str, list[int]] = {}
    trained = 0.0
    padded = 0
    for i in range(len(dataset)):
        sample = dataset[i]
        j = int(dataset.shuffle_index[i])
        padded += j * S + S + config.add_extra_token_to_sequence > len(concat_ids)
        want = expected_window(concat_ids, concat_mask, j, config, boundary)
        for field, value in want.items():
            if field not in sample:
                continue
            if not np.array_equal(sample[field].numpy(), value):
                differ.setdefault(field, []).append(i)
        trained += float(sample["loss_mask"].sum())
    return differ, trained, concat_mask, padded


def build(cls, config, sizes):
    return BlendedMegatronDatasetBuilder(cls, sizes, lambda: True, config).build()


