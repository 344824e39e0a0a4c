"""Every example in README.md and docs/*.md runs here, so a doc that rots fails.

The convention, for whoever writes docs:

* A ```python block runs; the blocks of one file run top to bottom in one namespace. Their asserts (or the
  numbers in their comments, checked by asserts) are the output they promise; a `print(...)  # TEXT` line
  promises that the block prints TEXT (checked against what it printed).
* A ```console block is a terminal session: each line starting with `$ ` is a command (run by bash in a fresh
  temporary folder, which also holds the progress store), and the lines after it, up to the next `$ `, are
  its output (standard output and error together), compared line by line. Timings (`9.2 s`, `16 ms`) may
  differ; everything else must match.
* A block that shows a command without being one of those (```sh, ```bash, ```shell, or a block whose first
  line starts with a command such as `chainrule` or `make`), and a python or console block that must not run
  here, says why on the line just before it: `<!-- not run: the reason -->`.
"""

from __future__ import annotations

import contextlib
import gc
import io
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from doc_blocks import README_TRAINING, ROOT, Block, blocks, docs_environment

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TIMING = re.compile(r"\b\d+(?:\.\d+)? (m?s)\b")
# A line of a python block that prints and says in its comment what it prints: `print(x)  # 0.0147`.
PRINT_WITH_COMMENT = re.compile(r"^\s*print\(.*\)\s+#\s*(\S.*?)\s*$")


ALL_BLOCKS = [block for path in DOCS for block in blocks(path)]
CONSOLE_BLOCKS = [b for b in ALL_BLOCKS if b.language == "console" and b.not_run is None]
PYTHON_DOCS = sorted({b.path for b in ALL_BLOCKS if b.language == "python" and b.not_run is None})


def test_every_shown_command_runs_or_says_why_not():
    unmarked = [b.where for b in ALL_BLOCKS
                if b.shows_a_command and b.language != "console" and b.not_run is None]
    assert unmarked == [], (
        "these blocks show commands that no test runs: make them ```console sessions with their output, "
        f"or put <!-- not run: REASON --> on the line before: {unmarked}"
    )


def test_the_docs_show_the_examples_they_used_to():
    # A lost block would silently shrink what this file checks.
    readme = [b for b in ALL_BLOCKS if b.path.name == "README.md"]
    commands = " ".join(b.text for b in readme if b.language == "console" and b.not_run is None)
    assert "$ chainrule graph " in commands and "$ chainrule train moons" in commands
    # The one the session's default_moons_run runs for this file (README_TRAINING) is the README's own.
    assert f"$ {README_TRAINING}\n" in commands
    assert sum(b.language == "python" for b in ALL_BLOCKS if b.path.name == "walkthrough.md") >= 8


