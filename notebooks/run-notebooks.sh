#!/usr/bin/env bash
# Executes every notebook in notebooks/ against one finished lwm-data run. The notebooks assert that
# what they recompute from the raw files equals the run's manifest, so executing them is a test:
# CI runs this so the notebooks cannot rot, and it fails (non-zero exit) when any cell fails.
#
# Usage: bash notebooks/run-notebooks.sh <output-dir> [<artifact-dir>]
#   <output-dir>    a finished run (has manifest.json), e.g. out/demo from `npx lwm-data run configs/demo.yaml`
#   <artifact-dir>  where the executed copies (with outputs) go; default: a new temporary folder
# Environment: PYTHON (default .venv/bin/python) is checked for the notebooks' libraries first;
# JUPYTER (default: the jupyter beside PYTHON) runs nbconvert, and its Python runs the notebook kernel.
set -euo pipefail

usage() {
  echo "usage: bash notebooks/run-notebooks.sh <output-dir> [<artifact-dir>]" >&2
  exit 2
}
[[ $# -ge 1 && $# -le 2 ]] || usage

# Resolve the caller's paths before changing directory: they are relative to where it was called from.
[[ -f "$1/manifest.json" ]] || {
  echo "run-notebooks: $1 is not a finished lwm-data run (no manifest.json); make the demo run with: npx lwm-data run configs/demo.yaml" >&2
  exit 1
}
output_dir="$(cd "$1" && pwd)"
if [[ $# -eq 2 ]]; then
  mkdir -p "$2"
  artifact_dir="$(cd "$2" && pwd)"
else
  artifact_dir="$(mktemp -d "${TMPDIR:-/tmp}/lwm-notebooks.XXXXXX")"
fi

# The notebooks, the default venv and the tokenizer under node_modules/ are found from the repo root.
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
JUPYTER="${JUPYTER:-$(dirname "$PYTHON")/jupyter}"

# A missing library would otherwise surface as an ImportError in the first cell; say what to do instead.
if ! "$PYTHON" -c "import pyarrow, pandas, matplotlib, nbconvert, nbclient, ipykernel" 2>/dev/null; then
  echo "run-notebooks: $PYTHON lacks pyarrow, pandas, matplotlib, nbconvert, nbclient or ipykernel" >&2
  echo "  (install them into .venv, or point PYTHON/JUPYTER at an environment that has them)" >&2
  exit 1
fi

shopt -s nullglob
notebooks=(notebooks/*.ipynb)
[[ ${#notebooks[@]} -gt 0 ]] || {
  echo "run-notebooks: no notebooks/*.ipynb" >&2
  exit 1
}

# Run all notebooks even if one fails, so one CI log shows every failure; fail at the end.
failed=()
for notebook in "${notebooks[@]}"; do
  echo "run-notebooks: executing $notebook with LWM_OUTPUT=$output_dir"
  # nbconvert runs the kernel in the notebook's own folder (relative defaults resolve from there),
  # allows each cell 600 s, stops at the first failing cell and exits non-zero with its traceback.
  # The executed copy, with outputs, goes to the artifact folder; the committed notebook stays clean.
  if LWM_OUTPUT="$output_dir" "$JUPYTER" nbconvert --to notebook --execute \
    --ExecutePreprocessor.timeout=600 \
    --output-dir "$artifact_dir" "$notebook"; then
    echo "run-notebooks: ok     $notebook → $artifact_dir/$(basename "$notebook")"
  else
    echo "run-notebooks: FAILED $notebook" >&2
    failed+=("$notebook")
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run-notebooks: ${#failed[@]} notebook(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "run-notebooks: all ${#notebooks[@]} notebook(s) passed; executed copies in $artifact_dir"
