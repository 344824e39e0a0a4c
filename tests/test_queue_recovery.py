"""PostgreSQL connections budgeted and no run lost to a database error (issue 31, item 5), with the real
parts: PostgreSQL clusters of their own (a small max_connections, a restart), `chainrule serve` and
`chainrule worker` as processes, procrastinate's queue.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import psycopg
import pytest

from chainrule.progress.run_jobs import GRADED
from job_process import REPO, WAIT_SECONDS, Class, Process, run, submissions, wait_for
from postgres_cluster import new_postgres_schema, restart_cluster, throwaway_cluster

SMALL_MAX_CONNECTIONS = 40


@pytest.fixture(scope="module")
def own_cluster():
    """A cluster of this module's own: a small max_connections, and restarted by a test."""
    with throwaway_cluster(max_connections=SMALL_MAX_CONNECTIONS) as url:
        yield url


def listening(url: str) -> int:
    """Connections that LISTEN for the queue's notifications (procrastinate's worker keeps one open)."""
    with psycopg.connect(url, autocommit=True) as admin:
        return admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                             "AND query LIKE 'LISTEN %procrastinate%'").fetchone()[0]


def await_listening(url: str) -> int:
    deadline = time.monotonic() + WAIT_SECONDS
    while (count := listening(url)) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    return count


def test_a_run_whose_queue_job_failed_or_vanished_is_sent_again(postgres_cluster):
    """A worker that took a queue job but could not reach the database to start its run ("too many
    clients", a failover) leaves the job failed; a job can also be gone. The run is sent again, not left
    "queued" until its deadline."""
    school = Class(new_postgres_schema(postgres_cluster))
    try:
        ada = school.learner("Ada")
        failed, gone = (run(ada).json()["job"] for _ in range(2))
        sent = dict(school.store.database.read(lambda conn: conn.execute(
            "SELECT id, queue_job_id FROM grading_jobs WHERE id IN (?, ?)", (failed, gone)).fetchall()))
        with psycopg.connect(school.url, autocommit=True) as admin:  # what procrastinate leaves behind
            admin.execute("UPDATE procrastinate_jobs SET status = 'failed' WHERE id = %s", (sent[failed],))
            admin.execute("DELETE FROM procrastinate_jobs WHERE id = %s", (sent[gone],))
        worker = school.worker()
        for job in (failed, gone):
            try:
                assert wait_for(ada, job)["state"] == GRADED
            except AssertionError as error:
                raise AssertionError(f"{error}\nworker output:\n{''.join(worker.lines)}") from None
        assert submissions(school, ada.learner_id) == 2
        assert "lost their queue job" in "".join(worker.lines)
    finally:
        school.close()


def test_the_worker_listens_again_after_postgresql_restarts(own_cluster):
    """After a restart the worker's listener comes back, so a new run wakes it at once instead of waiting for
    its next poll (here --heartbeat 60: a poll a minute)."""
    school = Class(new_postgres_schema(own_cluster))
    try:
        ada = school.learner("Ada")
        worker = Process(school.url, ["worker", "--concurrency", "1", "--heartbeat", "60", "--stalled-after", "120"],
                         "is grading")
        school.workers.append(worker)
        assert await_listening(own_cluster) == 1
        restart_cluster(own_cluster)
        assert await_listening(own_cluster) == 1, "".join(worker.lines)
        job = run(ada).json()["job"]
        assert wait_for(ada, job)["state"] == GRADED
        assert worker.process.poll() is None
    finally:
        school.close()


def _chainrule(url: str, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CHAINRULE_DATABASE=url, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "chainrule", *argv], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_serve_and_worker_refuse_to_start_past_the_connection_budget_and_say_what_to_change(own_cluster):
    url = new_postgres_schema(own_cluster)
    made = _chainrule(url, "class", "create", "Budget")
    assert made.returncode == 0, made.stderr
    # 4 web processes x (10 + 2) + 21 reserved > the 40 the cluster allows.
    refused = _chainrule(url, "serve", "--port", "1", "--workers", "4", "--db-reserve", "21")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    for says in (f"allows {SMALL_MAX_CONNECTIONS} connections", "would need 69", "Lower --workers (at most 1 fit",
                 "--db-pool", "max_connections in postgresql.conf"):
        assert says in refused.stderr, refused.stderr
    # 6 worker processes x 8 connections do not fit in 40.
    refused = _chainrule(url, "worker", "--concurrency", "6")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    for says in ("6 worker process(es) need 48 connections", "Lower --concurrency (at most", "--db-pool"):
        assert says in refused.stderr, refused.stderr


