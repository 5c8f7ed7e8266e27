#!/usr/bin/env bash
# Benchmarks for a machine with many cores, self-contained (no network). Two benches, chosen by
# DEVICE_BENCHES (default "cores,scaling"):
#   cores    bench/cores.bench.ts (issue 36): lwm-data against datatrove side by side, N workers
#            on the whole corpus (N = the machine's cores) and 1 worker on 1/N of it: MB/s, cores
#            busy, peak RSS per worker, where each lwm-data lane's time went. Needs python3 with
#            datatrove: the wheels `bench/device-pack.sh` downloads (.device-runtime/wheels) are
#            installed into a scratch folder (or CORES_NO_DATATROVE=1 runs lwm-data alone).
#   scaling  bench/scaling.bench.ts (issue 23): 1 → 2 → 4 → 8 workers, `--workers N` against N
#            independent processes, wall time and CPU-s per input MB.
# Writes into "$OUT":
#   cores.json, cores.md      every run, the ratios, the markdown tables
#   scaling.json, scaling.md  the same for the scaling bench
#   *.log                     progress, one line per run as it ends (kept when a bench is stopped)
#   machine.txt               cores, CPU model, memory, Node and Python versions
# Each bench is stopped at its timeout whatever happens: CORES_TIMEOUT (300 s), SCALING_TIMEOUT
# (270 s). On a 16-core machine the cores bench at 1200MB takes ~4 minutes (datatrove is most of it).
#
#   OUT=/path/to/folder bash bench/device-scaling.sh
#
# Node 24: node_modules/.bin/node when node_modules is there; otherwise the runtime packed by
# `bash bench/device-pack.sh` (.device-runtime/runtime.tar.xz, carried with the working tree),
# unpacked here into node_modules. Settings (environment): CORES_BYTES (1200MB), CORES_TASKS
# (tasks per worker, 8), CORES_VARIANTS (see bench/cores.bench.ts), SCALING_BYTES (250MB),
# SCALING_WORKERS (1,2,4,8), SCALING_TASKS (64), SCALING_REPEAT (1).
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
BENCHES=${DEVICE_BENCHES:-cores,scaling}

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
  echo "python3: $(python3 --version 2>&1 || echo none)"
  echo "benches: $BENCHES"
} | tee "$OUT/machine.txt" >&2

status=0
if [[ ",$BENCHES," == *,cores,* ]]; then
  datatrove=(--no-datatrove)
  if [ -z "${CORES_NO_DATATROVE:-}" ]; then
    SITE=${TMPDIR:-/tmp}/lwm-datatrove-site
    if compgen -G ".device-runtime/wheels/*.whl" > /dev/null; then
      python3 -m pip install --quiet --no-index --no-deps --no-compile --disable-pip-version-check --upgrade --target "$SITE" .device-runtime/wheels/*.whl >&2 ||
        echo "device-scaling: the wheels in .device-runtime/wheels did not install for $(python3 --version 2>&1)" >&2
      export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    fi
    if python3 -c 'import datatrove.pipeline.tokens, orjson' 2> /dev/null; then
      datatrove=(--python "$(command -v python3)")
      echo "datatrove: $(python3 -c 'from importlib.metadata import version; print(version("datatrove"))')" | tee -a "$OUT/machine.txt" >&2
    else
      echo "device-scaling: python3 cannot import datatrove (no .device-runtime/wheels? run bench/device-pack.sh): lwm-data alone" >&2
    fi
  fi
  echo "settings (cores): bytes ${CORES_BYTES:-1200MB}, tasks per worker ${CORES_TASKS:-8}, variants ${CORES_VARIANTS:-default}" | tee -a "$OUT/machine.txt" >&2
  set +e
  timeout --kill-after=10 "${CORES_TIMEOUT:-300}" "$NODE" bench/cores.bench.ts --bytes "${CORES_BYTES:-1200MB}" --tasks-per-worker "${CORES_TASKS:-8}" \
    --variants "${CORES_VARIANTS:-default}" "${datatrove[@]}" --no-docs --results "$OUT/cores.json" > "$OUT/cores.md" 2> >(tee "$OUT/cores.log" >&2)
  status=$?
  set -e
  wait # for tee
  cat "$OUT/cores.md"
fi
if [[ ",$BENCHES," == *,scaling,* ]]; then
  echo "settings (scaling): bytes $BYTES, workers $WORKERS, tasks $TASKS, repeat $REPEAT" | tee -a "$OUT/machine.txt" >&2
  set +e
  timeout --kill-after=10 "$LIMIT" "$NODE" bench/scaling.bench.ts --bytes "$BYTES" --workers-list "$WORKERS" --tasks "$TASKS" \
    --repeat "$REPEAT" --no-docs --results "$OUT/scaling.json" > "$OUT/scaling.md" 2> >(tee "$OUT/scaling.log" >&2)
  scaling_status=$?
  set -e
  wait # for tee
  cat "$OUT/scaling.md"
  [ "$status" -ne 0 ] || status=$scaling_status
fi
echo "device-scaling: exit $status after $(($(date +%s) - started)) s; results in $OUT" >&2
exit $status
