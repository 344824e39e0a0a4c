"""Who is in a class, and whose run goes next, against `chainrule serve` and `chainrule class` as real
processes on SQLite and on PostgreSQL (issue 27, items 8 and 9).

- The teacher decides who is in: a seat count (learners joining at once never pass it) and approval (a
  learner who joins waits until the teacher lets them in).
- A teacher removes an account: its sessions end, its work and its runs waiting for the grader go, and
  its seat is free again (the API and `chainrule class remove`).
- A class in SQLite grades in the web process with the queue's rules: one learner has at most 3 runs open,
  and learners take turns, so a burst of ten slow runs does not make a classmate's run "busy".
"""

from __future__ import annotations

import errno
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

import polling
from chainrule.grading import reference_source
from class_world import send
from job_process import WAIT_SECONDS, run
from served_class import EXERCISE, Served, served  # noqa: F401 (served: a module-scoped server per backend)

pytestmark = pytest.mark.timeout(240)


def test_a_class_takes_as_many_learners_as_its_seats_even_when_they_join_at_once(served):
    _, invite = served.new_class("Seats", "--seats", "3")
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda number: served.join(invite, f"Pupil {number}")[1], range(8)))
    assert sorted(answer.status_code for answer in answers) == [303] * 3 + [409] * 5
    refused = next(answer for answer in answers if answer.status_code == 409)
    assert "is full: all 3 seats are taken" in refused.text
    assert served.cli("learners", "Seats").stdout.startswith("3 learners; seats: 3; approval: off")
    # The teacher makes room: a new invite with one more seat lets one more in; the old invite is gone.
    new_invite = served.cli("invite", "Seats", "--seats", "4", "--url", served.base).stdout.split()[-1]
    assert [served.join(new_invite, name)[1].status_code for name in ("Ada", "Bea")] == [303, 409]
    assert served.client().get(invite).status_code == 404


@pytest.mark.parametrize("served", ["sqlite"], indirect=True)  # the rule is the same SQL on both backends
def test_with_approval_a_learner_who_joins_waits_until_the_teacher_lets_them_in(served):
    teacher_link, invite = served.new_class("Gate", "--approval")
    ada, joined = served.join(invite, "Ada")
    assert joined.status_code == 202 and "Your teacher lets each learner in" in joined.text
    assert ada.get("/api/class/me").status_code == 401  # no session until the teacher says so
    _, refused = served.sign_in("Gate", "Ada")
    assert refused.status_code == 403 and "has not let you in yet" in refused.text

    teacher = served.teacher(teacher_link)
    listed = teacher.get("/api/class/learners").json()
    assert listed["approval"] is True and listed["seats"] is None and listed["taken"] == 1
    [waiting] = listed["learners"]
    assert (waiting["name"], waiting["approved"]) == ("Ada", False)
    assert "Ada  (waiting for the teacher)" in served.cli("learners", "Gate").stdout
    approved = send(teacher, "POST", f"/api/class/learners/{waiting['id']}/approve")
    assert approved.status_code == 200 and approved.json()["approved"] is True
    ada, signed_in = served.sign_in("Gate", "Ada")
    assert signed_in.status_code == 303 and ada.get("/api/class/me").json()["name"] == "Ada"

    # The same from the command line.
    served.join(invite, "Bea")
    assert "Bea is in the class" in served.cli("approve", "Gate", "Bea").stdout
    bea, signed_in = served.sign_in("Gate", "Bea")
    assert signed_in.status_code == 303
    # A learner cannot let anyone in, nor remove anyone.
    assert send(bea, "POST", f"/api/class/learners/{waiting['id']}/approve").status_code == 403
    assert send(bea, "DELETE", f"/api/class/learners/{waiting['id']}").status_code == 403


