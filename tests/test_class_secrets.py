"""No secret on a command line (issue 27, item 14): every user of a machine reads every process's command
line (`ps`, /proc/PID/cmdline), so the class database's password must never be on one.

`chainrule serve` and `chainrule worker --concurrency 2` run for real against the session's PostgreSQL with
a URL that holds a password (the cluster trusts local connections, so the password is carried, not
checked); while a learner's run is being graded, every process's command line is read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from job_process import FAST_WORKER, Process, run, wait_for
from lti_world import cli
from postgres_cluster import new_postgres_schema
from served_class import Served

pytestmark = pytest.mark.timeout(240)

SECRET = "s3cret-Horse-battery-9f2c"
SLOW = "import time\ntime.sleep(3)\n"


def with_password(url: str) -> str:
    assert url.startswith("postgresql://chainrule@")
    return url.replace("postgresql://chainrule@", f"postgresql://chainrule:{SECRET}@", 1)


def command_lines() -> dict[int, str]:
    """Every process's command line that can be read now."""
    lines = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:  # it ended meanwhile
                continue
    return lines


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_no_process_of_serve_or_worker_has_the_database_password_on_its_command_line(postgres_cluster, tmp_path):
    from chainrule.grading import reference_source

    url = with_password(new_postgres_schema(postgres_cluster))
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATABASE=url, CHAINRULE_DATA_DIR=str(tmp_path / "data"))
    served = Served(env)
    workers = None
    try:
        workers = Process(None, ["worker", "--concurrency", "2", *FAST_WORKER], "2 processes grading", env=env)
        _, invite = served.new_class("Physics")
        ada, _ = served.join(invite, "Ada")
        job = run(ada, SLOW + reference_source("neuron-grads", "python")).json()["job"]
        wait_for(ada, job, states=("running",))  # a worker process and its sandbox are busy with it now
        seen = command_lines()
        worker_processes = children_of(workers.pid)
        assert len(worker_processes) == 2, seen.get(workers.pid)
        assert all(pid in seen for pid in (served.web.pid, workers.pid, *worker_processes))
        leaks = {pid: line for pid, line in seen.items() if SECRET in line}
        assert leaks == {}
        # The worker processes did get the database: they graded the run.
        assert wait_for(ada, job)["result"]["status"] == "pass"
    finally:
        if workers is not None:
            workers.stop()
        served.stop()


@pytest.mark.parametrize("command, form", [(["worker"], "user:password@"), (["serve"], "?password="),
                                           (["class", "list"], "user:password@")])
def test_a_password_given_on_the_command_line_is_refused_with_the_way_to_give_it(command, form):
    url = (f"postgresql://chainrule:{SECRET}@/postgres?host=/nonexistent" if form == "user:password@"
           else f"postgresql://chainrule@/postgres?host=/nonexistent&password={SECRET}")
    env = {key: value for key, value in os.environ.items() if key != "CHAINRULE_DATABASE"}
    code, out, error = cli(*command, "--database", url, env=env)  # in this process: refused before any work
    assert code in (1, 2) and "--database holds a password" in error, error
    assert "$CHAINRULE_DATABASE" in error and "PGPASSFILE" in error
    assert SECRET not in error + out and "Traceback" not in error
    assert re.search(r"mode 0600", error)
