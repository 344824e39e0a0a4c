"""docs/classroom.md's guide, line by line (issue 43, items 1 and 2): the blocks the guide marks as run here are
run in order, as a teacher types them, each command a process of its own; a line ending in `&` is a server or a
worker, started (a server started again takes the place of the one before, as the guide says) and waited for
until it says it is ready. Between the blocks, what the guide's prose says happens: a learner opens the link
the commands printed and runs their code, which the class grades (in the server on SQLite, by the guide's
`chainrule worker` on PostgreSQL), and the teacher adds a case to the class's own copy of an exercise. Then the
guide's regrade shows that learner's verdict changing, and applies and reverts it. Wednesday's extensions run
after Monday's due date (the guide's console line) and the other actions, the credit by hand after the regrade,
and single sign-on last, against a real OpenID provider, through which a learner joins.

What this test changes in the lines, and only this: a free port instead of 8000 (other tests share the
machine), the throwaway cluster's URL instead of the guide's database, an http:// address on loopback instead
of the guide's https://class.example.org (there is no TLS proxy here), the school's provider (oidc-provider on
loopback, registered as the guide says) and its secret instead of the guide's https://login.school.example and
"...", and the lines that set up the system (`pip install`, `sudo ...`), which the throwaway cluster stands for,
are left out."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Callable

import httpx
import pytest

import local_http
from chainrule.grading import reference_source
from class_process import free_port
from class_world import PASSWORD, csrf_of
from doc_blocks import ROOT, blocks
from job_process import WAIT_SECONDS, Process
from lti_world import Browser, stop_process
from oidc_world import CLIENT_ID, SECRET, OidcWorld, install_provider, start_providers
from polling import until

GUIDE = ROOT / "docs" / "classroom.md"
RUN_HERE = "tests/test_classroom_guide.py"
DOC_DATABASE = "postgresql://chainrule@/chainrule?host=/var/run/postgresql"
DOC_ADDRESS = "https://class.example.org"
DOC_ISSUER, DOC_SECRET = "https://login.school.example", 'CHAINRULE_SSO_SECRET="..."'
DOC_PROVIDER = "School account"
READY = {"serve": "sign in at", "worker": "is grading"}
SOLUTION = reference_source("neuron-grads", "python")
# Right for every built-in case of neuron-grads (their first inputs are 2, -1.5, 0 and 150), wrong below -100.
LEFT_BLIND = SOLUTION.replace("grad[0] = dn * x[0]", "grad[0] = dn * x[0] if x[0] > -100 else 0.0")
EDITED = "class-lessons/backprop/exercises/1-neuron-grads/exercise.json"  # as the guide names it
NEW_CASE = {"name": "neuron: far to the left", "x": [-200.0, 1.0], "w": [0.01, 0.5], "b": 0.1}

pytestmark = pytest.mark.timeout(900)


def guide_blocks(database: bool) -> list[list[str]]:
    """The lines of each guide block that this test runs, in the guide's order (the PostgreSQL ones, or the
    others), comments cut."""
    found = []
    for block in blocks(GUIDE):
        if block.not_run and RUN_HERE in block.not_run and (DOC_DATABASE in block.text) == database:
            joined = block.text.replace("\\\n", " ")  # a line continued with a backslash is one line
            lines = [re.sub(r"\s+#.*$", "", line).strip() for line in joined.splitlines()]
            found.append([line for line in lines if line and not line.startswith(("pip ", "sudo "))])
    return found


class Terminal:
    """A teacher's shell: the environment the guide's `export`s change, and the servers started with `&`."""

    def __init__(self, folder: Path, port: int, database: str | None) -> None:
        self.folder, self.port, self.database = folder, port, database
        self.base = f"http://127.0.0.1:{port}"
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("CHAINRULE_")}
        self.env |= {"PYTHONUNBUFFERED": "1", "CHAINRULE_DATA_DIR": str(folder / "data"),
                     "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
        self.started: list[Process] = []
        self.printed: list[str] = []
        self.transcript: list[str] = []  # everything printed, never cleared
        self.issuer = DOC_ISSUER  # the school's sign-in provider, once one runs (school_provider)

    def here(self, line: str) -> str:
        line = line.replace(DOC_ADDRESS, self.base).replace("127.0.0.1:8000", f"127.0.0.1:{self.port}")
        line = line.replace(DOC_ISSUER, self.issuer).replace(DOC_SECRET, f'CHAINRULE_SSO_SECRET="{SECRET}"')
        if self.database:
            line = line.replace(DOC_DATABASE, self.database)
        if line.startswith("chainrule serve") and "--port" not in line:
            line = line.replace("chainrule serve", f"chainrule serve --port {self.port}", 1)
        return line

    def type(self, line: str, then: Callable[[str], None] | None = None) -> None:
        """Type one line; ``then(what it printed)`` is what happens next outside the terminal (a learner)."""
        line = self.here(line)
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            self.env[name] = value
        elif line.endswith("&"):
            argv = shlex.split(line[:-1])
            assert argv[0] == "chainrule", line
            for process in [process for process in self.started if process.process.args[3] == argv[1]]:
                process.stop()  # started again: it takes the place of the one before
                self.started.remove(process)
            self.started.append(Process(None, argv[1:], READY[argv[1]], env=self.env, cwd=self.folder))
        else:
            done = subprocess.run(["bash", "-c", line], cwd=self.folder, env=self.env, capture_output=True,
                                  text=True, timeout=WAIT_SECONDS)
            assert done.returncode == 0, f"`{line}`: {done.stdout}{done.stderr}"
            self.printed.append(done.stdout)
            self.transcript.append(done.stdout)
            if then is not None:
                then(done.stdout)

    def close(self) -> None:
        for process in reversed(self.started):
            process.stop()


def joined(base: str, invite: str, name: str, waits: bool = False) -> httpx.Client:
    """A learner who joined with ``invite``: signed in, or (``waits``) waiting for the teacher (202)."""
    client = local_http.client(base_url=base, timeout=WAIT_SECONDS)
    page = client.get(invite)
    answer = client.post(invite, data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD})
    assert answer.status_code == (202 if waits else 303), answer.text
    return client


def learner_runs(base: str, invite: str, source: str = SOLUTION) -> httpx.Response:
    """Ada joins with ``invite`` and runs ``source`` for neuron-grads; the answer to the run."""
    client = joined(base, invite, "Ada")
    headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", ""), "X-Chainrule-Run": uuid.uuid4().hex}
    answer = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python", "source": source},
                         headers=headers)
    if answer.status_code != 202:
        return answer
    job = answer.json()["job"]

    def graded() -> httpx.Response | None:
        found = client.get(f"/api/jobs/{job}")
        return found if found.json()["state"] == "graded" else None

    return until(graded, "the run graded by the guide's worker", WAIT_SECONDS)


def monday_s_dates() -> str:
    """The guide's Monday: the teacher's due date of backprop, with the class's time zone and late policy (a
    console block test_docs runs on a class of its own); typed here too, so that Wednesday's extensions have a
    date to move."""
    found = re.search(r'^\$ (chainrule class due "Physics 2b" backprop "[^"]+" --time-zone \S+ --late \S+)$',
                      GUIDE.read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "the guide's Monday sets backprop's due date"
    return found.group(1)


def test_the_guide_on_sqlite_line_by_line_to_a_regrade_with_the_class_s_own_lessons(tmp_path):
    first_steps, actions, extend, own_lessons, regrade, hand, sign_on = guide_blocks(database=False)
    terminal = Terminal(tmp_path, free_port(), None)
    provider = None
    try:
        for line in first_steps:
            terminal.type(line)
        created, invited = terminal.printed[0], terminal.printed[-1]
        # `class create` had no server yet: its links are at serve's default address, which the guide names.
        assert len(re.findall(r"http://127\.0\.0\.1:8000/\S+", created)) == 2
        # Served since, the class remembers where: the new invite leads to the running server.
        invite = invited.strip()
        assert invite.startswith(f"{terminal.base}/join/"), invite
        answer = learner_runs(terminal.base, invite[len(terminal.base):], LEFT_BLIND)
        assert answer.status_code == 200 and answer.json()["status"] == "pass", answer.text
        the_other_actions(terminal, actions)
        wednesday_s_extensions(terminal, extend)
        for line in own_lessons:
            terminal.type(line)
        assert EDITED in GUIDE.read_text(encoding="utf-8")
        manifest = json.loads((tmp_path / EDITED).read_text())
        (tmp_path / EDITED).write_text(json.dumps(manifest | {"cases": [*manifest["cases"], NEW_CASE]}))
        terminal.printed.clear()
        for line in regrade:
            terminal.type(line)
        table, applied, reverted, listed = terminal.printed
        assert "graded; 1 learner would change standing" in table, table
        assert [line.split() for line in table.splitlines() if line.startswith("Ada")] == [["Ada", "passed", "fail",
                                                                                            "yes"]]
        assert "applied; 1 learner changed standing" in applied and "reverted" in reverted
        assert listed.split()[:2] == ["1", "neuron-grads"] and "reverted" in listed
        friday_s_hand(terminal, hand)
        provider = school_provider(terminal)
        single_sign_on(terminal, sign_on)
    finally:
        terminal.close()
        if provider is not None:
            stop_process(provider)


def school_provider(terminal: Terminal) -> subprocess.Popen:
    """The school's provider (oidc-provider), its client registered as the guide says: with the redirect URI
    `chainrule sso redirect-uri` prints (the guide's console line, run here at the served address), client ID
    chainrule-class and a secret. The running process."""
    script = install_provider()
    terminal.type(f'chainrule sso redirect-uri "{DOC_PROVIDER}" --url {DOC_ADDRESS}')
    redirect_uri = terminal.printed[-1].strip()
    assert redirect_uri == f"{terminal.base}/sso/callback/school-account", redirect_uri
    port = free_port()
    terminal.issuer = f"http://127.0.0.1:{port}"
    return start_providers(script, terminal.folder, {DOC_PROVIDER: (port, redirect_uri)}, terminal.env)


class GuideSchool(OidcWorld):
    """oidc_world's sign-in steps (through the provider's own pages), toward the guide's server."""

    base = ""

    @property
    def tool_url(self) -> str:
        return self.base


