"""`chainrule lesson` for real: a uvicorn server in a subprocess, reached over loopback TCP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

import local_http
from web_process import start, stop, wait_for_url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("data_dir_from", ["flag", "environment"])
def test_lesson_command_serves_the_lesson(tmp_path, data_dir_from):
    port = free_port()
    if data_dir_from == "flag":
        process = start(["--port", str(port), "--data-dir", str(tmp_path / "data")])
    else:
        process = start(["--port", str(port)], {"CHAINRULE_DATA_DIR": str(tmp_path / "data")})
    try:
        match = wait_for_url(process)
        url, printed_port, token = match["url"], int(match["port"]), match["token"]
        assert match["host"] == "127.0.0.1"
        assert printed_port == port
        deadline = time.monotonic() + 30
        while True:  # the socket is bound before the URL is printed; give uvicorn a moment to answer
            try:
                with local_http.client() as client:
                    page = client.get(url, follow_redirects=True)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert match["path"] == "/"  # the path page: the learner chooses (or continues) a lesson there
        assert page.status_code == 200 and 'data-page="path"' in page.text
        with local_http.client(base_url=f"http://127.0.0.1:{port}") as client:
            assert client.get("/api/path").status_code == 401
            lesson = client.get("/api/lessons/backprop", headers={"X-Chainrule-Token": token})
            assert lesson.status_code == 200 and len(lesson.json()["sections"]) == 8
            saved = client.put("/api/progress/backprop/predictions/dn", json={"value": 0.5},
                               headers={"X-Chainrule-Token": token})
            assert saved.json()["correct"] is True
            assert client.get("/api/path", headers={"X-Chainrule-Token": token, "host": "evil.example"}).status_code == 403
        assert (tmp_path / "data").is_dir() and any((tmp_path / "data").iterdir())
    finally:
        stop(process)


@pytest.mark.timeout(60)
def test_port_in_use_is_a_clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--port", str(port)],
                              capture_output=True, text=True, timeout=50)
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr


@pytest.mark.timeout(60)
def test_network_host_refused_when_the_sandbox_is_not_strong(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--host", "0.0.0.0", "--port", str(free_port()),
         "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=50, env={**os.environ, "CHAINRULE_SANDBOX_NO_BWRAP": "1"},
    )
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr and "--allow-weak-sandbox" in done.stderr
    assert "http://" not in done.stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("extra_args, env", [
    (["--allow-weak-sandbox"], {"CHAINRULE_SANDBOX_NO_BWRAP": "1"}),  # the operator accepts the risk
    ([], {}),  # this machine's sandbox is strong (bubblewrap, cgroups, seccomp)
])
def test_network_host_starts_with_the_flag_or_a_strong_sandbox(tmp_path, extra_args, env):
    if not extra_args:
        from chainrule.grading import isolation_report

        if isolation_report()["level"] != "strong":
            pytest.skip("the grader's sandbox is not strong on this machine")
    port = free_port()
    process = start(["--host", "0.0.0.0", "--port", str(port), "--data-dir", str(tmp_path), *extra_args], env)
    try:
        match = wait_for_url(process)
        assert int(match["port"]) == port and match["host"] == "127.0.0.1"  # 0.0.0.0 is reached via loopback
    finally:
        stop(process)


@pytest.mark.parametrize("bind_host, url_host", [
    ("0.0.0.0", "127.0.0.1"), ("::", "127.0.0.1"), ("", "127.0.0.1"),  # wildcards listen on loopback too
    ("::1", "[::1]"), ("fe80::1", "[fe80::1]"),  # IPv6 literals need brackets in a URL
    ("127.0.0.1", "127.0.0.1"), ("127.0.0.2", "127.0.0.2"), ("localhost", "localhost"), ("192.168.1.5", "192.168.1.5"),
])
def test_printed_address_names_the_host_actually_bound(bind_host, url_host):
    from chainrule.commands import lesson

    assert lesson.url_host(bind_host) == url_host


def ipv6_loopback_problem() -> str | None:
    """Why this machine cannot listen on ::1, or None if it can."""
    if not socket.has_ipv6:
        return "Python was built without IPv6"
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError as error:
        return f"cannot bind the IPv6 loopback ::1 here ({error})"
    return None


@pytest.mark.timeout(120)
def test_ipv6_loopback_prints_a_bracketed_address_that_works(tmp_path):
    problem = ipv6_loopback_problem()
    if problem:
        pytest.skip(problem)
    process = start(["--host", "::1", "--data-dir", str(tmp_path / "data")])
    try:
        match = wait_for_url(process)
        assert match["host"] == "[::1]", match["url"]
        deadline = time.monotonic() + 30
        while True:
            try:
                with local_http.client() as client:  # keeps the session cookie across the token redirect
                    page = client.get(match["url"], follow_redirects=True)
                    lesson = client.get(f"http://[::1]:{match['port']}/api/lessons/backprop")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert match["path"] == "/"  # the path page: the learner chooses (or continues) a lesson there
        assert page.status_code == 200 and 'data-page="path"' in page.text
        assert lesson.status_code == 200 and len(lesson.json()["sections"]) == 8
    finally:
        stop(process)


@pytest.mark.timeout(60)
def test_unknown_host_is_a_clear_error_about_the_host(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--host", "not_a_host", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=50,
    )
    assert done.returncode == 2
    assert "--host not_a_host" in done.stderr and "'not_a_host' is neither an IP address nor a host name" in done.stderr
    assert "--port" not in done.stderr and "refusing" not in done.stderr
    assert "http://" not in done.stdout


@pytest.mark.timeout(120)
def test_the_port_is_kept_across_starts_and_a_busy_one_falls_back(tmp_path):
    """Without --port, a second start listens where the first did (open tabs reconnect); when that port
    is taken, any free one is used instead of failing."""
    data = tmp_path / "data"
    first = start(["--data-dir", str(data)])
    try:
        int(wait_for_url(first)["port"])
    finally:
        stop(first)
    assert (data / "lesson-port").is_file()
    # Another server on this machine may take the default port meanwhile: remember a port of our own.
    port = free_port()
    (data / "lesson-port").write_text(f"{port}\n")
    again = start(["--data-dir", str(data)])
    try:
        assert int(wait_for_url(again)["port"]) == port
    finally:
        stop(again)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen(1)
        third = start(["--data-dir", str(data)])
        try:
            other = int(wait_for_url(third)["port"])
        finally:
            stop(third)
    assert other != port
    assert (data / "lesson-port").read_text().strip() == str(other)


@pytest.mark.timeout(120)
def test_with_added_lessons_the_link_opens_the_added_lesson(tmp_path):
    made = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "new", "my-own", "--title", "My own", "lessons"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    process = start(["--port", "0", "--data-dir", str(tmp_path / "data"), "--lessons", str(tmp_path / "lessons")])
    try:
        assert wait_for_url(process)["path"] == "/lessons/my-own"
    finally:
        stop(process)
