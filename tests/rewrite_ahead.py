"""Each test module's asserts rewritten once per run, before the pytest-xdist workers start.

pytest rewrites the asserts of every test module it imports (parse, rewrite, compile) and keeps the result in
__pycache__. From a fresh clone, as CI runs, no worker finds one: each worker collects the whole suite, so
each rewrote all of it, at the same moment as the others (about 4 s of CPU time a worker on the 2-core
machine, a third of its collection). The controller imports no test module; here it writes the rewritten
modules first, on every core this run may use, and the workers only read them.

This uses pytest's own rewriting (_pytest.assertion.rewrite, not a public API): with a pytest whose internals
differ, nothing is written ahead and each worker rewrites for itself, as pytest does by default.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
import sys
from pathlib import Path

import pytest

try:
    from _pytest.assertion.rewrite import (
        PYC_TAIL,
        _read_pyc,
        _rewrite_test,
        _write_pyc,
        assertstate_key,
        get_cache_dir,
        try_makedirs,
    )
except ImportError:  # another pytest's internals
    assertstate_key = None

_config: pytest.Config | None = None  # the controller's, inherited by the forked processes that rewrite


def rewrite_ahead(config: pytest.Config) -> list[Path]:
    """Write the rewritten form of every test module this run will collect that has none yet; the modules
    written. Only in the controller of a run with workers, and only where bytecode may be written."""
    global _config
    if (hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)
            or sys.dont_write_bytecode or assertstate_key is None or assertstate_key not in config.stash):
        return []  # no workers, no bytecode written, or asserts not rewritten (--assert=plain)
    pending = [path for path in modules_to_collect(config) if _read_pyc(path, cached_form(path)) is None]
    if not pending:
        return []
    _config = config
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        if cores > 1 and len(pending) > 1:
            with multiprocessing.get_context("fork").Pool(min(cores, len(pending))) as pool:
                list(pool.imap_unordered(_write_rewritten, pending, chunksize=4))
        else:
            for path in pending:
                _write_rewritten(path)
    finally:
        _config = None
    return pending


def modules_to_collect(config: pytest.Config) -> list[Path]:
    """The test modules (python_files) and conftest.py files under the run's arguments (or testpaths)."""
    patterns = config.getini("python_files")
    skipped = config.getini("norecursedirs")
    found: set[Path] = set()
    for argument in config.args:
        path = Path(config.invocation_params.dir, argument.split("::")[0]).resolve()
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            for folder, folders, files in os.walk(path):
                folders[:] = [name for name in folders
                              if not any(fnmatch.fnmatch(name, pattern) for pattern in skipped)]
                found.update(Path(folder, name) for name in files if name.endswith(".py") and (
                    name == "conftest.py" or any(fnmatch.fnmatch(name, pattern) for pattern in patterns)))
    return sorted(found)


def cached_form(path: Path) -> Path:
    """Where pytest keeps the rewritten form of the module at ``path``."""
    return get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)


def _write_rewritten(path: Path) -> None:
    assert _config is not None
    try:
        source_hash, code = _rewrite_test(path, _config)
    except SyntaxError:
        return  # the worker that imports it reports the error, in pytest's own words
    if try_makedirs(cached_form(path).parent):
        _write_pyc(_config.stash[assertstate_key], code, source_hash, cached_form(path))
