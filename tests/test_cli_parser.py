"""`chainrule COMMAND` imports and builds its own command's parser only; `chainrule --help` builds every one;
`import chainrule` loads its names when they are used."""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule.cli import MODULE_COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parent.parent
LOADED = ("import sys; from chainrule.cli import build_parser; parser = build_parser({command!r}); {then}; "
          "print(sorted(m for m in ('chainrule.lessons', 'chainrule.classes.accounts') if m in sys.modules))")


def loaded_by(command: str | None, then: str = "None") -> str:
    run = subprocess.run([sys.executable, "-c", LOADED.format(command=command, then=then)], capture_output=True,
                         text=True, check=True)
    return run.stdout.strip()


def test_a_command_loads_only_what_its_own_parser_needs() -> None:
    assert loaded_by("progress") == "[]"
    assert loaded_by("check") == "[]"
    assert loaded_by(None) == "[]"  # `chainrule --help`: every parser built, no lesson and no account loaded
    # check's choices are the exercises: registered when a value is checked or its usage shown.
    assert loaded_by("check", "parser.parse_args(['check', 'x.py', '-e', 'slopes-by-rule'])") == "['chainrule.lessons']"
    assert loaded_by("start", "parser.parse_args(['start', 'engine-value'])") == "['chainrule.lessons']"
    assert loaded_by("class", "parser.parse_args(['class', 'create', 'A'])") == "[]"


# Commands that one module registers together.
TOGETHER = [{"progress", "review"}, {"exercises", "start", "check"}]


def test_the_whole_parser_lists_every_command_and_one_command_its_own() -> None:
    def commands(parser) -> set[str]:
        (subparsers,) = [action for action in parser._actions if action.dest == "command"]
        return set(subparsers.choices)

    every = commands(build_parser())
    assert {"lesson", "serve", "worker", "class", "lessons", "graph", "exercises", "start", "check", "train",
            "progress", "review"} <= every
    for command in every:
        expected = next((group for group in TOGETHER if command in group), {command})
        assert commands(build_parser(command)) == expected, command


def test_the_start_benchmark_runs() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cli.py"), "--runs", "1"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()[1:]] == ["progress", "lessons", "worker", "check"]


def test_every_command_answers_help(capsys) -> None:
    for command in MODULE_COMMANDS:
        with pytest.raises(SystemExit) as stopped:
            main([command, "--help"])
        assert stopped.value.code == 0, command
        assert capsys.readouterr().out.startswith(f"usage: chainrule {command} "), command


def test_the_table_names_every_command_of_the_whole_parser() -> None:
    (subparsers,) = [action for action in build_parser()._actions if action.dest == "command"]
    assert list(subparsers.choices) == list(MODULE_COMMANDS)  # the order of --help too


# Run in a fresh process: the chainrule modules (and a few others) a command loads, as `chainrule ARGS` does.
IMPORTED = ("import sys; from chainrule.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('modules:', *sorted(m for m in sys.modules if m.startswith('chainrule') or m in {watched!r}))")
WATCHED = ("fastapi", "starlette", "uvicorn", "pydantic", "authlib", "jinja2", "psycopg", "xml.sax.saxutils")
# Command modules that another command's module uses for its shared options (`--database`, the LTI tool).
SHARED = {"serve": {"class_"}, "lti": {"class_"}, "sso": {"class_", "lti"}}


