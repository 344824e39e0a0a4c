"""Attacks on the sandbox as learner code: a neuron_grads (Python) or neuronGrads (JavaScript) whose body is the
attack, each naming its processes with a marker, and the processes still carrying a marker (survivors).
Used by test_sandbox, test_sandbox_hardening and test_sandbox_cpu_and_reaper."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def marker() -> str:
    return "cr" + uuid.uuid4().hex[:10]  # fits in the 15 characters of /proc/<pid>/comm


def survivors(mark: str) -> list[int]:
    """Processes whose name or command line carries the marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in comm or mark.encode() in cmdline:
            found.append(int(entry))
    return found


def python_attack(mark: str, body: str) -> str:
    """A neuron_grads whose body is the attack; it names its process with the marker first."""
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return (
        "import os, sys, time\n"
        "def neuron_grads(x, w, b, out, grad):\n"
        f"    open('/proc/self/comm', 'w').write({mark!r})\n"
        f"{lines}\n"
        "    d = 1 - out**2\n"
        "    return [d * x[0], d * x[1], d]\n"
    )


def js_attack(mark: str, body: str) -> str:
    return (
        "function neuronGrads(x, w, b, out, grad) {\n"
        f"  require('fs').writeFileSync('/proc/self/comm', {mark!r});\n"
        f"  {body}\n"
        "  const d = 1 - out ** 2;\n  return [d * x[0], d * x[1], d];\n}\n"
    )
