#!/usr/bin/env bash
# `npm run bench:quick`: every benchmark on its small size (--quick), so that none can rot (CI runs it).
# Not a measurement: the benchmarks run two at a time, in two lanes, because most of each is one process on
# one core (~3.5 min one after the other on two cores, ~2 two at a time). Numbers taken this way share the
# machine with another benchmark; run a benchmark alone (`node bench/NAME.bench.ts`) to measure.
# checkpoint.bench.ts runs last and alone: it stops a run half-way by the wall time of the run before it,
# which another benchmark starting or ending beside it would move.
# Each lane's output is printed whole, in order, once it has ended; a failed benchmark fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

lanes=(
  "pipeline mixture pii dashboard"
  "curate scaling cores"
)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for i in "${!lanes[@]}"; do
  (for name in ${lanes[$i]}; do
    echo "── bench:quick: $name ──"
    node "bench/$name.bench.ts" --quick
  done) >"$logs/lane-$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!lanes[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "$logs/lane-$i.log"
done
if ((failed)); then
  echo "bench:quick: a benchmark failed (its output above)" >&2
  exit 1
fi
echo "── bench:quick: checkpoint ──"
node bench/checkpoint.bench.ts --quick
