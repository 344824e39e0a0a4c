"""A throwaway PostgreSQL cluster: for the test session (conftest.postgres_cluster) and the class benchmark.

    with throwaway_cluster() as url:      # postgresql://chainrule@/postgres?host=/tmp/chainrule-pg-...
        ...

initdb as an unprivileged user (PostgreSQL refuses to run as root), trust authentication, listening only on
a Unix socket in a temporary folder that user owns; stopped and deleted at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from reaper import forget_cluster, record_cluster

POSTGRES_BIN_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin")


class ClusterUnavailable(RuntimeError):
    """PostgreSQL's server programs are not installed here."""


def postgres_bin() -> Path | None:
    for folder in POSTGRES_BIN_DIRS:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


@contextmanager
def throwaway_cluster(max_connections: int = 200, fsync: bool = False, tcp_port: int | None = None,
                      password: str | None = None) -> Iterator[str]:
    """fsync=False for tests (nothing to keep); the benchmark writes as a real server does. With ``tcp_port``
    and ``password`` it also listens on 127.0.0.1:tcp_port, where the role chainrule must give the password
    (scram-sha-256), as a database on another host does; the URL yielded is still the trusted Unix socket's."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise ClusterUnavailable("PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql; "
                                 "see scripts/system-deps.sh)")
    folder = tempfile.mkdtemp(prefix="chainrule-pg-")
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("nobody")
        os.chown(folder, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "nobody", "--"]
    data, log = os.path.join(folder, "data"), os.path.join(folder, "log")

    def run(*command: str) -> None:
        done = subprocess.run([*run_as, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")

    authentication = ["--auth=trust"]
    if password is not None:
        secret = os.path.join(folder, "password")
        with open(secret, "w") as file:
            file.write(password)
        if run_as:
            os.chown(secret, user.pw_uid, user.pw_gid)
        authentication = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={secret}"]
    stop = [*run_as, str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
    record_cluster(folder, stop)  # stopped and deleted by the test run's watchdog if the run is killed
    run(str(bin_dir / "initdb"), "-D", data, "-U", "chainrule", *authentication, "-E", "UTF8", "--no-sync")
    listen = f"-c listen_addresses=127.0.0.1 -p {tcp_port}" if tcp_port else "-c listen_addresses=''"
    options = f"-k {folder} {listen} -c fsync={'on' if fsync else 'off'} -c max_connections={max_connections}"
    run(str(bin_dir / "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start")
    try:
        yield f"postgresql://chainrule@/postgres?host={folder}" + (f"&port={tcp_port}" if tcp_port else "")
    finally:
        subprocess.run(stop, capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
        forget_cluster(folder)


def new_postgres_schema(cluster_url: str) -> str:
    """A URL whose connections see a fresh, empty schema of the cluster (a schema per store is much
    faster than a database per store, and just as separate)."""
    import uuid

    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(cluster_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{cluster_url}&options=-csearch_path%3D{name}"


def restart_cluster(cluster_url: str) -> None:
    """Restart the throwaway cluster at ``cluster_url`` (every connection to it ends), as an upgrade or a
    failover does; returns once it accepts connections again."""
    import re

    folder = re.search(r"host=([^&]+)", cluster_url).group(1)
    run_as = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    done = subprocess.run([*run_as, str(postgres_bin() / "pg_ctl"), "-D", os.path.join(folder, "data"), "-l",
                           os.path.join(folder, "log"), "-m", "fast", "-w", "restart"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"pg_ctl restart failed: {done.stdout}{done.stderr}")
