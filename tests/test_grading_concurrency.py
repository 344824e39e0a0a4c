"""Fifty submissions at once, some hostile: each ends with its own result or "busy", none lost or mixed."""

from __future__ import annotations

import dataclasses
import threading
import uuid

import pytest

from chainrule.grading import default_limits, grade, grader, reference_source

pytestmark = pytest.mark.timeout(120)


def submission(kind: str, token: str) -> str:
    body = {
        "good": "",
        "sleep": "    import time\n    time.sleep(1000)\n",
        "loop": "    while True:\n        pass\n",
        "wrong": "    return [0.0, 0.0, 0.0]\n",
    }[kind]
    return (
        "def neuron_grads(x, w, b, out, grad):\n"
        f"    print({token!r})\n"
        f"{body}"
        "    d = 1 - out**2\n"
        "    return [d * x[0], d * x[1], d]\n"
    )


# A busy loop hits its CPU limit however loaded the machine is: the wall clock is only a hang guard, which a
# run that waits for a core does not meet (docs/grading.md, "A busy machine").
EXPECTED_VERDICTS = {"good": {"passed"}, "sleep": {"timeout"}, "loop": {"cpu-limit"}, "wrong": {"failed"}}


def test_fifty_concurrent_submissions_each_get_their_own_result_or_busy():
    previous = grader.configure_concurrency(slots=2, queue=6)
    limits = dataclasses.replace(default_limits("python"), wall_seconds=4.0, cpu_seconds=1)
    kinds = ["good", "wrong", "good", "sleep", "good", "loop", "good", "wrong", "good", "good"] * 5
    tokens = [f"token-{i}-{uuid.uuid4().hex[:8]}" for i in range(len(kinds))]
    results: list[dict | None] = [None] * len(kinds)
    start = threading.Barrier(len(kinds))

    def worker(i: int) -> None:
        start.wait()
        results[i] = grade("neuron-grads", "python", submission(kinds[i], tokens[i]), limits=limits)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(kinds))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=100)
        gate = grader.GATE
    finally:
        grader.restore_concurrency(previous)

    assert all(r is not None for r in results), "a submission was lost"
    busy = [r for r in results if r["verdict"] == "busy"]
    graded = [(i, r) for i, r in enumerate(results) if r["verdict"] != "busy"]
    assert busy and graded
    for r in busy:
        assert r["status"] == "error" and "busy" in r["message"] and r["tests"] == []
    for i, r in graded:
        assert r["verdict"] in EXPECTED_VERDICTS[kinds[i]], (kinds[i], r["verdict"], r["message"])
        # Its own printed token, never another submission's: nothing mixed up.
        if kinds[i] in ("good", "wrong"):
            assert tokens[i] in (r["tests"][0]["output"] or "")
        assert all(t not in repr(r) for j, t in enumerate(tokens) if j != i)
    assert gate.peak <= 2

    after = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    assert after["verdict"] == "passed"
