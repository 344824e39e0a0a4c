"""`chainrule serve --workers N` for real (issue 31, item 1): two web processes on one port sharing a class in
PostgreSQL, a session made on one used on the other (which process answered is read from the kernel's socket
table), a clean stop, and SQLite's refusal."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from class_process import CLASS, PASSWORD, REPO, ClassServer, csrf_of, free_port
from server_sockets import children_of, no_delay_of, server_end


class Browser:
    """One kept-alive connection with its own cookie jar: whichever process accepted it answers all of it."""

    def __init__(self, port: int, cookies: dict[str, str] | None = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.connection.connect()
        self.cookies = dict(cookies or {})
        self.port = port

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        headers.setdefault("Origin", f"http://127.0.0.1:{self.port}")
        self.connection.request(method, path, body=body, headers=headers)
        answer = self.connection.getresponse()
        text = answer.read().decode()
        for value in answer.headers.get_all("set-cookie") or []:
            for name, morsel in SimpleCookie(value).items():
                self.cookies[name] = morsel.value
        return answer.status, text

    @property
    def local_port(self) -> int:
        return self.connection.sock.getsockname()[1]


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory, postgres_cluster):
    from postgres_cluster import new_postgres_schema

    server = ClassServer.start(tmp_path_factory.mktemp("workers"), database=new_postgres_schema(postgres_cluster),
                               serve_args=("--workers", "2"))
    yield server
    server.stop()


def test_a_session_made_on_one_web_process_works_on_the_other(two_processes):
    server = two_processes
    port = urlsplit(server.base).port
    deadline = time.monotonic() + 60
    while len(workers := children_of(server.process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the supervisor forks them once it has said where to sign in
    assert len(workers) == 2, "".join(server.lines)
    assert any("2 web processes answer on port" in line for line in server.lines), server.lines
    server.join("Ada").close()

    browsers: dict[int, Browser] = {}  # the process that answers -> a connection it accepted
    for _ in range(40):
        browser = Browser(port)
        assert browser.request("GET", "/sign-in")[0] == 200
        browsers.setdefault(server_end(port, browser.local_port, workers)[0], browser)
        if len(browsers) == 2:
            break
    assert len(browsers) == 2, "every connection went to one process"
    (first_pid, first), (second_pid, second) = browsers.items()
    # Each web process sends its answers at once (commands/serve_processes.answer_without_delay): Nagle's
    # algorithm off on the connections it accepted, or an answer's body waits ~40 ms for the client's ack.
    assert [no_delay_of(*server_end(port, browser.local_port, workers)) for browser in browsers.values()] == [1, 1]

    status, page = first.request("GET", "/sign-in")
    form = urlencode({"csrf": csrf_of(page), "class_name": CLASS, "name": "Ada", "password": PASSWORD}).encode()
    status, _ = first.request("POST", "/sign-in", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303
    assert server_end(port, first.local_port, workers)[0] == first_pid

    second.cookies = dict(first.cookies)  # the same browser's cookies, on a connection the other process holds
    status, page = second.request("GET", "/account")
    assert status == 200 and "Ada" in page
    csrf = next(value for name, value in second.cookies.items() if "csrf" in name)
    draft = json.dumps({"exercise": "neuron-grads", "language": "python", "source": "# saved on the other"}).encode()
    status, text = second.request("PUT", "/api/progress/code", draft,
                                  {"Content-Type": "application/json", "X-CSRF-Token": csrf})
    assert status == 200, text
    assert server_end(port, second.local_port, workers)[0] == second_pid != first_pid
    for browser in browsers.values():
        browser.connection.close()

    os.kill(server.process.pid, signal.SIGTERM)  # a clean stop: every web process ends, the port is free
    assert server.process.wait(timeout=60) == 0
    assert not any(Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
                   for pid in workers)
    assert "chainrule serve stopped." in "".join(server.lines)


def test_sqlite_refuses_more_than_one_web_process_and_says_what_to_use(tmp_path):
    env = dict(os.environ, CHAINRULE_DATA_DIR=str(tmp_path))
    env.pop("CHAINRULE_DATABASE", None)
    answer = subprocess.run([sys.executable, "-m", "chainrule", "serve", "--port", str(free_port()), "--workers", "2"],
                            env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert answer.returncode == 2
    assert "--workers 2 needs the class in PostgreSQL (--database URL" in answer.stderr
    assert "Use --workers 1 here" in answer.stderr
