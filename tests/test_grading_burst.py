"""A burst of gradings gets quick `busy` answers and leaves the pages fast, on any number of cores.

docs/security.md, "A grading burst": the real `chainrule lesson` server, made to see 16 cores (so its
grader runs 16 gradings at once and queues 32 more), receives 56 gradings of a submission that sleeps
in the sandbox. The 8 past the queue are answered `busy` before any grading ends, and the path and a
lesson are served while all the others are still running or waiting.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import httpx
import pytest

import local_http
from chainrule.grading import reference_source
from reaper import spawn
from web_process import stop, wait_for_url

pytestmark = pytest.mark.timeout(180)

SIXTEEN_CORES = """
import os, sys
os.sched_getaffinity = lambda pid: set(range(16))
os.cpu_count = lambda: 16
from chainrule.cli import main
sys.exit(main(sys.argv[1:]))
"""
SLOTS, QUEUE = 16, 32  # what the grader makes of 16 cores: one grading per core, twice as many waiting
BURST = SLOTS + QUEUE + 8
SLEEPER = "import time\ntime.sleep(5)\n" + reference_source("neuron-grads", "python")


@pytest.fixture
def sixteen_core_server(tmp_path):
    process = spawn(
        [sys.executable, "-c", SIXTEEN_CORES, "lesson", "--no-browser", "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        match = wait_for_url(process)
        yield f"http://127.0.0.1:{match['port']}", match["token"]
    finally:
        stop(process)  # after the admitted gradings end; the queued ones lost their page and do not run


async def burst_then_pages(base_url: str, token: str) -> None:
    limits = httpx.Limits(max_connections=BURST + 4, max_keepalive_connections=0)
    async with local_http.async_client(base_url=base_url, headers={"X-Chainrule-Token": token}, timeout=120,
                                 limits=limits) as client:
        gradings = [asyncio.create_task(client.post("/api/grade", json={
            "exercise": "neuron-grads", "language": "python", "source": SLEEPER})) for _ in range(BURST)]
        try:
            first = []
            for finished in asyncio.as_completed(gradings):
                first.append((await finished).json())
                if len(first) == BURST - SLOTS - QUEUE:
                    break
            # The first answers are the refusals, at once: no grading (5 s of sleep each) has ended yet.
            assert [answer["verdict"] for answer in first] == ["busy"] * len(first), first
            assert all("busy" in answer["message"] for answer in first)
            path = await client.get("/api/path")
            lesson = await client.get("/api/lessons/backprop")
            graded = [t.result().json()["verdict"] for t in gradings if t.done() and not t.exception()]
            assert path.status_code == 200 and lesson.status_code == 200
            # Served while every admitted grading still runs or waits: none ended before the pages.
            assert graded.count("busy") == len(graded) == len(first), graded
        finally:
            for task in gradings:
                task.cancel()
            await asyncio.gather(*gradings, return_exceptions=True)


def run_async(make_coroutine) -> None:
    """asyncio.run in a thread of its own: the session's Playwright keeps an event loop in this one."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(make_coroutine())
        except BaseException as error:  # re-raised below, in the test's thread
            failure.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def test_a_burst_of_gradings_on_16_cores_gets_busy_answers_and_pages_stay_served(sixteen_core_server):
    run_async(lambda: burst_then_pages(*sixteen_core_server))


def test_the_gate_admits_its_slots_queues_the_next_and_refuses_the_rest():
    from chainrule.turns import BUSY, Admission

    async def scenario() -> None:
        gate = Admission(1, 1, wait_seconds=0.2)
        running = await gate.enter_async()
        assert running.admitted  # the first is admitted (and holds its slot)
        queued = asyncio.create_task(gate.enter_async())
        while gate.waiting == 0:  # the second waits in the queue
            await asyncio.sleep(0)
        assert await gate.enter_async() == BUSY  # slot taken, queue full: refused at once
        assert await queued == BUSY  # it waited its 0.2 s for the slot, then gave up
        gate.leave(running)
        assert gate.running == 0 and gate.waiting == 0
        assert (await gate.enter_async()).admitted

    run_async(scenario)
