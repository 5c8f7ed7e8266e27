#!/usr/bin/env bash
# Creates or updates .venv, the Python reference environment of the tests (test/python/requirements.txt:
# pyarrow, datasets, tokenizers, jinja2, torch (CPU), the notebook tools), so that no test that needs it
# ever finds it missing. Idempotent and fast when nothing changed: a stamp in .venv records the sha256 of
# requirements.txt it was installed from. Run by `npm test` first (its pretest step), by
# test/trainer-check.sh, .ci/run, and by the vitest suites that call Python (test/support/python-env.ts).
# PYTHON=<interpreter> means "use that environment": nothing is created. Needs python3 >= 3.11 with venv.
#
# Usage: ensure-venv.sh [VENV_DIR REQUIREMENTS]: another environment from another requirements file, for
# trainers whose pins cannot share .venv (test/python/requirements-<trainer>.txt → .venv-<trainer>; PYTHON
# does not apply to those).
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=${1:-.venv}
requirements=${2:-test/python/requirements.txt}
if [[ -n "${PYTHON:-}" && $# -eq 0 ]]; then
  exit 0
fi

stamp=$venv/.lwm-requirements.sha256
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ -x $venv/bin/python && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "ensure-venv: the tests need Python >= 3.11 with venv and pip as python3 (Debian: apt-get install python3 python3-venv python3-pip); found: $(python3 --version 2>&1 || echo none)" >&2
  exit 1
fi

# One installer at a time: vitest workers may ask for the environment together.
mkdir -p "$venv"
exec 9>"$venv/.lwm-lock"
flock 9
if [[ -x $venv/bin/python && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
echo "ensure-venv: installing the Python references into $venv from $requirements (once; a few minutes on a fresh clone)" >&2
python3 -m venv "$venv"
# --no-compile: pip would byte-compile all ~18,000 .py files of the environment (about 90 CPU-s, while CI's tests
# run beside it); Python compiles and caches only the modules a check imports, on first import.
if ! bash scripts/venv-install.sh "$venv" -r "$requirements" >&2; then
  echo "ensure-venv: pip could not install $requirements into $venv (see above); the Python reference checks cannot run" >&2
  exit 1
fi
echo "$want" >"$stamp"