def session(block: Block) -> list[tuple[str, list[str]]]:
    """[(command, expected output lines)] of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"{block.where}: output before the first `$ ` command: {line!r}")
    return steps


def normalised(lines: list[str]) -> list[str]:
    text = [TIMING.sub(r"<time> \1", line.rstrip()) for line in lines]
    while text and not text[-1]:
        text.pop()
    return text


@pytest.mark.timeout(600)
@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=[b.where for b in CONSOLE_BLOCKS])
def test_console_example_prints_what_it_shows(block: Block, tmp_path, request):
    steps = session(block)
    assert steps, f"{block.where}: a console block without a `$ ` command"
    env = docs_environment(tmp_path)
    for command, expected in steps:
        if command == README_TRAINING:
            # The README's training, run as shown by the session's default_moons_run (in a folder of its own,
            # where its plot is), which the tests of the whole learning curve use too: trained once.
            result = subprocess.CompletedProcess(command, 0, request.getfixturevalue("default_moons_run")["printed"])
        else:
            result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        shown, printed = normalised(expected), normalised(result.stdout.splitlines())
        assert printed == shown, (
            f"{block.where}: `{command}` (exit {result.returncode}) printed something else than the doc shows.\n"
            "printed:\n" + "\n".join(printed) + "\n\nthe doc shows:\n" + "\n".join(shown)
        )


@pytest.mark.parametrize("path", PYTHON_DOCS, ids=[p.name for p in PYTHON_DOCS])
def test_python_examples_run(path: Path) -> None:
    namespace: dict = {"__name__": f"docs.{path.stem}"}
    # The examples train and build large graphs; the objects of the libraries this test process has already
    # imported (torch: about 150,000) would make every collection walk them too, doubling the README's
    # training (docs/performance.md, Training). Frozen, the collector sees what the examples make, as in a
    # reader's fresh interpreter. Nor does it run during them: reference counts free each training step's graph
    # (the README's training peaks at the same memory either way), so its passes over the graphs free almost
    # nothing and cost about a quarter of the README's training (15 core-seconds to 11); one collection after
    # the examples frees the few cycles they made (a few thousand objects). What was alive before the examples
    # stays frozen after them, as tests/conftest.py keeps what collection built frozen for the whole run (an
    # unfreeze here would hand every later test's collections the libraries' objects to walk again).
    gc.freeze()
    gc.disable()
    try:
        for block in (b for b in ALL_BLOCKS if b.path == path and b.language == "python" and b.not_run is None):
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(block.text, block.where, "exec"), namespace)  # noqa: S102 (our own docs)
            except Exception as error:  # pragma: no cover - the message is the point
                pytest.fail(f"{block.where} failed: {error!r}\n{block.text}")
            assert_prints_what_its_comments_say(block, printed.getvalue())
    finally:
        gc.enable()
        namespace.clear()  # the examples' functions hold it (a cycle): cleared, what they made is freed now
        gc.collect()


def assert_prints_what_its_comments_say(block: Block, printed: str) -> None:
    """A `print(...)  # TEXT` line of a python block promises TEXT: the block's output holds each such TEXT, in
    the order of the lines (the convention's "numbers in their comments", for what an example prints)."""
    rest = printed
    for line in block.text.splitlines():
        if match := PRINT_WITH_COMMENT.match(line):
            promised = match.group(1)
            # The whole of it, not a part of a longer word or number: 0.3 is not what 0.30000000000000004 says.
            found = re.search(rf"(?<![\w.]){re.escape(promised)}(?![\w])", rest)
            assert found, f"{block.where}: `{line.strip()}` promises {promised!r}, the block printed:\n{printed}"
            rest = rest[found.end():]


def test_a_comment_on_a_print_is_checked_against_what_it_printed():
    block = Block(path=ROOT / "README.md", line=1, language="python", text="print(0.1 + 0.2)  # 0.3\n", not_run=None)
    with pytest.raises(AssertionError, match="promises '0.3'"):
        assert_prints_what_its_comments_say(block, "0.30000000000000004\n")
    assert_prints_what_its_comments_say(replace(block, text="print(0.5)  # 0.5\nprint(2)  # 2\n"), "0.5\n2\n")
    with pytest.raises(AssertionError, match="promises '2'"):  # in order: the 2 printed before the 0.5 is not it
        assert_prints_what_its_comments_say(replace(block, text="print(0.5)  # 0.5\nprint(2)  # 2\n"), "2\n0.5\n")


def test_ci_runs_the_readme_test_command():
    readme_first_block = next(b for b in ALL_BLOCKS if b.path.name == "README.md")
    command = next(line.split("#")[0].strip() for line in readme_first_block.text.splitlines()
                   if line.startswith("make test"))
    script = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "set -euo pipefail" in script and command in script, script


def test_no_doc_sends_readers_to_files_they_do_not_have():
    # contracts.md and "the issue" were the team's working notes, not something a reader can open.
    pattern = re.compile(r"contracts?\.md|\bcontract \d|\bthe issue\b|\bissue's\b", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in DOCS
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []


def test_no_doc_names_a_path_of_one_machine():
    pattern = re.compile(r"(/home/|/root/|/Users/|/tmp/pytest|/work/|C:\\\\Users)")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in DOCS
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []


def test_the_convention_is_read_as_documented(tmp_path):
    # The checks above are only as good as this reading of the markdown: a marked block, an unmarked command,
    # a session's commands and outputs, and a difference that is not a timing.
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- not run: opens a browser -->\n```sh\nchainrule lesson\n```\n\n"
        "```\nchainrule graph x x=1\n```\n\n"
        "```console\n$ echo a\na\n$ echo b\nb took 1.5 s\n```\n\n```json\n{\"a\": 1}\n```\n",
        encoding="utf-8",
    )
    marked, unmarked, console, data = blocks(doc)
    assert (marked.not_run, marked.shows_a_command) == ("opens a browser", True)
    assert (unmarked.not_run, unmarked.shows_a_command) == (None, True)
    assert session(console) == [("echo a", ["a"]), ("echo b", ["b took 1.5 s"])]
    assert not data.shows_a_command
    assert normalised(["b took 1.5 s", ""]) == normalised(["b took 27 s"])
    assert normalised(["loss 0.0147"]) != normalised(["loss 0.0148"])
