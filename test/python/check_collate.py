"""Check of notebooks/lwm_collate.py on real outputs, as a trainer uses it.

    python test/python/check_collate.py UNPACKED_DIR PACKED_DIR --tokenizer-dir DIR

1. The README's snippet: `datasets.load_dataset(UNPACKED_DIR)` + `DataLoader(batch_size=8)` fails
   with the default collate (ragged rows) and works with `PadCollator(pad_id)`: every row comes
   back unchanged before its padding, padding is the pad id with attention 0 and label -100,
   labels are the token where loss_mask is 1 and -100 elsewhere, the batches hold every row and
   exactly the manifest's loss tokens; `shift=True` moves labels one left; `max_length` and
   `pad_to_multiple_of` do what they say. A tiny causal LM gives each padded sample the loss it
   has alone (padding changes nothing), and HF-style internal shifting of the default labels
   equals plain cross-entropy on `shift=True` labels.
2. `packed_collate` over the packed output (`load_dataset(PACKED_DIR)`): the batch is the rows'
   tokens concatenated, `cu_seqlens` (int32) the rows' document boundaries offset into the batch,
   `position_ids` restarting at each, `max_seqlen` the longest document, labels -100 at every
   document start and where loss_mask is 0; a tiny causal LM with block-diagonal attention from
   `cu_seqlens` (what flash_attn_varlen_func computes) gives every document of the batch the loss
   the same document has alone in the unpacked output. Over unpacked rows each row is a document.
   Every packed batch equals what transformers' own `DataCollatorWithFlattening(return_flash_attn_kwargs=True)`
   gives for the same documents and labels (`input_ids`, `position_ids`, `labels`, `cu_seq_lens_q/k`,
   `max_length_q/k`: values and dtypes), and the comparison is shown to catch a batch whose positions
   do not restart or whose boundaries are int64. (A transformers model on these batches:
   check_hf_training.py.)
"""

import argparse
import json
import sys
import atexit
import shutil
import tempfile
from pathlib import Path

import datasets
import torch
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
import lwm_collate  # noqa: E402

failures: list[str] = []
# A fresh datasets cache: outputs rewritten in place must never be read from a stale cache.
CACHE = tempfile.mkdtemp(prefix="lwm-collate-datasets-")
atexit.register(shutil.rmtree, CACHE, ignore_errors=True)
VOCAB = 4093  # ids folded into a small vocabulary: logits over 151k entries would not fit a CPU check


def check(condition: bool, message: str) -> None:
    if not condition:
        failures.append(message)


class TinyLM(torch.nn.Module):
    """Causal LM whose attention is given as a boolean mask (True = may attend)."""

    def __init__(self, width: int = 32, positions: int = 8192):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(VOCAB, width)
        self.position = torch.nn.Embedding(positions, width)
        self.attn = torch.nn.MultiheadAttention(width, 2, batch_first=True)
        self.head = torch.nn.Linear(width, VOCAB)

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids % VOCAB) + self.position(positions)
        heads = self.attn.num_heads
        mask = ~allowed.repeat_interleave(heads, dim=0)  # (B*heads, L, L), True = blocked
        out, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return self.head(x + out).double()


def causal(n: int) -> torch.Tensor:
    return torch.tril(torch.ones(n, n, dtype=torch.bool))


def summed_loss(logits: torch.Tensor, labels: torch.Tensor, shifted: bool) -> torch.Tensor:
    """Sum of cross-entropy over labels != -100; `shifted=False` shifts as HF causal LMs do."""
    if not shifted:
        logits, labels = logits[:, :-1], labels[:, 1:]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), (labels % VOCAB).where(labels != -100, labels).reshape(-1), ignore_index=-100, reduction="sum")


