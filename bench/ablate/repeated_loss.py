"""Loss on the held-out observations seen more than once in the corpus, derived per seed from an ablate.json
with the seen-once columns (all held-out tokens minus the seen-once ones), with the paired Δ and its 95% t-interval.
Usage: python bench/ablate/repeated_loss.py OUT_DIR/ablate.json (5 seeds: the t quantile below is for 4 degrees of freedom)."""
import json, math, sys
from statistics import mean, stdev
T = {4: 2.7764451051977987}  # t(0.975, 4)
r = json.load(open(sys.argv[1]))
def rep(run):
    a, n, s, m = run["eval_loss"], run["eval_tokens"], run["eval_seen_once_loss"], run["eval_seen_once_tokens"]
    return (a * n - s * m) / (n - m)
base = [rep(x) for x in r["variants"][0]["runs"]]
for v in r["variants"]:
    vals = [rep(x) for x in v["runs"]]
    d = [a - b for a, b in zip(vals, base)]
    h = lambda xs: T[len(xs) - 1] * stdev(xs) / math.sqrt(len(xs))
    print(f"{v['name'][:60]}: repeated-obs loss {mean(vals):.4f} ± {h(vals):.4f}; Δ {mean(d):+.4f} [{mean(d)-h(d):.4f}, {mean(d)+h(d):.4f}]" if v is not r["variants"][0] else f"{v['name'][:60]}: repeated-obs loss {mean(vals):.4f} ± {h(vals):.4f}")
