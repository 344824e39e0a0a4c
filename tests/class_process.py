"""A real `chainrule serve` for tests that attack it: `chainrule serve` as a process (the class in SQLite in a
data folder, or in PostgreSQL when ``database`` is a URL), its classes made by `chainrule class create` run in
this process (tests/lti_world.py's cli(): the command's own code on the same database, without a process's
start), and browser-like clients.

    server = ClassServer.start(tmp_path, database=None)
    ada = server.join("Ada")                  # an httpx client holding Ada's cookies
    answer = server.sign_in(server.client(), "Ada", PASSWORD)
    other = server.add_class("Other")         # another class on the same server: its own links and learners
    bea = other.join("Bea")
    server.stop()

A server shared by a module's tests gives each test a class of its own with add_class(), so that the tests
stay independent of each other while only one server starts.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx

import local_http
from class_world import PASSWORD, csrf_of
from lti_world import cli
from reaper import spawn

REPO = Path(__file__).resolve().parents[1]
CLASS = "Edges"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_coroutine(function, *args):
    """``await function(*args)`` from a plain test, in a thread of its own: the test's thread may already
    run an event loop (Playwright's sync API keeps one for the session's browser)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, function, *args).result()


def create_class(name: str, base: str, env: dict[str, str], *options: str) -> tuple[str, str]:
    """(the teacher's one-time link, the invite link) of a class made by `chainrule class create` on the
    database ``env`` names."""
    code, printed, error = cli("class", "create", name, "--url", base, *options, env=env)
    assert code == 0, error
    teacher_link, invite = re.findall(rf"{re.escape(base)}/\S+", printed)
    return teacher_link, invite


class ClassServer:
    def __init__(self, base: str, teacher_link: str, invite: str, process: subprocess.Popen, lines: list[str],
                 env: dict[str, str], class_name: str = CLASS) -> None:
        self.base, self.teacher_link, self.invite, self.class_name = base, teacher_link, invite, class_name
        self.process, self.lines, self.env = process, lines, env

    @classmethod
    def start(cls, folder: Path, database: str | None = None, class_name: str = CLASS,
              serve_args: tuple[str, ...] = ()) -> "ClassServer":
        env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(folder / "data"))
        env.pop("CHAINRULE_DATABASE", None)
        if database:
            env["CHAINRULE_DATABASE"] = database  # in the environment, never on a command line
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        teacher_link, invite = create_class(class_name, base, env)
        if "--workers" not in serve_args:  # one web process, whose memory and pools the tests measure
            serve_args = ("--workers", "1", *serve_args)
        process = spawn([sys.executable, "-m", "chainrule", "serve", "--port", str(port), *serve_args], env=env,
                        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            for line in process.stdout:
                lines.append(line)
                if "sign in at" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(90) and process.poll() is None, "".join(lines)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        return cls(base, teacher_link, invite, process, lines, env, class_name)

    def add_class(self, name: str, *options: str) -> "ClassServer":
        """A new class on this server (`chainrule class create NAME OPTIONS`): this server seen through the new
        class's teacher link and invite, so that join() and the rest act in it."""
        teacher_link, invite = create_class(name, self.base, self.env, *options)
        view = copy.copy(self)
        view.teacher_link, view.invite, view.class_name = teacher_link, invite, name
        return view

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    # ---------------------------------------------------------------- clients

    def client(self, cookies: dict[str, str] | None = None) -> httpx.Client:
        """A fresh browser: no cookies yet, or these."""
        return local_http.client(base_url=self.base, follow_redirects=False, timeout=120, cookies=cookies)

    def post_form(self, client: httpx.Client, path: str, fields: dict[str, str], form_page: str | None = None):
        """Open the form's page (for its CSRF token), then send the form as a browser does."""
        page = client.get(form_page or path)
        return client.post(path, data={"csrf": csrf_of(page.text), **fields})

    def sign_in(self, client: httpx.Client, name: str, password: str, class_name: str | None = None):
        return self.post_form(client, "/sign-in", {"class_name": class_name or self.class_name, "name": name,
                                                   "password": password})

    def join(self, name: str, client: httpx.Client | None = None) -> httpx.Client:
        client = client or self.client()
        answer = self.post_form(client, self.invite.removeprefix(self.base), {"name": name, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        return client

    # ---------------------------------------------------------------- the process's memory

    def reset_peak_memory(self) -> int:
        """Forget the process's peak resident size (Linux's clear_refs); returns its resident size now, in KiB."""
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        return self._status_kib("VmRSS")

    def peak_memory(self) -> int:
        """The process's peak resident size since the last reset, in KiB."""
        return self._status_kib("VmHWM")

    def _status_kib(self, key: str) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE).group(1))