def check_padded(out: Path, manifest: dict, pad_id: int) -> None:
    dataset = datasets.load_dataset(str(out), split="train", cache_dir=CACHE).select_columns(["id", "input_ids", "loss_mask"])
    try:
        next(iter(torch.utils.data.DataLoader(dataset.with_format("torch"), batch_size=8)))
        failures.append("the default collate batched ragged rows: the premise of lwm_collate is gone")
    except (RuntimeError, ValueError):
        pass

    rows = {row["id"]: row for row in dataset}
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=lwm_collate.PadCollator(pad_id))
    shifted_loader = torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=lwm_collate.PadCollator(pad_id, shift=True))
    seen = loss_tokens = 0
    for batch, shifted, start in zip(loader, shifted_loader, range(0, len(dataset), 8)):
        ids, attention, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
        check(ids.dtype == torch.long and labels.dtype == torch.long and attention.dtype == torch.long, "dtypes are not long")
        ordered = dataset.select(range(start, min(start + 8, len(dataset))))
        for r, row in enumerate(ordered):
            n = len(row["input_ids"])
            where = f"row {start + r} id={row['id']}"
            check(ids[r, :n].tolist() == row["input_ids"], f"{where}: ids changed by collation")
            check(bool((ids[r, n:] == pad_id).all()), f"{where}: padding is not the pad id")
            check(attention[r].tolist() == [1] * n + [0] * (ids.shape[1] - n), f"{where}: attention_mask wrong")
            want = [t if m == 1 else -100 for t, m in zip(row["input_ids"], row["loss_mask"])] + [-100] * (ids.shape[1] - n)
            check(labels[r].tolist() == want, f"{where}: labels are not input_ids where loss_mask is 1, -100 elsewhere")
            check(shifted["labels"][r].tolist() == want[1:] + [-100], f"{where}: shift=True labels are not the labels moved one left")
            loss_tokens += sum(row["loss_mask"])
        seen += ids.shape[0]
    check(seen == len(rows) == manifest["counts"]["samples_out"], f"batches held {seen} rows, manifest {manifest['counts']['samples_out']}")
    check(loss_tokens == manifest["tokens"]["loss"], f"labels cover {loss_tokens} tokens, manifest loss tokens {manifest['tokens']['loss']}")

    # Padding changes nothing: each sample's loss in the batch equals its loss alone, and HF's
    # internal shift of the default labels equals cross-entropy on shift=True labels. (Rows cut to
    # WINDOW tokens keep the logits small on a CPU.)
    window = 384
    model = TinyLM()
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=lwm_collate.PadCollator(pad_id, max_length=window))
    shifted_loader = torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=lwm_collate.PadCollator(pad_id, max_length=window, shift=True))
    for batch, shifted, start in zip(loader, shifted_loader, range(0, len(dataset), 8)):
        ids, attention, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
        with torch.no_grad():
            positions = torch.arange(ids.shape[1]).expand_as(ids)
            allowed = causal(ids.shape[1]).expand(ids.shape[0], -1, -1) & attention.bool()[:, None, :]
            allowed = allowed | torch.eye(ids.shape[1], dtype=torch.bool)  # padded rows attend to themselves
            logits = model(ids, positions, allowed)
            for r in range(ids.shape[0]):
                n = int(attention[r].sum())
                alone = model(ids[r : r + 1, :n], positions[r : r + 1, :n], causal(n)[None])
                a = summed_loss(logits[r : r + 1], labels[r : r + 1], shifted=False)
                b = summed_loss(alone, labels[r : r + 1, :n], shifted=False)
                c = summed_loss(logits[r : r + 1], shifted["labels"][r : r + 1], shifted=True)
                check(float(b) > 0 or not bool((labels[r] != -100).any()), f"batch at {start} row {r}: no loss")
                check(abs(float(a - b)) < 1e-5 * max(1.0, float(b)), f"batch at {start} row {r}: loss in the padded batch {float(a)} != alone {float(b)}")
                check(abs(float(a - c)) < 1e-9 * max(1.0, float(a)), f"batch at {start} row {r}: shifted labels give {float(c)}, unshifted {float(a)}")

    sample = [dataset[0], dataset[1], dataset[2]]
    cut = lwm_collate.PadCollator(pad_id, max_length=16, pad_to_multiple_of=24)(sample)
    check(tuple(cut["input_ids"].shape) == (3, 24), f"max_length 16 + pad_to_multiple_of 24 gave {tuple(cut['input_ids'].shape)}")
    check(cut["input_ids"][0, :16].tolist() == sample[0]["input_ids"][:16], "max_length did not keep the first tokens")
    print(f"padded: DataLoader(batch_size=8) over load_dataset({out.name}): {seen} rows, {loss_tokens} labelled tokens = manifest; per-sample losses equal alone; shift=True consistent")


FLATTENING_KEYS = ("input_ids", "position_ids", "labels", "cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")


def flattening_mismatches(ours: dict, reference: dict) -> list[str]:
    """Keys of transformers' DataCollatorWithFlattening whose value, dtype or type differ in `ours`."""
    wrong = []
    for key in FLATTENING_KEYS:
        mine, theirs = ours.get(key), reference[key]
        if isinstance(theirs, torch.Tensor):
            same = isinstance(mine, torch.Tensor) and mine.dtype == theirs.dtype and mine.shape == theirs.shape and torch.equal(mine, theirs)
        else:
            same = type(mine) is type(theirs) and mine == theirs
        if not same:
            wrong.append(key)
    return wrong


