#!/usr/bin/env bash
# Scaling on a machine with more cores (issue 23, item 5): the 1 → 2 → 4 → 8 worker speed-up of
# `lwm-data run`, wall time and CPU-s per input MB, `--workers N` against N independent processes,
# with bench/scaling.bench.ts. Self-contained: no network, no Python. Writes into "$OUT":
#   scaling.json  every run, the ratios, the projection (bench/scaling/report.ts's Results)
#   scaling.md    the markdown tables (as docs/benchmarks.md shows them)
#   scaling.log   progress, one line per run as it ends (kept when the bench is stopped early)
#   machine.txt   cores, CPU model, memory, Node version
# Takes ~2–4 minutes on a 16-core machine (a 250 MB corpus: ~30 s with 1 worker on a fast core),
# and stops the bench at SCALING_TIMEOUT seconds (default 270) whatever happens.
#
#   OUT=/path/to/folder bash bench/device-scaling.sh
#
# Node 24: node_modules/.bin/node when node_modules is there; otherwise the runtime packed by
# `bash bench/device-pack.sh` (.device-runtime/runtime.tar.xz, carried with the working tree),
# unpacked here into node_modules. Settings (environment): SCALING_BYTES (250MB),
# SCALING_WORKERS (1,2,4,8), SCALING_TASKS (64), SCALING_REPEAT (1), SCALING_TIMEOUT (270).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
OUT=${OUT:?set OUT to the folder for the results}
mkdir -p "$OUT"
BYTES=${SCALING_BYTES:-250MB}
WORKERS=${SCALING_WORKERS:-1,2,4,8}
TASKS=${SCALING_TASKS:-64}
REPEAT=${SCALING_REPEAT:-1}
LIMIT=${SCALING_TIMEOUT:-270}

if [ ! -x node_modules/.bin/node ]; then
  PACK=.device-runtime/runtime.tar.xz
  [ -f "$PACK" ] || { echo "device-scaling: no node_modules and no $PACK (make it with: bash bench/device-pack.sh)" >&2; exit 1; }
  echo "device-scaling: unpacking $PACK" >&2
  if command -v xz > /dev/null; then
    tar -xJf "$PACK"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(".")' "$PACK"
  fi
fi
NODE=$PWD/node_modules/.bin/node

{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  grep -c '^processor' /proc/cpuinfo | sed 's/^/processors in \/proc\/cpuinfo: /' || true
  grep MemTotal /proc/meminfo || true
  echo "load average: $(cat /proc/loadavg)"
  echo "node: $("$NODE" --version)"
  echo "settings: bytes $BYTES, workers $WORKERS, tasks $TASKS, repeat $REPEAT"
} | tee "$OUT/machine.txt" >&2

set +e
timeout --kill-after=10 "$LIMIT" "$NODE" bench/scaling.bench.ts --bytes "$BYTES" --workers-list "$WORKERS" --tasks "$TASKS" \
  --repeat "$REPEAT" --no-docs --results "$OUT/scaling.json" > "$OUT/scaling.md" 2> >(tee "$OUT/scaling.log" >&2)
status=$?
set -e
wait # for tee
cat "$OUT/scaling.md"
echo "device-scaling: exit $status after $(($(date +%s) - started)) s; results in $OUT" >&2
exit $status