@pytest.mark.parametrize("served", ["postgresql"], indirect=True)  # where runs wait for workers
def test_a_teacher_removes_an_account_its_work_and_its_waiting_runs(served):
    teacher_link, invite = served.new_class("Clean", "--seats", "1")
    puppet, joined = served.join(invite, "Puppet")
    assert joined.status_code == 303
    me = puppet.get("/api/class/me").json()["id"]
    assert send(puppet, "PUT", "/api/progress/code", json={"exercise": EXERCISE, "language": "python",
                                                            "source": "# mine"}).status_code == 200
    # No worker runs here: the runs wait in the class database.
    assert [run(puppet).status_code for _ in range(3)] == [202] * 3
    assert served.join(invite, "Ada")[1].status_code == 409  # the one seat is taken

    teacher = served.teacher(teacher_link)
    removed = send(teacher, "DELETE", f"/api/class/learners/{me}")
    assert removed.status_code == 200, removed.text
    assert removed.json() == {"id": me, "name": "Puppet", "runs_taken_back": 3}
    assert puppet.get("/api/class/me").status_code == 401  # every session of it ended
    assert send(teacher, "DELETE", f"/api/class/learners/{me}").status_code == 404
    assert teacher.get("/api/class/learners").json()["learners"] == []
    ada, joined = served.join(invite, "Ada")  # the seat is free again
    assert joined.status_code == 303 and ada.get("/api/progress/backprop").json()["code"] == {}

    from chainrule.progress import open_store

    store = open_store(database=served.env["CHAINRULE_DATABASE"])
    try:
        left = store.database.read(lambda conn: conn.execute(
            "SELECT COUNT(*) FROM grading_jobs WHERE learner_id = ?", (me,)).fetchone()[0])
    finally:
        store.close()
    assert left == 0
    assert run(ada).status_code == 202
    assert served.cli("remove", "Clean", "Ada").stdout.strip() == (
        "Removed Ada: the account, its work, and 1 run waiting for the grader.")
    assert ada.get("/api/class/me").status_code == 401


# ------------------------------------------------------------------------------------------------ item 8

# The server sees one core (one grading slot), and each run it grades holds that slot until the test says "go" on
# the FIFO that $ONE_CORE_HOLD names (the runs are the real sandbox's, after that): the test fills the waiting
# room it means to, then lets the runs go, instead of a run that sleeps while the others arrive. "waiting" asks
# how many runs wait for the slot. (With one web process, `chainrule serve` serves in this process.)
ONE_CORE = """
import os, sys, threading
os.sched_getaffinity = lambda pid: {0}
os.cpu_count = lambda: 1
import chainrule.grading as grading
goes = threading.Semaphore(0)
def commands():
    with open(os.environ["ONE_CORE_HOLD"]) as fifo:
        for line in fifo:
            if line.strip() == "go":
                goes.release()
            else:
                print(f"waiting: {grading.gate().waiting}", flush=True)
    goes.release(1000)  # the test has gone: nothing is held any more
threading.Thread(target=commands, daemon=True).start()
grade_now = grading.grade_now
def held(*args, **kwargs):
    goes.acquire()
    return grade_now(*args, **kwargs)
grading.grade_now = held
from chainrule.cli import main
sys.exit(main(sys.argv[1:]))
"""

SOLUTION = reference_source(EXERCISE, "python")


class OneCore:
    """The one-core server and the FIFO that lets its held runs go."""

    def __init__(self, folder: Path) -> None:
        fifo = folder / "hold"
        os.mkfifo(fifo)
        env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(folder / "data"), ONE_CORE_HOLD=str(fifo))
        env.pop("CHAINRULE_DATABASE", None)
        self.served = Served(env, ("-c", ONE_CORE))
        # Opened once the server reads it (until then opening it for writing without waiting fails).
        self.hold = os.fdopen(polling.until(lambda: _open_for_writing(fifo), "the server reading the FIFO",
                                            WAIT_SECONDS), "w", buffering=1)

    def waiting(self) -> int:
        """How many runs wait for the slot, as the server's gate counts them."""
        seen = len(self.served.web.lines)
        self.hold.write("waiting\n")
        line = polling.until(lambda: next((line for line in self.served.web.lines[seen:]
                                           if line.startswith("waiting: ")), None), "the server's count", WAIT_SECONDS)
        return int(line.split()[1])

    def go(self, runs: int) -> None:
        self.hold.write("go\n" * runs)

    def stop(self) -> None:
        self.hold.close()
        self.served.stop()