def flattening_reference(ids: torch.Tensor, labels_unmasked_starts: torch.Tensor, cu: torch.Tensor) -> dict:
    """transformers' own padding-free collator over the batch's documents, each given its masked labels."""
    from transformers import DataCollatorWithFlattening

    features = [{"input_ids": ids[int(a) : int(b)].tolist(), "labels": labels_unmasked_starts[int(a) : int(b)].tolist()} for a, b in zip(cu[:-1], cu[1:])]
    return DataCollatorWithFlattening(return_flash_attn_kwargs=True)(features)


def block_diagonal(cu: torch.Tensor, total: int) -> torch.Tensor:
    document = torch.zeros(total, dtype=torch.long)
    for d in range(len(cu) - 1):
        document[int(cu[d]) : int(cu[d + 1])] = d
    return causal(total) & (document[:, None] == document[None, :])


def check_packed(packed: Path, unpacked: Path) -> None:
    dataset = datasets.load_dataset(str(packed), cache_dir=CACHE)
    alone = {row["id"]: row for row in datasets.load_dataset(str(unpacked), split="train", cache_dir=CACHE)}
    model = TinyLM()
    documents = batches = compared = 0
    split_records = {doc for split in dataset for row in dataset[split] for doc, part in zip(row["document_ids"], row["document_parts"]) if part > 0}
    whole = sum(1 for split in dataset for row in dataset[split] for doc in row["document_ids"] if doc not in split_records)
    # A split record whose other pieces trained nothing is written as its part 0 alone (pieces left
    # out: packing.fit.untrained_pieces_dropped): one document, yet not the whole record.
    fit = json.loads((packed / "manifest.json").read_text())["packing"]["fit"]
    whole -= fit["split_records"] - len(split_records)
    for split in dataset:
        rows = dataset[split]
        for start in range(0, len(rows), 2):
            chunk = [rows[k] for k in range(start, min(start + 2, len(rows)))]
            batch = lwm_collate.packed_collate(chunk)
            shifted = lwm_collate.PackedCollator(shift=True)(chunk)
            batches += 1
            where = f"{split} rows {start}..{start + len(chunk) - 1}"
            ids, cu, pos, labels = batch["input_ids"][0], batch["cu_seqlens"], batch["position_ids"][0], batch["labels"][0]
            check(cu.dtype == torch.int32, f"{where}: cu_seqlens is {cu.dtype}")
            check(ids.tolist() == [t for row in chunk for t in row["input_ids"]], f"{where}: input_ids are not the rows concatenated")
            offsets, bounds = 0, [0]
            for row in chunk:
                bounds += [b + offsets for b in row["cu_seqlens"][1:]]
                offsets += row["num_tokens"]
            check(cu.tolist() == bounds, f"{where}: cu_seqlens {cu.tolist()[:6]}... != the rows' boundaries offset")
            lengths = [b - a for a, b in zip(bounds, bounds[1:])]
            check(batch["max_seqlen"] == max(lengths), f"{where}: max_seqlen {batch['max_seqlen']} != {max(lengths)}")
            check(pos.tolist() == [p for n in lengths for p in range(n)], f"{where}: position_ids do not restart at each document")
            mask = [m for row in chunk for m in row["loss_mask"]]
            want = [-100 if (m == 0 or t in bounds) else tok for t, (tok, m) in enumerate(zip(ids.tolist(), mask))]
            check(labels.tolist() == want, f"{where}: labels are not -100 at document starts and where loss_mask is 0")
            check(shifted["labels"][0].tolist() == want[1:] + [-100], f"{where}: shift=True labels are not moved one left")
            # transformers' own flattening collator, given each document's masked labels (it sets the
            # first label of each document to -100 itself), must produce the same batch.
            masked = torch.where(torch.tensor(mask) == 1, ids, torch.tensor(-100))
            reference = flattening_reference(ids, masked, cu)
            wrong = flattening_mismatches(batch, reference)
            check(not wrong, f"{where}: differs from DataCollatorWithFlattening(return_flash_attn_kwargs=True) in {wrong}")
            if batches == 1:
                # Negative controls: the comparison catches positions that run on and int64 boundaries.
                broken = dict(batch, position_ids=torch.arange(ids.numel())[None])
                check("position_ids" in flattening_mismatches(broken, reference), "control: position_ids that do not restart were not caught")
                broken = dict(batch, cu_seq_lens_q=batch["cu_seq_lens_q"].to(torch.int64))
                check("cu_seq_lens_q" in flattening_mismatches(broken, reference), "control: int64 cu_seq_lens_q was not caught")
                check(len(cu) > 2, f"{where}: the first batch holds one document, so the controls prove little")
            check(torch.equal(batch["cu_seqlens"], batch["cu_seq_lens_q"]) and batch["max_seqlen"] == batch["max_length_q"], f"{where}: cu_seqlens/max_seqlen differ from cu_seq_lens_q/max_length_q")
            # Block-diagonal causal attention from cu_seqlens: each document's loss equals its loss alone.
            with torch.no_grad():
                logits = model(ids[None], pos[None], block_diagonal(cu, ids.numel())[None])
                names = [(doc, part) for row in chunk for doc, part in zip(row["document_ids"], row["document_parts"])]
                for d, (doc, part) in enumerate(names):
                    a, b = int(cu[d]), int(cu[d + 1])
                    documents += 1
                    if part != 0 or doc not in alone or len(alone[doc]["input_ids"]) != b - a:
                        continue  # a piece of a record split to fit: not comparable with the whole record
                    solo = alone[doc]
                    compared += 1
                    solo_ids = torch.tensor(solo["input_ids"])
                    check(solo_ids.tolist() == ids[a:b].tolist(), f"{where} document {doc}: tokens differ from the unpacked output")
                    solo_labels = torch.where(torch.tensor(solo["loss_mask"]) == 1, solo_ids, torch.tensor(-100))[None]
                    own = summed_loss(logits[:, a:b], labels[None, a:b], shifted=False)
                    ref = summed_loss(model(solo_ids[None], torch.arange(b - a)[None], causal(b - a)[None]), solo_labels, shifted=False)
                    check(abs(float(own - ref)) < 1e-5 * max(1.0, float(ref)), f"{where} document {doc}: loss {float(own)} in the packed batch != {float(ref)} alone")
    check(whole > 0 and compared == whole, f"{compared} of the {whole} packed documents that are whole records compared with their unpacked run")
    # Unpacked rows are one document each.
    rows = list(alone.values())[:5]
    flat = lwm_collate.packed_collate(rows)
    lengths = [len(row["input_ids"]) for row in rows]
    check(flat["cu_seqlens"].tolist() == [sum(lengths[:k]) for k in range(len(lengths) + 1)], "unpacked rows: cu_seqlens are not the cumulative lengths")
    print(f"packed: packed_collate over load_dataset({packed.name}): {batches} batches, {documents} documents, boundaries, positions and labels right, equal to DataCollatorWithFlattening's; block-diagonal attention from cu_seqlens gives each of {compared} whole documents its loss alone")


