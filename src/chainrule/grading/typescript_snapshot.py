"""A node startup snapshot holding the TypeScript checker, ready to type-check: built once, reused.

    blob = snapshot_for(node, flags)   # Path of the snapshot, or None (the harness then loads the checker)

Loading the 4 MB compiler and parsing its ES2020 library declarations costs most of a TypeScript
grading's time. runtime/typescript-snapshot.js does that work once (and loads sucrase, which strips
the types afterwards), warms both up on a fixed sample, and node saves the resulting heap (`--build-snapshot`); each grading then starts node from it
(`--snapshot-blob`). Only our own vendored code runs while building, so the build runs outside the
sandbox; the sandbox mounts the finished file read-only.

A snapshot fits one node binary and one set of V8 flags (such as --max-old-space-size) only, so it is
built with the flags the grading runs with, and kept per node binary, flags and checker bundle in the user's
cache directory ($CHAINRULE_CACHE_DIR, else platformdirs' user_cache_dir("chainrule")), owner-only.
If it cannot be built, grading still works, only slower; the reason is in `last_problem`.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from pathlib import Path

__all__ = ["snapshot_for", "last_problem", "ENV_CACHE_DIR"]

RUNTIME_DIR = Path(__file__).with_name("runtime")
BUILDER = RUNTIME_DIR / "typescript-snapshot.js"
CHECKER = Path(__file__).with_name("vendor") / "typescript-check.js"
TRANSPILER = Path(__file__).with_name("vendor") / "sucrase.js"
ENV_CACHE_DIR = "CHAINRULE_CACHE_DIR"
BUILD_SECONDS = 180

_lock = threading.Lock()
_ready: dict[str, Path | None] = {}  # key -> snapshot path (None: building failed in this process)
last_problem: str | None = None


def cache_dir() -> Path:
    from_env = os.environ.get(ENV_CACHE_DIR)
    if from_env:
        return Path(from_env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("chainrule"))


def _key(node: str, flags: list[str]) -> str:
    """Names the snapshot: the node binary (path, size, time), its flags, the exact builder and checker."""
    real = os.path.realpath(node)
    stat = os.stat(real)
    digest = hashlib.sha256(f"{real}\0{stat.st_size}\0{stat.st_mtime_ns}\0{flags}\0".encode())
    for path in (BUILDER, CHECKER, TRANSPILER):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def _build(node: str, flags: list[str], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
    clean = {"PATH": os.defpath}  # no NODE_OPTIONS or other settings that would change the heap
    try:
        subprocess.run([node, *flags, "--snapshot-blob", str(partial), "--build-snapshot", str(BUILDER), str(CHECKER),
                        str(TRANSPILER)],
                       stdin=subprocess.DEVNULL, capture_output=True, check=True, timeout=BUILD_SECONDS, env=clean)
        probe = subprocess.run([node, *flags, "--snapshot-blob", str(partial), str(RUNTIME_DIR / "snapshot-probe.js")],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=clean)
        if probe.stdout.strip() != "ready":
            raise RuntimeError(f"the snapshot does not load the checker ({probe.stderr.strip()[-300:]})")
        os.chmod(partial, 0o644)  # read by the sandbox's unprivileged user; holds only the compiler
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()


def _readable_by_the_sandbox(target: Path) -> None:
    """Submissions run as an unprivileged user: the snapshot (bound read-only into the sandbox) must be
    readable by others. Snapshots written by older versions were owner-only."""
    if target.stat().st_mode & 0o044 != 0o044:
        os.chmod(target, 0o644)


def snapshot_for(node: str, flags: list[str]) -> Path | None:
    """The snapshot for this node binary run with these V8 flags, built now if it does not exist yet;
    None if it cannot be."""
    global last_problem
    try:
        key = _key(node, flags)
    except OSError as error:
        last_problem = f"cannot read {error.filename}: {error.strerror}"
        return None
    if key in _ready:
        return _ready[key]
    with _lock:
        if key not in _ready:
            target = cache_dir() / "typescript" / f"checker-{key}.blob"
            try:
                if not target.is_file():
                    _build(node, flags, target)
                _readable_by_the_sandbox(target)
                _ready[key] = target
            except (OSError, subprocess.SubprocessError, RuntimeError) as error:
                detail = getattr(error, "stderr", None)
                last_problem = f"{error}" + (f": {detail.decode(errors='replace')[-300:]}" if isinstance(detail, bytes) else "")
                _ready[key] = None
    return _ready[key]
