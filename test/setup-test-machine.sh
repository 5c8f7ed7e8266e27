#!/usr/bin/env bash
# What `npm test` needs on this machine, installed once (npm's `pretest` runs this; so does .ci/run
# through `npm test`): the Python references (.venv), Debian's Chromium for the dashboard's browser
# test, and a single-node Slurm for the cluster test. As root it installs what is missing; as
# another user it stops at once, naming the one command to run first, instead of a wall of red.
# A suite left out with LWM_TEST_SKIP=browser,slurm (test/support/test-skips.ts) needs nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."

skips=",${LWM_TEST_SKIP:-},"
wanted=()
if [[ "$skips" != *",browser,"* ]] && [[ -z "${LWM_CHROMIUM:-}" ]] && ! command -v chromium >/dev/null 2>&1; then
  wanted+=("chromium (the dashboard's browser test)")
fi
slurm_missing=false
if [[ "$skips" != *",slurm,"* ]] && ! command -v sbatch >/dev/null 2>&1; then
  slurm_missing=true
  wanted+=("Slurm and munge (the cluster test)")
fi

if ((${#wanted[@]} > 0)); then
  if [[ $EUID -ne 0 ]]; then
    {
      echo "npm test: this machine lacks what some test suites need:"
      printf '  - %s\n' "${wanted[@]}"
      echo "Install them once, as root (Debian packages; nothing else changes):"
      echo "  sudo bash test/setup-test-machine.sh"
      echo "or leave those suites out: LWM_TEST_SKIP=browser,slurm npm test"
    } >&2
    exit 1
  fi
  # One installer at a time: .ci/run starts this script in the background while npm installs, and npm's pretest
  # runs it again; the second waits here, then finds everything installed (a failed install is retried by it).
  exec 8>"${TMPDIR:-/tmp}/lwm-setup-test-machine.lock"
  flock 8
  if ! command -v chromium >/dev/null 2>&1 && [[ "$skips" != *",browser,"* ]] && [[ -z "${LWM_CHROMIUM:-}" ]]; then
    echo "setup-test-machine: installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
  fi
  if $slurm_missing; then bash test/cluster/install-slurm.sh; fi
  flock -u 8
fi
if [[ "${1:-}" == "--system-only" ]]; then exit 0; fi

# The Python references for the trainer-side checks (idempotent: quick once built).
bash test/python/ensure-venv.sh