def single_sign_on(terminal: Terminal, lines: list[str]) -> None:
    """The guide's `sso add` and `sso list` on the class the guide has served all week: the sign-in page offers
    the provider's button, and a learner joins with the invite through the provider (the guide's last invite
    asks for the teacher's approval: she waits, named as the provider says)."""
    terminal.printed.clear()
    for line in lines:
        terminal.type(line)
    added, listed = terminal.printed
    assert added.strip().endswith(f"Register this redirect URI at the provider: {terminal.base}/sso/callback/"
                                  "school-account"), added
    assert listed.strip() == f"{DOC_PROVIDER}  issuer {terminal.issuer}  client ID {CLIENT_ID}", listed
    page = local_http.get(terminal.base + "/sign-in", timeout=WAIT_SECONDS).text
    assert f"Sign in with {DOC_PROVIDER}" in page, page
    school = GuideSchool(terminal.folder, terminal.env, terminal.port, {DOC_PROVIDER: int(terminal.issuer.rsplit(":", 1)[1])},
                         ids={DOC_PROVIDER: int(re.search(r'action="/sso/start/(\d+)"', page).group(1))})
    school.base = terminal.base
    invite = re.findall(rf"{re.escape(terminal.base)}(/join/\S+)", "".join(terminal.transcript))[-1]
    answer = school.sign_in_with(Browser(), invite, DOC_PROVIDER, "dot-4e2")
    assert answer.headers.get("x-chainrule-sign-in-refusal") == "waiting", answer.text
    assert "Dorothy Vaughan" in answer.text


