#!/usr/bin/env bash
# Creates or updates .venv-openrlhf for check_openrlhf.py: test/python/requirements-openrlhf.txt through
# ensure-venv.sh (OpenRLHF's dependencies that install on a CPU machine, pinned), then OpenRLHF itself with
# `pip install --no-deps` at the version its `# no-deps:` line names. A requirements file cannot say
# --no-deps, and installing OpenRLHF with its dependencies fails here: flash-attn==2.8.3 compiles CUDA
# kernels (see the requirements file). Idempotent and fast when nothing changed.
#
# Usage: ensure-venv-openrlhf.sh [VENV_DIR]   (default .venv-openrlhf)
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=${1:-.venv-openrlhf}
requirements=test/python/requirements-openrlhf.txt
bash test/python/ensure-venv.sh "$venv" "$requirements"

spec=$(sed -n 's/^# no-deps: *//p' "$requirements")
name=${spec%%==*}
version=${spec#*==}
if [[ -z $spec || $name == "$spec" ]]; then
  echo "ensure-venv-openrlhf: $requirements has no '# no-deps: NAME==VERSION' line" >&2
  exit 1
fi
installed() { "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version(sys.argv[1]) != sys.argv[2])' "$name" "$version" 2>/dev/null; }
if installed; then
  exit 0
fi
# The same lock as ensure-venv.sh: one installer at a time.
exec 9>"$venv/.lwm-lock"
flock 9
if installed; then
  exit 0
fi
echo "ensure-venv-openrlhf: installing $spec into $venv without its dependencies (flash-attn cannot build on CPU)" >&2
bash scripts/venv-install.sh "$venv" --no-deps "$spec" >&2
