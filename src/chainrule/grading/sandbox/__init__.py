"""Run untrusted code in layers of isolation, each probed once and reported.

One module per layer, each readable and testable alone:

* limits.py: what a run may use (Limits) and what happened to it (RunOutcome);
* rlimits.py: per-process limits (always on);
* identity.py: a dedicated unprivileged uid/gid instead of the grader's root;
* bubblewrap.py and mounts.py: namespaces, the read-only file system, the masked /proc entries;
* cgroups.py: a process and a memory limit per run (cgroup v2 or v1);
* seccomp.py: the system-call filter, each denied call with its reason;
* isolation.py: probe() and the report ("strong" = bubblewrap + cgroup + seccomp + identity);
* runner.py: run(), which composes them.

Nothing here imports a Linux-only module at import time: on other systems probe() says what is missing.
"""

from chainrule.grading.sandbox.isolation import Isolation, isolation_report, probe
from chainrule.grading.sandbox.isolation import probe_cached as _probe_cached
from chainrule.grading.sandbox.limits import MB, Limits, RunOutcome
from chainrule.grading.sandbox.runner import run, scratch_directory

__all__ = ["MB", "Limits", "RunOutcome", "Isolation", "probe", "run", "isolation_report", "scratch_directory"]
