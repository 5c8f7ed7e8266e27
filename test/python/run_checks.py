"""Runs several check scripts one after another in one Python process, each as `python SCRIPT ARGS...` runs it.

    python test/python/run_checks.py SCRIPT ARGS... [--- SCRIPT ARGS...]...

Why: a Python process that imports torch + transformers + datasets + pyarrow (+ megatron-core) spends ~4-7 CPU-seconds
on the imports alone, and test/trainer-check.sh ran 39 check processes that each paid them (the three megatron checks
spent more on imports than on their windows). Here the imports are paid once per lane; each check still runs
its own file from the top (module-level code included) with its own argv, so it makes the same assertions on the same
outputs as when run alone.

Isolation between checks:
- each SCRIPT runs with runpy.run_path(run_name="__main__"): a fresh module namespace, sys.argv[0] = SCRIPT;
- sys.argv, sys.path, the working directory, os.environ, warnings filters and logging.disable's level are restored
  after each check;
- the project's own modules a check imported (test/python/*.py helpers such as megatron_windows with its failures
  list, notebooks/lwm_collate.py, python/lwm_*) are dropped from sys.modules after each check, so the next one imports
  them afresh, module-level state included; third-party modules stay imported (that is the saving);
- what a library keeps process-wide beyond that (torch._dynamo.config.disable set by check_hf_training.py,
  transformers' logging verbosity, datasets' progress bars) is not reset: test/trainer-check.sh puts a check that sets
  such state last in its process, or in a process of its own.
- gc.freeze() before each check: the objects alive then (the imports and what earlier checks keep cached) are never
  garbage, so gc.collect() need not walk them again (accelerate calls it at every Trainer start and end: ~0.5 s each
  over torch + transformers + trl's objects). It changes no result: only cyclic garbage is left to the collector.

A failing check (non-zero sys.exit, an exception, an assertion) is reported by name with its output and traceback; the
next checks still run; the exit status is 1 if any check failed, and the last lines name every failed check.
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import resource
import runpy
import sys
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEPARATOR = "---"


def groups(argv: list[str]) -> list[list[str]]:
    """SCRIPT ARGS... groups, split at SEPARATOR (empty groups ignored)."""
    result: list[list[str]] = [[]]
    for arg in argv:
        if arg == SEPARATOR:
            result.append([])
        else:
            result[-1].append(arg)
    return [group for group in result if group]


@functools.lru_cache(maxsize=None)
def is_project_file(file: str | None) -> bool:
    """A file of this repository, not of a virtual environment inside it."""
    if not file:
        return False
    try:
        parts = Path(os.path.realpath(file)).relative_to(ROOT).parts
    except ValueError:
        return False
    return bool(parts) and not parts[0].startswith(".venv") and "site-packages" not in parts


def drop_project_modules() -> None:
    for name, module in list(sys.modules.items()):
        if name == "__main__":  # this driver
            continue
        # The module's own namespace, not getattr: a lazy module (transformers') imports submodules on attribute access.
        try:
            namespace = vars(module)
        except TypeError:  # not a module (some libraries put other objects into sys.modules)
            continue
        locations = [namespace.get("__file__")]
        try:  # a package without __init__.py has only __path__ (a _NamespacePath); some modules fake theirs
            locations += list(namespace.get("__path__") or [])
        except Exception:  # noqa: BLE001
            pass
        if any(is_project_file(location) for location in locations if isinstance(location, str)):
            del sys.modules[name]


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def exit_status(code: object) -> int:
    """What the interpreter's exit status would be for `sys.exit(code)` (a message is printed, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run(script: str, args: list[str]) -> int:
    path = (HERE / script).resolve()  # a name in test/python/, or a path
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    saved_environ, saved_disable = dict(os.environ), logging.root.manager.disable
    gc.collect()
    gc.freeze()
    started, cpu = time.monotonic(), cpu_seconds()
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.parent))  # as `python SCRIPT` puts the script's folder first
    try:
        with warnings.catch_warnings():
            try:
                runpy.run_path(str(path), run_name="__main__")
                status = 0
            except SystemExit as stop:
                status = exit_status(stop.code)
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001 - reported, and the check counts as failed
                traceback.print_exc()
                status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)
        if dict(os.environ) != saved_environ:
            os.environ.clear()
            os.environ.update(saved_environ)
        logging.disable(saved_disable)
        drop_project_modules()
    print(f"run_checks: {'ok    ' if status == 0 else 'FAILED'} {path.name} ({time.monotonic() - started:.1f} s, {cpu_seconds() - cpu:.1f} CPU-s{'' if status == 0 else f', exit status {status}'})", flush=True)
    return status


def main() -> int:
    checks = groups(sys.argv[1:])
    if not checks:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    failed = []
    for script, *args in checks:
        print(f"run_checks: running {script} {' '.join(args)}", flush=True)
        if run(script, args) != 0:
            failed.append(f"{script} {' '.join(args)}")
    if failed:
        print(f"run_checks: {len(failed)} of {len(checks)} check(s) FAILED (their output above):", file=sys.stderr)
        for line in failed:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"run_checks: all {len(checks)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
