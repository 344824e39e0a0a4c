"""`chainrule serve` as a real process on the embedded SQLite default: it answers, checks Host, and refuses
to listen beyond loopback when the grader's sandbox is not strong. (On PostgreSQL: tests/browser/test_class_page.py.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

import local_http
from class_process import create_class
from reaper import spawn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(120)
def test_serve_answers_on_the_sqlite_default_and_checks_the_host(tmp_path):
    env = {**os.environ, "CHAINRULE_DATA_DIR": str(tmp_path / "data")}
    env.pop("CHAINRULE_DATABASE", None)
    port = free_port()
    _, invite = create_class("Launch", f"http://127.0.0.1:{port}", env)  # in this process; serve is the process here
    process = spawn([sys.executable, "-m", "chainrule", "serve", "--port", str(port)], env=env,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = process.stdout.readline()
        assert "chainrule serve is running for the classes in" in first and "class.sqlite" in first
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = local_http.get(invite, timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.2)
        assert answer.status_code == 200 and "Join Launch" in answer.text
        assert local_http.get(f"http://127.0.0.1:{port}/").headers["location"] == "/sign-in?next=/"
        assert local_http.get(invite, headers={"Host": "evil.example"}).status_code == 403
        assert (tmp_path / "data" / "class.sqlite").is_file()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.timeout(60)
def test_serve_refuses_a_network_address_when_the_sandbox_is_not_strong(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chainrule", "serve", "--host", "0.0.0.0", "--port", str(free_port()),
         "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=50, env={**os.environ, "CHAINRULE_SANDBOX_NO_BWRAP": "1"},
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr and "--allow-weak-sandbox" in done.stderr
    assert not (tmp_path / "class.sqlite").exists()
