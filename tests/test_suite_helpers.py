"""Rules for the test suite's helpers, read from its source (AST, no test is run): a test module imports its
helpers from helper modules (tests/class_process.py, tests/web_process.py, ...), never from another test
module; a process started in a session of its own is started by reaper.spawn, which records it with the
watchdog that ends it if the run is killed (tests/reaper.py); and a page's wait_for_function asks its predicate
every PAGE_POLL_MS (tests/polling.py), not on every animation frame; and an HTTP client is made by
tests/local_http.py, which shares one TLS context, not by httpx directly (a context of its own per client)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

def python_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if "vendor" not in path.parts and "oidc" not in path.parts)


def imported_test_modules(path: Path) -> list[str]:
    """The test modules (test_*) that a file imports, at any depth of its code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [name for name in names if name.split(".")[0].startswith("test_")]
    return found


def calls(path: Path) -> list[ast.Call]:
    """Every call in a file's code, at any depth."""
    return [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)]


def breaking(rule, allowed: str = "") -> dict[str, list]:
    """What `rule` finds in each file of the suite (but the one named `allowed`, where the rule's one place is)."""
    return {str(path.relative_to(TESTS)): found for path in python_files()
            if path.name != allowed and (found := rule(path))}


def own_sessions(path: Path) -> list[int]:
    """Lines where a file starts a process in a session of its own by hand: start_new_session,
    process_group or preexec_fn=os.setsid in a call."""
    lines = []
    for node in calls(path):
        for keyword in node.keywords:
            if keyword.arg in ("start_new_session", "process_group") or (
                    keyword.arg == "preexec_fn" and "setsid" in ast.unparse(keyword.value)):
                lines.append(node.lineno)
    return lines


def unpaced_waits(path: Path) -> list[int]:
    """Lines where a page's wait_for_function is called without polling=PAGE_POLL_MS (tests/polling.py): without
    it Playwright asks the predicate on every animation frame, Chromium's renderer busy all the wait."""
    lines = []
    for node in calls(path):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "wait_for_function":
            polling = [keyword.value for keyword in node.keywords if keyword.arg == "polling"]
            if not (polling and isinstance(polling[0], ast.Name) and polling[0].id == "PAGE_POLL_MS"):
                lines.append(node.lineno)
    return lines


# What makes an httpx client, and with it a TLS context of its own (tests/local_http.py says why not).
HTTPX_MAKERS = ("Client", "AsyncClient", "HTTPTransport", "AsyncHTTPTransport", "request", "get", "post", "put",
                "patch", "delete", "head", "options", "stream")


def own_http_clients(path: Path) -> list[int]:
    """Lines where a file makes an httpx client, transport or one-off request itself (httpx.Client(...),
    httpx.get(...)) instead of through tests/local_http.py."""
    return [node.lineno for node in calls(path) if isinstance(node.func, ast.Attribute)
            and node.func.attr in HTTPX_MAKERS and isinstance(node.func.value, ast.Name) and node.func.value.id == "httpx"]


def test_no_test_module_imports_from_another_test_module() -> None:
    assert breaking(imported_test_modules) == {}


def test_every_process_in_a_session_of_its_own_is_started_by_spawn() -> None:
    assert breaking(own_sessions, allowed="reaper.py") == {}


def test_every_wait_for_function_polls_at_the_one_interval() -> None:
    assert breaking(unpaced_waits) == {}


def test_every_http_client_shares_the_one_tls_context() -> None:
    assert breaking(own_http_clients, allowed="local_http.py") == {}


def test_the_rule_sees_an_http_client_made_by_hand(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("import httpx\nimport local_http\n\n"
                     "def test_asks():\n"
                     "    httpx.get('http://127.0.0.1:1/')\n"
                     "    with httpx.Client(timeout=httpx.Timeout(5)) as client:\n"
                     "        client.get('/')\n"
                     "    httpx.AsyncClient(transport=httpx.HTTPTransport(retries=2))\n"
                     "    local_http.client(timeout=httpx.Timeout(5)).get('/')\n", encoding="utf-8")
    assert sorted(own_http_clients(probe)) == [5, 6, 8, 8]


def test_the_rules_see_an_import_from_a_test_module_and_a_session_by_hand(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("import os, subprocess\nfrom test_jobs import Process\n\n"
                     "def test_starts():\n    import test_lti\n"
                     "    subprocess.Popen(['true'], start_new_session=True)\n"
                     "    subprocess.Popen(['true'], preexec_fn=os.setsid)\n", encoding="utf-8")
    assert imported_test_modules(probe) == ["test_jobs", "test_lti"]
    assert sorted(own_sessions(probe)) == [6, 7]


def test_the_rule_sees_a_wait_for_function_without_the_interval(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("from polling import PAGE_POLL_MS\n\n"
                     "def test_waits(page):\n"
                     "    page.wait_for_function('() => true')\n"
                     "    page.wait_for_function('() => true', polling=100)\n"
                     "    page.wait_for_function('() => true', polling='raf')\n"
                     "    page.wait_for_function('() => true', timeout=5, polling=PAGE_POLL_MS)\n", encoding="utf-8")
    assert unpaced_waits(probe) == [4, 5, 6]


def test_the_cheap_argon2_parameters_are_written_once() -> None:
    """FAST_HASHER (tests/class_world.py) is the one place for the tests' cheap argon2id costs: no copy of
    it, and no other hasher with the same costs."""
    written = ("time_cost=1, " "memory_cost=8,", "FAST_HASHER" " = ")  # in two parts: not found here
    copies = sorted(str(path.relative_to(TESTS.parent)) for root in ("tests", "src") for path in
                    (TESTS.parent / root).rglob("*.py")
                    if any(text in path.read_text(encoding="utf-8") for text in written))
    assert copies == ["tests/class_world.py"]