def check_readme_snippet(readme: Path, unpacked: Path, packed: Path) -> None:
    """Runs docs/packing-and-trainers.md "Batching in PyTorch"'s snippet as written, on these outputs."""
    text = readme.read_text()
    section = text[text.index("## Batching in PyTorch") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```", start)]
    check('"out/demo-packed"' in code and '"out/demo"' in code, "the README snippet no longer reads out/demo and out/demo-packed")
    code = code.replace('"out/demo-packed"', repr(str(packed))).replace('"out/demo"', repr(str(unpacked)))
    namespace: dict = {}
    exec(compile(code, f"{readme} (Batching in PyTorch)", "exec"), namespace)
    batch = namespace["batch"]
    check(batch["cu_seqlens"].dtype == torch.int32 and batch["input_ids"].shape[0] == 1, "the README snippet's packed batch is not varlen-shaped")
    print("README: the Batching in PyTorch snippet runs as written")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("unpacked", type=Path)
    parser.add_argument("packed", type=Path)
    parser.add_argument("--tokenizer-dir", type=Path, required=True)
    parser.add_argument("--readme", type=Path, help="README.md whose Batching in PyTorch snippet to run")
    args = parser.parse_args()
    manifest = json.loads((args.unpacked / "manifest.json").read_text())
    config = json.loads((args.tokenizer_dir / "tokenizer_config.json").read_text())
    pad_id = Tokenizer.from_file(str(args.tokenizer_dir / "tokenizer.json")).token_to_id(config["pad_token"])
    check_padded(args.unpacked, manifest, pad_id)
    check_packed(args.packed, args.unpacked)
    if args.readme:
        check_readme_snippet(args.readme, args.unpacked, args.packed)
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s)", file=sys.stderr)
        for failure in failures[:50]:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print("lwm_collate check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
