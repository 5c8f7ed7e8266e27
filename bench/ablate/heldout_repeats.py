"""Share of an ablation's held-out observation tokens whose observation occurs more than once in the
corpus (corpus_novelty below log2 N), from the eval-informative build's stats table (the evaluation build, all-observations, has none) and validation split."""
import glob, math, sys
import pyarrow.parquet as pq
import pyarrow as pa

out = sys.argv[1]
ev = f"{out}/eval"
val_ids = set()
for f in glob.glob(f"{ev}/data/validation-*.parquet"):
    val_ids |= set(pq.read_table(f, columns=["id"]).column("id").to_pylist())
stats = pa.concat_tables([pq.read_table(f) for f in glob.glob(f"{out}/eval-informative/stats/*.parquet")]).to_pandas()
top = stats.corpus_novelty.max()  # seen once = log2 N
stats["repeated"] = stats.corpus_novelty < top - 1e-9
for name, part in (("held-out", stats[stats.id.isin(val_ids)]), ("train", stats[~stats.id.isin(val_ids)])):
    tok = part.obs_tokens.sum()
    rep = part[part.repeated].obs_tokens.sum()
    print(f"{name}: {len(part)} turns, {tok} obs tokens, {rep} ({100*rep/tok:.1f}%) in observations seen more than once in the corpus")