def _open_for_writing(fifo: Path) -> int | None:
    try:
        descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:  # ENXIO: nobody reads it yet
        if error.errno != errno.ENXIO:
            raise
        return None
    os.set_blocking(descriptor, True)
    return descriptor


@pytest.fixture(scope="module")
def one_core_server(tmp_path_factory):
    """A class server in SQLite that sees one core, shared by the two tests below: each makes a class of its
    own, and they run in turn, so neither sees the other's runs."""
    server = OneCore(tmp_path_factory.mktemp("one-core"))
    yield server
    server.stop()


def test_ten_runs_of_one_learner_leave_a_classmate_her_turn_on_sqlite(one_core_server):
    """The server grades one run at a time (it sees one core) and lets others wait. Ada sends ten runs at once
    while the slot is held: three are taken (one running, two waiting) and seven are refused at once, as the
    queue of a class in PostgreSQL does; Bea's run, sent once Ada's two wait, then goes before them."""
    server = one_core_server
    _, invite = server.served.new_class("Physics")
    ada, bea = server.served.join(invite, "Ada")[0], server.served.join(invite, "Bea")[0]
    finished: list[tuple[str, dict]] = []
    lock = threading.Lock()

    def graded(client: httpx.Client, name: str) -> dict:
        answer = run(client, SOLUTION)
        assert answer.status_code == 200, answer.text
        with lock:
            finished.append((name, answer.json()))
        return answer.json()

    with ThreadPoolExecutor(12) as pool:
        burst = [pool.submit(graded, ada, "ada") for _ in range(10)]
        # Bea runs while Ada's burst is in: once the seven refusals are back, each refused because Ada's three
        # were taken (the first holds the slot until the test lets it go).
        polling.until(lambda: len(finished) >= 7 or any(future.done() and future.exception() for future in burst),
                      "Ada's refusals", WAIT_SECONDS, every=0.05)
        bea_run = pool.submit(graded, bea, "bea")
        polling.until(lambda: bea_run.done() or server.waiting() == 3, "Bea's run waiting beside Ada's two",
                      WAIT_SECONDS, every=0.05)
        server.go(4)
        results = [future.result() for future in burst]
        assert bea_run.result()["verdict"] == "passed"  # not "busy"
    refused = [result for result in results if result["verdict"] == "busy"]
    assert len(refused) == 7
    assert all("You already have 3 runs waiting" in result["message"] and result["saved"] is False
               for result in refused)
    order = [name for name, result in finished if result["verdict"] != "busy"]
    assert order.count("ada") == 3 and order[-1] == "ada", order  # Bea's turn came before Ada's last


def test_a_class_in_sqlite_lets_many_learners_runs_wait_instead_of_answering_busy(one_core_server):
    """One slot (one core, held by the first run) and eight learners sending a run at the same moment: all eight
    are graded in turn. The waiting room of 4 that serves one person's lesson answered three of them "busy" (a
    class's busiest minute, measured: 24 of 387 runs of 100 learners)."""
    server = one_core_server
    _, invite = server.served.new_class("Chemistry")
    learners = [server.served.join(invite, f"Learner {number}")[0] for number in range(8)]
    with ThreadPoolExecutor(len(learners)) as pool:
        sent = [pool.submit(run, client, SOLUTION) for client in learners]
        # All eight are in: one holds the slot and seven wait (or some were answered already: "busy").
        polling.until(lambda: any(future.done() for future in sent) or server.waiting() == 7,
                      "seven runs waiting", WAIT_SECONDS, every=0.05)
        server.go(len(learners))
        answers = [future.result() for future in sent]
    assert [answer.status_code for answer in answers] == [200] * len(learners)
    assert [answer.json()["verdict"] for answer in answers] == ["passed"] * len(learners), \
        [answer.json().get("message") for answer in answers]