def test_pools_give_idle_connections_back_and_stay_within_their_bound(own_cluster, monkeypatch):
    """A store used by 30 threads at once (a web process's thread pool has 40) opens at most its pool's 10
    connections (the issue: one per thread, 46 per web process), and gives them back once idle."""
    import threading

    from chainrule.progress import connection, open_store

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(own_cluster, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    url = own_cluster.replace("@/postgres?", f"@/{name}?")
    monkeypatch.setattr(connection, "POOL_IDLE_SECONDS", 0.1, raising=False)  # idle ones go sooner than 30 s
    store = open_store(database=url, fuzzing=False)
    try:
        with psycopg.connect(own_cluster, autocommit=True) as admin:
            def open_connections() -> int:
                return admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                     "AND datname = %s", (name,)).fetchone()[0]

            most = 0
            start = threading.Barrier(30)

            def busy() -> None:
                start.wait()
                for _ in range(5):
                    store.database.read(lambda conn: conn.execute("SELECT pg_sleep(0.02)").fetchone())

            threads = [threading.Thread(target=busy) for _ in range(30)]
            for thread in threads:
                thread.start()
            while any(thread.is_alive() for thread in threads):
                most = max(most, open_connections())
                time.sleep(0.01)
            assert 1 <= most <= 10
            deadline = time.monotonic() + WAIT_SECONDS
            while open_connections() > 0 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert open_connections() == 0
    finally:
        store.close()


def test_a_store_reads_again_at_once_after_postgresql_restarts(own_cluster):
    """Ten pooled connections, all ended by a restart: the first read after it is served, not answered "busy"
    after the pool met its broken connections one backoff at a time (1, 2, 4 s: 20 s before this was fixed)."""
    from concurrent.futures import ThreadPoolExecutor

    from chainrule.progress import open_store

    store = open_store(database=new_postgres_schema(own_cluster), fuzzing=False)
    try:
        def slow_read(_: int) -> None:
            store.database.read(lambda conn: conn.execute("SELECT pg_sleep(0.1)").fetchone())

        with ThreadPoolExecutor(10) as pool:
            list(pool.map(slow_read, range(10)))  # the pool now holds up to 10 idle connections
        restart_cluster(own_cluster)
        # One call, no retry of ours (before the fix it raised StoreError "busy" after POOL_WAIT_SECONDS).
        assert store.database.read(lambda conn: conn.execute("SELECT 41 + 1").fetchone())[0] == 42
    finally:
        store.close()


@pytest.mark.timeout(120)
def test_a_store_says_at_once_that_postgresql_is_away(own_cluster):
    """While the server is away a request is refused saying so, not after the pool's wait for a connection it
    cannot open (here 600 s: this test's timeout is far shorter); once it is back, the next request works."""
    from pathlib import Path

    from chainrule.progress.connection import PostgresDatabase
    from chainrule.progress.store_errors import StoreError

    database = PostgresDatabase(new_postgres_schema(own_cluster), pool_wait=600)
    folder = Path(own_cluster.split("host=")[1].split("&")[0])
    place, hidden = folder / ".s.PGSQL.5432", folder / "away"
    try:
        assert database.read(lambda conn: conn.execute("SELECT 1").fetchone())[0] == 1
        with psycopg.connect(own_cluster, autocommit=True) as admin:
            place.rename(hidden)  # no new connection can be made, and every open one is ended
            try:
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
                for _ in range(3):  # the one whose connection broke, and those after it with an empty pool
                    with pytest.raises(StoreError, match="cannot be reached"):
                        database.read(lambda conn: conn.execute("SELECT 1").fetchone())
            finally:
                hidden.rename(place)
        assert database.read(lambda conn: conn.execute("SELECT 2").fetchone())[0] == 2
    finally:
        database.close()
