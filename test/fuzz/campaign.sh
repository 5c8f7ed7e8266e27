#!/usr/bin/env bash
# A longer fuzz campaign than the one in `npm test`: a random seed (printed first and last, so a
# failure can be replayed with FUZZ_SEED=...), a time budget instead of a run count, and every
# shrunk failing input saved under test/fixtures/fuzz-crashers/ with a one-line note.
#
#   bash test/fuzz/campaign.sh [minutes]        # default 10; both test files run in parallel
#   FUZZ_SEED=123 bash test/fuzz/campaign.sh 5  # replay a campaign's seed
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"

minutes="${1:-10}"
seed="${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
# One property per reader and per domain, each given an even share of the budget (vitest may run two
# test files at once, so the campaign can end sooner than the budget; each property still gets its share).
properties=$(node --input-type=module -e '
  import { READERS } from "./src/read/registry.ts";
  import { DOMAINS } from "./src/core/trajectory.ts";
  console.log(READERS.length + DOMAINS.length);')
seconds=$(( minutes * 60 / properties ))
(( seconds > 0 )) || seconds=1

echo "fuzz campaign: FUZZ_SEED=$seed, ${seconds}s per property, about ${minutes} min"
status=0
# The campaign hunts slow inputs too: a record may take 5 s, a case 20 s (npm test's limits are hang nets).
FUZZ_SEED="$seed" FUZZ_RUNS=1000000000 FUZZ_SECONDS="$seconds" FUZZ_SAVE_CRASHERS=1 \
  FUZZ_RECORD_MS="${FUZZ_RECORD_MS:-5000}" FUZZ_CASE_TIMEOUT_MS="${FUZZ_CASE_TIMEOUT_MS:-20000}" \
  npx vitest run test/fuzz -t "mutated recorded and hand-made fixtures|synthetic and edited" || status=$?
echo "fuzz campaign: FUZZ_SEED=$seed finished with status $status; new crashers, if any:"
git status --short --untracked-files=all test/fixtures/fuzz-crashers || true
exit "$status"