def wednesday_s_extensions(terminal: Terminal, lines: list[str]) -> None:
    """The guide's extensions, after Monday's date: Ada's own date two days after the lesson's, then a CSV the
    school office sent (the paragraph's `learner,lesson,due`: Bea a day more)."""
    terminal.type(monday_s_dates())
    (terminal.folder / "extensions.csv").write_text("learner,lesson,due\nBea,backprop,+1\n", encoding="utf-8")
    terminal.printed.clear()
    for line in lines:
        terminal.type(line)
    one, many = terminal.printed
    assert "extension: Ada, backprop: due 2026-12-06 23:59 (Europe/Berlin)" in one.splitlines(), one
    assert many.startswith("1 extension set.\n"), many
    assert "extension: Bea, backprop: due 2026-12-05 23:59 (Europe/Berlin)" in many.splitlines(), many


def friday_s_hand(terminal: Terminal, lines: list[str]) -> None:
    """The guide's credit by hand, after the regrade: each line taken, and each kept in the audit log with its
    reason, in order."""
    terminal.printed.clear()
    for line in lines:
        terminal.type(line)
    assert len(terminal.printed) == len(lines) == 4
    terminal.type('chainrule class audit "Physics 2b"')  # not the guide's: what its lines did
    audit = terminal.printed[-1]
    reasons = [re.search(r'--reason "([^"]+)"', line).group(1) for line in lines]
    assert [audit.find(reason) > -1 for reason in reasons] == [True] * 4, audit
    assert sorted(reasons, key=audit.find) == reasons, audit  # oldest first, in the guide's order