@functools.cache
def imported_by(*args: str, cwd: Path = ROOT) -> frozenset[str]:
    """What `chainrule ARGS` imports, in a fresh process; run once per ARGS and folder for the module (the help
    of `worker`, `lesson`, `serve` and `class` is looked at by two tests)."""
    run = subprocess.run([sys.executable, "-c", IMPORTED.format(watched=set(WATCHED)), *args], capture_output=True,
                         text=True, timeout=120, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return frozenset(run.stdout.rsplit("modules:", 1)[1].split())  # after what the command printed


def test_a_command_loads_no_other_command_module() -> None:
    for command, own in MODULE_COMMANDS.items():
        if command in ("start", "check", "review"):
            continue  # their module is that of `exercises` and `progress`, checked with them
        loaded = {name.rsplit(".", 1)[1] for name in imported_by(command, "--help")
                  if name.startswith("chainrule.commands.") and name.rsplit(".", 1)[1] in MODULE_COMMANDS.values()}
        assert loaded == {own} | SHARED.get(own, set()), command


def test_import_chainrule_loads_its_names_when_used() -> None:
    run = subprocess.run([sys.executable, "-c", "import sys, chainrule; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, timeout=120)
    assert [name for name in run.stdout.split() if name.startswith("chainrule")] == ["chainrule"]
    loaded = imported_by("--version")  # no command's module either
    assert not any(name.startswith("chainrule.commands.") for name in loaded), loaded
    assert loaded & {"chainrule.engine", "chainrule.traces", "chainrule.drawing", "chainrule.compiled",
                     "chainrule.replay", "chainrule.explanations", "chainrule.func"} == set()


def test_grading_a_file_loads_no_web_server(tmp_path) -> None:
    # A real `chainrule check` of a starter file: the grader runs, the web server's modules never load.
    subprocess.run([sys.executable, "-m", "chainrule", "start", "local-gradients"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    loaded = imported_by("check", "local-gradients.py", cwd=tmp_path)
    assert "chainrule.grading.grader" in loaded  # it did grade
    assert loaded & {"fastapi", "starlette", "uvicorn", "pydantic", "jinja2", "chainrule.web", "chainrule.classes",
                     "xml.sax.saxutils", "chainrule.drawing"} == set(), loaded


def test_the_worker_and_the_lesson_help_load_no_web_framework() -> None:
    for command in ("worker", "lesson", "serve", "class"):
        assert imported_by(command, "--help") & {"fastapi", "starlette", "uvicorn", "pydantic", "authlib"} == set()


def test_the_package_keeps_its_public_names() -> None:
    import chainrule
    import chainrule.compiled
    import chainrule.drawing
    import chainrule.traces
    from chainrule.engine import Value
    from chainrule.traces import trace

    # The functions and their modules have names of their own (issue 46 item 4): both are reachable, and
    # loading a module changes nothing the package's names mean.
    assert chainrule.trace is trace and chainrule.traces.trace is trace
    assert chainrule.draw is chainrule.drawing.draw and chainrule.compile is chainrule.compiled.compile
    assert chainrule.explain is importlib.import_module("chainrule.explanations").explain
    for shadowing in ("chainrule.trace", "chainrule.draw", "chainrule.compile", "chainrule.explain"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(shadowing)
    assert chainrule.Value is Value and chainrule.func.__name__ == "chainrule.func"
    assert all(hasattr(chainrule, name) for name in chainrule.__all__)
    assert set(chainrule.__all__) <= set(dir(chainrule))
    namespace: dict = {}
    exec("from chainrule import *", namespace)
    assert namespace["hvp"] is chainrule.func.hvp and namespace["explain"] is chainrule.explain
    with pytest.raises(AttributeError):
        _ = chainrule.no_such_name


def test_the_start_up_cpu_benchmark_runs() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_startup.py"), "--runs", "1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [line.rsplit(None, 1) for line in run.stdout.splitlines()[1:]]
    assert [what for what, _ in rows][:2] == ["import chainrule", "chainrule check --help"]
    if sys.platform.startswith("linux"):
        assert [what for what, _ in rows][-4:] == [f"chainrule {name}, {when}" for name in ("serve", "lesson")
                                                   for when in ("first answer", "to its exit")]
        assert all(float(rows[at][1]) <= float(rows[at + 1][1]) for at in (-4, -2))  # a start, then its end
    assert all(float(cpu) > 0 for _, cpu in rows)


BROKEN_TRAIN = ("import sys; sys.modules['chainrule.datasets'] = None  # as a module this system lacks looks\n"
                "from chainrule.cli import main\nsys.exit(main(sys.argv[1:]))")


def test_a_command_module_that_cannot_import_leaves_the_others_working(tmp_path) -> None:
    def chainrule(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", BROKEN_TRAIN, *args], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)

    listing = chainrule("--help")
    assert listing.returncode == 0, listing.stderr
    words = " ".join(listing.stdout.split())  # as argparse wrapped it
    assert "train (not available here: needs the Python module 'chainrule.datasets')" in words
    assert "graph show an expression's graph" in words
    train = chainrule("train", "moons")
    assert train.returncode == 2 and "chainrule train is not available on this system" in train.stderr
    graph = chainrule("graph", "x*y", "x=2", "y=3")  # d(x*y)/dx = y = 3, by hand
    assert graph.returncode == 0 and "d(out)/dx = 3" in graph.stdout, graph.stderr


# `chainrule serve` run in this program's main thread (as the console script runs it); a thread waits for its
# first answer, then prints what was loaded by then.
# The program's first answer at PATH (its status line), asked for until the server is up.
ASK_UNTIL_ANSWERED = """
import socket, time

def answer_at(path):
    deadline = time.monotonic() + 120  # only catches a hang
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", {port}), timeout=5) as sock:
                sock.sendall(f"GET {{path}} HTTP/1.0\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
                return sock.recv(64).split(b"\\r\\n", 1)[0].decode()
        except OSError:
            time.sleep(0.05)
    return ""
"""

FIRST_ANSWER = ASK_UNTIL_ANSWERED + """
import os, sys, threading
from chainrule.cli import main

def first_answer():
    print("answer:", answer_at("/sign-in"))
    print("modules:", *sorted(sys.modules), flush=True)
    os._exit(0)

threading.Thread(target=first_answer, daemon=True).start()
main(["serve", "--workers", "1", "--port", "{port}"])
"""


def test_a_class_server_loads_no_http_client_or_token_library_before_it_needs_one(tmp_path) -> None:
    # Single sign-on and the LMS need httpx, joserfc and Authlib (with cryptography) only when a class uses them:
    # a class server that has not called out nor checked a token has not paid for importing them.
    from class_process import free_port
    from lti_world import cli
    from reaper import run_in_a_session

    env = {**os.environ, "CHAINRULE_DATA_DIR": str(tmp_path / "data")}
    env.pop("CHAINRULE_DATABASE", None)
    code, _, errors = cli("class", "create", "Physics", env=env)  # in this process: the class is all it gives
    assert code == 0, errors
    run = run_in_a_session([sys.executable, "-c", FIRST_ANSWER.format(port=free_port())], env=env, timeout=180)
    assert "answer: HTTP/1.1 200 OK" in run.stdout, run.stdout + run.stderr
    loaded = set(run.stdout.rsplit("modules:", 1)[1].split())
    assert {"chainrule.web.routes_sso", "chainrule.classes.id_tokens", "chainrule.classes.lti_keys"} <= loaded
    assert {name.split(".")[0] for name in loaded} & {"httpx", "joserfc", "authlib", "cryptography"} == set()


# `chainrule lesson` in this program's main thread, as the console script runs it: quiet_start.started is
# watched (it still runs) to count the collections of the start; a thread prints what holds at the first answer.
QUIET_START = ASK_UNTIL_ANSWERED + """
import gc, os, sys, threading
from chainrule.cli import main
from chainrule import quiet_start

def collections():
    return sum(generation["collections"] for generation in gc.get_stats())

at_started = []

def watched(started=quiet_start.started):
    at_started.append(collections())
    started()

def first_answer():
    print("answer:", answer_at("/").split(" ", 1)[0])
    print("collections while starting:", [count - before for count in at_started])
    print("collecting:", gc.isenabled(), "frozen:", gc.get_freeze_count(), flush=True)
    os._exit(0)

quiet_start.started = watched
threading.Thread(target=first_answer, daemon=True).start()
before = collections()
main(["lesson", "--no-browser", "--port", "{port}", "--data-dir", sys.argv[1]])
"""


def test_a_server_starts_without_the_garbage_collector_and_answers_with_it(tmp_path) -> None:
    # The start makes objects that live as long as the process, which collections would walk again and again
    # (quiet_start.py): none runs before the server's first answer; then what the start made is frozen
    # and the collector is on again, for the requests.
    from class_process import free_port
    from reaper import run_in_a_session

    run = run_in_a_session([sys.executable, "-c", QUIET_START.format(port=free_port()), str(tmp_path)], timeout=180)
    assert "answer: HTTP/1.1" in run.stdout, run.stdout + run.stderr
    assert "collections while starting: [0]" in run.stdout, run.stdout
    enabled, frozen = run.stdout.rsplit("collecting:", 1)[1].split(" frozen: ")
    assert enabled.strip() == "True"
    assert int(frozen) > 10_000  # the modules, the app and its routes: several hundred thousand objects


def test_a_refused_server_start_gives_the_collector_back_and_other_commands_never_lose_it(capsys) -> None:
    import gc

    from chainrule import quiet_start

    frozen = gc.get_freeze_count()
    assert main(["serve", "--port", "0"]) == 2  # refused before it opens anything
    assert "--port must be between 1 and 65535" in capsys.readouterr().err
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # on again, nothing frozen: it never served
    for command in MODULE_COMMANDS:
        quiet_start.starting(command)
        assert gc.isenabled() == (command not in quiet_start.SERVER_COMMANDS), command
        quiet_start.ended()
        assert gc.isenabled() and gc.get_freeze_count() == frozen, command


# The lesson app in a fresh process: what is loaded after its start and a page, then after a lesson's text.
MARKDOWN_WHEN_NEEDED = """
import sys, tempfile
from fastapi.testclient import TestClient
from chainrule.web import create_app

client = TestClient(create_app("t" * 20, tempfile.mkdtemp(), port=8765), base_url="http://127.0.0.1:8765",
                    headers={"X-Chainrule-Token": "t" * 20})
assert client.get("/?token=" + "t" * 20).status_code == 200  # the link the server prints: its cookie is set
assert client.get("/lessons/backprop").status_code == 200
print("after the page:", "markdown_it" in sys.modules)
lesson = client.get("/api/lessons/backprop").json()
print("after its text:", "markdown_it" in sys.modules, "<p>" in lesson["sections"][0]["html"])
"""


def test_a_lesson_server_imports_the_markdown_renderer_when_a_text_is_first_asked_for() -> None:
    run = subprocess.run([sys.executable, "-c", MARKDOWN_WHEN_NEEDED], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-2:] == ["after the page: False", "after its text: True True"], run.stdout
