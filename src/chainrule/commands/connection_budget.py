"""The PostgreSQL connection budget, checked when `chainrule serve` and `chainrule worker` start.

Every process opens its connections from bounded pools (progress/connection.py, classes/queue.py), so
what a class can ever hold open is known in advance:

    web processes x (--db-pool + the queue's sender) + what is kept for workers (--db-reserve)
    worker processes x (their store's pool + the queue's pool and listener + a sender)

PostgreSQL refuses a connection past max_connections ("sorry, too many clients already"), and for a role
that is not a superuser superuser_reserved_connections (and reserved_connections) fewer. A process that
would pass the budget is refused at start with what to change, instead of failing under load.
"""

from __future__ import annotations

from dataclasses import dataclass

from chainrule.classes.queue import SENDER_CONNECTIONS, WORKER_QUEUE_CONNECTIONS
from chainrule.progress.run_jobs import connection_limits

WORKER_STORE_CONNECTIONS = 2  # a worker process's store pool: the run it grades, and its sweeps
WORKER_PROCESS_CONNECTIONS = WORKER_STORE_CONNECTIONS + WORKER_QUEUE_CONNECTIONS + SENDER_CONNECTIONS
TOOLS_RESERVE = 3  # connections left for the teacher's `chainrule class` commands and psql


@dataclass(frozen=True)
class ServerLimit:
    """What the database server lets this role open, and how many connections are open now."""

    max_connections: int
    reserved: int  # kept for superusers (and pg_use_reserved_connections), none of it for this role
    role_limit: int  # the role's CONNECTION LIMIT, -1 for none
    open_now: int

    @property
    def capacity(self) -> int:
        allowed = self.max_connections - self.reserved
        return allowed if self.role_limit < 0 else min(allowed, self.role_limit)


def server_limit(url: str) -> ServerLimit:
    """Ask the server (psycopg errors propagate: the caller says the database cannot be reached)."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as raw:
        limits = connection_limits(raw)
    return ServerLimit(limits.max_connections, 0 if limits.is_superuser else limits.superuser_reserved + limits.reserved,
                       limits.role_limit, limits.open_now - 1)  # not counting the connection that asked


def default_reserve(worker_processes: int) -> int:
    """Connections a web server leaves for ``worker_processes`` grading processes and the teacher's tools."""
    return worker_processes * WORKER_PROCESS_CONNECTIONS + TOOLS_RESERVE


def serve_budget(limit: ServerLimit, processes: int, pool: int, reserve: int) -> str | None:
    """Why ``processes`` web processes with ``pool`` store connections each, leaving ``reserve``, do not fit;
    None if they do."""
    per_process = pool + SENDER_CONNECTIONS
    need = processes * per_process + reserve
    if need <= limit.capacity:
        return None
    room = limit.capacity - reserve
    fits = max(0, room // per_process)
    return (f"the class database allows {limit.capacity} connections for this role (max_connections "
            f"{limit.max_connections}{_reserved(limit)}), and this server would need {need}: {processes} web "
            f"process(es) x ({pool} --db-pool + {SENDER_CONNECTIONS} for the queue) + {reserve} kept for workers and "
            f"tools (--db-reserve). Lower --workers (at most {fits} fit with --db-pool {pool}) or --db-pool "
            f"(at least 2), lower --db-reserve if fewer workers grade, or raise max_connections in postgresql.conf "
            "(docs/classroom.md: PostgreSQL connections).")


def worker_budget(limit: ServerLimit, processes: int) -> str | None:
    """Why ``processes`` worker processes do not fit in the connections free now; None if they do."""
    need = processes * WORKER_PROCESS_CONNECTIONS
    free = limit.capacity - limit.open_now
    if need <= free:
        return None
    return (f"{processes} worker process(es) need {need} connections to the class database ({WORKER_PROCESS_CONNECTIONS} "
            f"each), and only {max(0, free)} of the {limit.capacity} this role may open are free now "
            f"(max_connections {limit.max_connections}{_reserved(limit)}, {limit.open_now} open). Lower --concurrency "
            f"(at most {max(0, free) // WORKER_PROCESS_CONNECTIONS} fit), give the web server a smaller --db-pool, or "
            "raise max_connections in postgresql.conf (docs/classroom.md: PostgreSQL connections).")


def _reserved(limit: ServerLimit) -> str:
    parts = [f" minus {limit.reserved} reserved for superusers"] if limit.reserved else []
    if limit.role_limit >= 0:
        parts.append(f", the role's CONNECTION LIMIT {limit.role_limit}")
    return "".join(parts)
