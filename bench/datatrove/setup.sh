#!/usr/bin/env bash
# Creates .venv-bench (separate from the test venv .venv) with the datatrove baseline.
# Idempotent: does nothing when the venv already imports datatrove at the pinned version.
# PYTHON=python3.11 to choose the interpreter; VENV=path to put the venv elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${VENV:-.venv-bench}"
want=$(sed -n 's/^datatrove==//p' bench/datatrove/requirements.txt)
if [[ -x "$venv/bin/python" ]] && [[ "$("$venv/bin/python" -c 'import datatrove.pipeline.tokens, datatrove.pipeline.dedup.minhash, orjson, regex, xxhash, pyarrow; from importlib.metadata import version; print(version("datatrove"))' 2>/dev/null)" == "$want" ]]; then
  exit 0
fi
echo "bench: installing datatrove $want into $venv (bench/datatrove/requirements.txt)" >&2
"${PYTHON:-python3}" -m venv "$venv"
bash scripts/venv-install.sh "$venv" -r bench/datatrove/requirements.txt
