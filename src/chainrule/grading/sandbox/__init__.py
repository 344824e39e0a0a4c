"""Run untrusted code in layers of isolation, each probed once and reported.

One module per layer, each readable and testable alone, applied in the order of layers.LAYERS:

* cgroups.py: a process, a memory and a CPU limit per run (cgroup v2 or v1);
* rlimits.py: per-process limits (always on);
* reaper.py: a subreaper that keeps a run's processes when neither a pid namespace nor a cgroup does;
* bubblewrap.py: namespaces; mounts.py: the read-only file system, the masked /proc entries;
* seccomp.py: the system-call filter, each denied call with its reason;
* identity.py: a dedicated unprivileged uid/gid instead of the grader's root, switched to last.

And around them:

* limits.py: what a run may use (Limits) and what happened to it (RunOutcome);
* plan.py: one run's config and what each layer adds to it; layers.py: LAYERS, and a run's start and end;
* launcher.py: how a run without bubblewrap starts: it waits for the grader, then applies the steps that
  must happen in the new process (no Python runs between fork and exec in the grader);
* isolation.py: probe() and the report ("strong" = bubblewrap + cgroup + seccomp + identity);
* runner.py: run(), the process layer (output, the hang guard, verdicts);
* usage.py: what a run got from the machine (CPU time, time waiting for a core) and the rule that says
  whether it was starved (the machine's delay, not the program's).

Nothing here imports a Linux-only module at import time: on other systems probe() says what is missing.
"""

from chainrule.grading.sandbox.isolation import Isolation, isolation_report, probe

# The tests clear the probe's cache through the package (sandbox._probe_cached.cache_clear()).
from chainrule.grading.sandbox.isolation import probe_cached as _probe_cached  # noqa: F401
from chainrule.grading.sandbox.limits import MB, Limits, RunOutcome
from chainrule.grading.sandbox.runner import run, scratch_directory

__all__ = ["MB", "Limits", "RunOutcome", "Isolation", "probe", "run", "isolation_report", "scratch_directory"]