def the_other_actions(terminal: Terminal, lines: list[str]) -> None:
    """The guide's other actions, in order, on the class Ada ran her code in: every link at the address the
    class is served at; Bea and Cal join with the invite made with --approval and wait, and the teacher lets
    Bea in and removes Cal."""
    terminal.printed.clear()
    waiting = []

    def bea_and_cal_join(printed: str) -> None:
        path = re.findall(rf"{re.escape(terminal.base)}(/join/\S+)", printed)[0]
        waiting.extend(joined(terminal.base, path, name, waits=True) for name in ("Bea", "Cal"))

    for line in lines:
        terminal.type(line, bea_and_cal_join if "--approval" in line else None)
    said = dict(zip([line.split()[2] + ("-approval" if "--approval" in line else "") for line in lines],
                    terminal.printed))
    for command, route in (("invite", "/join/"), ("teacher-link", "/set-password/"), ("reset-link", "/set-password/"),
                           ("invite-approval", "/join/")):
        assert re.search(rf"^{re.escape(terminal.base + route)}\S+$", said[command], re.MULTILINE), (command, said)
    assert re.search(r"^neuron-grads\s+1\s", said["exercises"], re.MULTILINE), said["exercises"]  # Ada's one run
    assert "run neuron-grads (python): passed" in said["timeline"]
    assert "Ada" in (terminal.folder / "gradebook.csv").read_text()
    assert "Bea  (waiting for the teacher)" in said["learners"] and "Cal  (waiting for the teacher)" in said["learners"]
    for client in waiting:
        client.close()
    terminal.type('chainrule class learners "Physics 2b"')  # not the guide's: what its last two lines did
    learners = terminal.printed[-1]
    assert "Bea" in learners and "Bea  (waiting" not in learners and "Cal" not in learners, learners


def test_the_guide_on_postgresql_starts_a_worker_that_grades(postgres_url, tmp_path):
    terminal = Terminal(tmp_path, free_port(), postgres_url)
    try:
        [steps] = guide_blocks(database=True)
        for line in steps:
            terminal.type(line)
        assert [process.process.args[3] for process in terminal.started] == ["serve", "worker"]
        invite = re.findall(rf"{re.escape(terminal.base)}(/join/\S+)", terminal.printed[0])[0]
        answer = learner_runs(terminal.base, invite)
        assert answer.json()["result"]["status"] == "pass", answer.text
    finally:
        terminal.close()
