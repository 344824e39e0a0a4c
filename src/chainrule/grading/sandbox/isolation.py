"""Probe every optional layer once, and say how strongly code is isolated: to the learner in one
sentence ("summary"), and layer by layer for whoever runs the grader.

"strong" means all four optional layers work here: bubblewrap (namespaces and a minimal read-only file
system), cgroup (process and memory caps), seccomp (the system-call filter) and identity (a dedicated
unprivileged user). "partial" means some of them do, "minimal" none; the process and rlimits layers are
always on.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from dataclasses import dataclass
from typing import Callable, TypeVar

from chainrule.grading.json_objects import JsonObject
from chainrule.grading.sandbox import bubblewrap, cgroups, identity, layers, seccomp

OPTIONAL_LAYERS = ("bubblewrap", "cgroup", "seccomp", "identity")

# What each optional layer gives, in the learner's words (for the summary of a partial sandbox).
PLAIN_WORDS = {
    "bubblewrap": "a private file system and network",
    "cgroup": "process, memory and CPU caps",
    "seccomp": "the system-call filter",
    "identity": "a separate user account",
}

NOT_LINUX = ("grading in a sandbox needs Linux namespaces, cgroups and seccomp; this system is {platform}, "
             "so only time, memory and file limits apply")


@dataclass(frozen=True)
class Isolation:
    """The result of probing every layer: which work here, and the error of each that does not."""

    bubblewrap: str | None  # path of a working bwrap, or None
    cgroup: cgroups.CgroupBackend | None
    seccomp: bytes | None  # the compiled filter, when pyseccomp and libseccomp work here
    missing: tuple[tuple[str, str], ...]
    identity: tuple[int, int] | None = None  # (uid, gid) submissions run as

    @property
    def level(self) -> str:
        present = [name for name in OPTIONAL_LAYERS if self.has(name)]
        if len(present) == len(OPTIONAL_LAYERS):
            return "strong"
        return "partial" if present else "minimal"

    def has(self, layer: str) -> bool:
        return bool(getattr(self, layer))

    def summary(self) -> str:
        """One plain sentence for the learner."""
        if self.level == "strong":
            return "Your code runs isolated from this computer (strong sandbox)."
        if self.level == "minimal":
            return "Your code runs with time, memory and file limits only; it is not isolated from this computer."
        lacking = [PLAIN_WORDS[name] for name in OPTIONAL_LAYERS if not self.has(name)]
        listed = lacking[0] if len(lacking) == 1 else ", ".join(lacking[:-1]) + " and " + lacking[-1]
        return f"Your code runs in a partial sandbox: this computer cannot give it {listed}."

    def without(self, layer: str, error: str) -> "Isolation":
        """The same isolation with one layer lost (a run whose cgroup could not be made)."""
        changes = dict(self.__dict__, missing=self.missing + ((layer, error),))
        changes[layer] = None
        return Isolation(**changes)

    def report(self) -> JsonObject:
        layers: dict[str, bool | int] = {"process": True, "rlimits": True, **{name: self.has(name) for name in OPTIONAL_LAYERS}}
        # The CPU limit (about one core per run) is part of the cgroup layer, reported on its own because
        # a hierarchy may offer pids and memory without cpu.
        layers["cpu_limit"] = bool(self.cgroup and self.cgroup.cpu_parent)
        missing = list(self.missing)
        details: JsonObject = {}
        if self.cgroup:
            layers["cgroup_version"] = self.cgroup.version
            if self.cgroup.note:
                details["cgroup"] = f"cgroup v{self.cgroup.version} is used; {self.cgroup.note}"
            if self.cgroup.cpu_missing:
                missing.append(("cpu_limit", self.cgroup.cpu_missing))
        if self.identity:
            details["identity"] = f"uid {self.identity[0]}, gid {self.identity[1]}"
        if not self.bubblewrap and not self.cgroup and sys.platform.startswith("linux"):
            details["survivors"] = ("no pid namespace or cgroup holds a run's processes here: each run is "
                                    "kept below a reaper (a child subreaper) that kills every one of them at its end")
        return {
            "level": self.level,
            "summary": self.summary(),
            "layers": layers,
            "missing": [{"layer": layer, "error": error} for layer, error in missing],
            "details": details,
        }


Found = TypeVar("Found")


def _probe_unless(layer: str, switch: str, probe_layer: Callable[[], tuple[Found | None, list[tuple[str, str]]]],
                  missing: list[tuple[str, str]]) -> Found | None:
    """probe_layer()'s finding, or None when the environment variable `switch` turns the layer off;
    why the layer is missing, if it is, goes to `missing`."""
    if os.environ.get(switch):
        missing.append((layer, f"disabled by {switch}"))
        return None
    found, errors = probe_layer()
    missing += errors
    return found


def _probe_bubblewrap() -> tuple[str | None, list[tuple[str, str]]]:
    """The path of a bwrap that runs this interpreter as a run would run it, or why there is none."""
    bwrap, missing = bubblewrap.probe()
    if bwrap is None:
        return None, missing
    problem = layers.trial(Isolation(bubblewrap=bwrap, cgroup=None, seccomp=None, missing=()))
    if problem:
        return None, [("bubblewrap", f"{bwrap} could not run the interpreter in its namespaces: {problem}")]
    return bwrap, []


def _probe_identity(bwrap: str | None) -> tuple[tuple[int, int] | None, list[tuple[str, str]]]:
    """The dedicated user, if this grader can run the interpreter as it (through bwrap when there is one)."""
    uid, gid = identity.sandbox_ids()
    reason = identity.unavailable_reason(uid)
    if reason:
        return None, [("identity", reason)]
    problem = layers.trial(Isolation(bubblewrap=bwrap, cgroup=None, seccomp=None, missing=(), identity=(uid, gid)))
    if problem:
        return None, [("identity", f"the interpreter does not run as uid {uid}: {problem}")]
    return (uid, gid), []


def _not_linux() -> Isolation:
    message = NOT_LINUX.format(platform=sys.platform)
    return Isolation(None, None, None, tuple((layer, message) for layer in OPTIONAL_LAYERS))


@functools.lru_cache(maxsize=1)
def probe_cached() -> Isolation:
    if not sys.platform.startswith("linux"):
        return _not_linux()
    missing: list[tuple[str, str]] = []
    bwrap = _probe_unless("bubblewrap", "CHAINRULE_SANDBOX_NO_BWRAP", _probe_bubblewrap, missing)
    cgroup = _probe_unless("cgroup", "CHAINRULE_SANDBOX_NO_CGROUP", cgroups.probe, missing)
    program = _probe_unless("seccomp", "CHAINRULE_SANDBOX_NO_SECCOMP", seccomp.probe, missing)
    ids = _probe_unless("identity", "CHAINRULE_SANDBOX_NO_IDENTITY", lambda: _probe_identity(bwrap), missing)
    return Isolation(bubblewrap=bwrap, cgroup=cgroup, seccomp=program, missing=tuple(missing), identity=ids)


_probe_lock = threading.Lock()


def probe() -> Isolation:
    """Probe every optional layer once per process (the answer is cached)."""
    with _probe_lock:
        return probe_cached()


def isolation_report() -> JsonObject:
    """{"level": "strong"|"partial"|"minimal", "summary": one sentence, "layers": {...},
    "missing": [{"layer", "error"}], "details": {...}}"""
    return probe().report()
