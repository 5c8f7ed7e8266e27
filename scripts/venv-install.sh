#!/usr/bin/env bash
# Installs Python packages into a virtual environment: `venv-install.sh VENV [pip install arguments…]`
# (e.g. `-r requirements.txt`, `--no-deps NAME==VERSION`). VENV must exist (python3 -m venv).
#
# With uv (https://docs.astral.sh/uv/, bootstrapped once into .venv-uv with pip, pinned below) when
# it can be had, else pip. Why: the test environments (.venv, .venv-swift, .venv-verl, .venv-openrlhf,
# .venv-bench) share torch and most of their wheels; pip unpacks each wheel again into each one
# (~8 CPU-minutes on a fresh clone, while the test suite needs the same two cores), uv unpacks each
# once into its cache and links it into every environment (seconds). The requirements files pin
# what gets installed; either installer gets the same versions.
#
# uv does not read pip's configuration, so the machine's pip settings (PIP_* variables, pip.conf:
# index-url, extra-index-url, find-links, constraint) are handed to it as flags, and it picks the
# best version across all indexes as pip does (the local CPU torch wheel, `2.13.0+cpu`, over the
# index's `2.13.0`). A failed uv install is retried with pip, whose error is the one shown.
# LWM_NO_UV=1 uses pip only.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
venv=$1
shift

pip_install() {
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-compile "$@"
}

# uv in .venv-uv, installed once (under a lock: several environments are built at once).
uv_binary() {
  local boot=.venv-uv
  [[ ${LWM_NO_UV:-} == 1 ]] && return 1
  mkdir -p "$boot"
  (
    exec 8>"$boot/.lwm-lock"
    flock 8
    if [[ ! -x $boot/bin/uv ]] || [[ "$("$boot/bin/uv" --version 2>/dev/null)" != "uv $UV_VERSION"* ]]; then
      python3 -m venv "$boot" && "$boot/bin/pip" install --quiet --disable-pip-version-check "uv==$UV_VERSION"
    fi
  ) >&2 || return 1
  [[ -x $boot/bin/uv ]] && echo "$PWD/$boot/bin/uv"
}

# One pip setting: its PIP_* variable, else pip's configuration (global, then install section).
pip_setting() {
  local name=$1 variable
  variable="PIP_$(tr 'a-z-' 'A-Z_' <<<"$name")"
  if [[ -n ${!variable:-} ]]; then
    echo "${!variable}"
    return
  fi
  python3 -m pip config get "global.$name" 2>/dev/null || python3 -m pip config get "install.$name" 2>/dev/null || true
}

uv_flags() {
  local url
  flags=(--index-strategy unsafe-best-match)
  url=$(pip_setting index-url)
  [[ -n $url ]] && flags+=(--default-index "$url")
  for url in $(pip_setting extra-index-url); do
    # Not a local (file://) index: uv takes a version's files from the first index that has the
    # version, where pip weighs every index's files together. A local mirror holding only an older
    # wheel of a version (multiprocess 0.70.19's py310 wheel, whose fork_exec call breaks on Python
    # 3.11) would then be installed over the index's better one. The default index serves them all.
    if [[ $url == file://* ]]; then continue; fi
    flags+=(--index "$url")
  done
  for url in $(pip_setting find-links); do
    if [[ $url == /* && ! -e $url ]]; then continue; fi
    flags+=(--find-links "$url")
  done
  for url in $(pip_setting constraint); do
    [[ -f $url ]] && flags+=(--constraint "$url")
  done
  # The certificate bundle pip is told to trust (a TLS-inspecting proxy's), for uv too.
  url=$(pip_setting cert)
  if [[ -f $url && -z ${SSL_CERT_FILE:-} ]]; then export SSL_CERT_FILE=$url; fi
  return 0
}

# Neither installer byte-compiles the environment (pip is told --no-compile, uv does not by default): Python
# compiles and caches only the modules a check imports, on first import. Unless PYTHONDONTWRITEBYTECODE is
# set, as on some CI images: then no cache is ever written, and every Python process compiles what it imports
# from source again (~4 CPU-s for each check that imports torch and transformers). A .pth file, run at start-up
# by this environment's interpreter only, turns the cache back on for it.
keep_bytecode() {
  local site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo 'import sys; sys.dont_write_bytecode = False' >"$site/lwm-data-bytecode.pth"
}

if uv=$(uv_binary); then
  uv_flags
  if "$uv" pip install --quiet --python "$venv/bin/python" "${flags[@]}" "$@"; then
    keep_bytecode
    exit 0
  fi
  echo "venv-install: uv could not install into $venv; trying pip" >&2
fi
pip_install "$@"
keep_bytecode
