"""Nothing a lesson folder holds can break the page, the terminal, or reach files outside the folder.

docs/security.md, "Lesson folders": math spans cannot add HTML attributes; titles, prose and what a
lesson's solution prints reach the terminal escaped, and `lessons check` rejects control characters;
every path a folder names (prose, exercise folders, exercise files; by name or by symbolic link)
resolves inside the folder. Real lesson folders written by `write_lesson`, the real CLI, the real
loader and a real Chromium.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chainrule.folder_paths import OutsideFolderError, inside_folder, resolved_folder
from chainrule.lessons import LessonDataError
from chainrule.lessons.loader import add_lesson_dirs, remove_added_lessons
from chainrule.lessons.page import get_lesson
from chainrule.lessons.scaffold import ScaffoldError, write_lesson
from chainrule.lessons.text import render_inline, render_markdown
from chainrule.text_safety import control_characters

pytestmark = pytest.mark.timeout(300)

RAW_CONTROLS = (b"\x1b", b"\x07", b"\x9b", "\x9b".encode())
TITLE_ATTACK = "Owned\x1b[2J\x1b]0;window title\x07\x1b]52;c;ZWNobyBvd25lZA==\x07"
SECRET = "this-text-lives-outside-the-lesson-folder"


def chainrule(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CHAINRULE_DATA_DIR=str(cwd / "progress"))
    return subprocess.run([sys.executable, "-m", "chainrule", *args], cwd=cwd, capture_output=True, timeout=300,
                          env=env)


def assert_no_raw_controls(run: subprocess.CompletedProcess) -> None:
    for stream in (run.stdout, run.stderr):
        for raw in RAW_CONTROLS:
            assert raw not in stream, (raw, stream)


@pytest.fixture
def lesson(tmp_path: Path) -> Path:
    return write_lesson("demo", "Demo", tmp_path / "lessons")


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


# ---------------------------------------------------------------- attributes through math


class Attributes(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


LINK = '[a link](https://example.org "$x" onmouseover="alert(1)$") after'
IMAGE = "![$y' style='position:fixed;inset:0$](picture.png)"


@pytest.mark.parametrize("render", [render_markdown, render_inline])
def test_math_in_a_link_title_or_image_alt_adds_no_attribute(render):
    parsed = Attributes()
    parsed.feed(render(LINK + "\n\n" + IMAGE if render is render_markdown else LINK + " " + IMAGE))
    found = {tag: attrs for tag, attrs in parsed.tags if tag in ("a", "img")}
    assert set(found["a"]) == {"href", "title"}
    assert found["a"]["title"] == '$x" onmouseover="alert(1)$'  # the math, whole, as the title's text
    assert set(found["img"]) == {"src", "alt"}
    assert found["img"]["alt"] == "$y' style='position:fixed;inset:0$"


def test_math_in_a_link_title_adds_no_attribute_in_a_real_browser(browser):
    page = browser.new_page()
    try:
        page.set_content(f"<body>{render_markdown(LINK + chr(10) * 2 + IMAGE)}</body>")
        names = page.evaluate("""() => [...document.querySelectorAll('a, img')].map(
            element => [element.tagName, element.getAttributeNames().sort()])""")
        assert names == [["A", ["href", "title"]], ["IMG", ["alt", "src"]]]
    finally:
        page.close()


# ---------------------------------------------------------------- the terminal


def test_the_listing_never_prints_an_authors_control_characters(lesson: Path):
    edit_json(lesson / "lesson.json", lambda data: data.update(title=TITLE_ATTACK))
    run = chainrule("lessons", "--lessons", "lessons", cwd=lesson.parent.parent)
    assert_no_raw_controls(run)
    assert run.returncode == 2  # the quick check refuses the folder, and says why
    assert "lesson.json: title holds the control characters \\x1b, \\x07" in run.stderr.decode()


def test_lessons_check_rejects_control_characters_in_titles_and_text(lesson: Path):
    edit_json(lesson / "lesson.json", lambda data: data["sections"][1].update(title="Key\x9bparts"))
    edit_json(lesson / "quiz.json", lambda data: data["questions"][0].update(prompt=data["questions"][0]["prompt"] + " Which\u202e one?"))
    (lesson / "sections" / "01-why.md").write_text("Why\r\nit matters\x1b[2J, on Windows too.\r\n")
    (lesson / "exercises" / "1-gradients" / "exercise.md").write_text("Do \x08this.\n")
    run = chainrule("lessons", "check", "--no-grading", "lessons", cwd=lesson.parent.parent)
    assert_no_raw_controls(run)
    out = run.stdout.decode()
    assert run.returncode == 1, out
    assert "lesson.json: sections[1].title holds the control character \\x9b" in out
    assert "quiz.json: questions[0].prompt holds the control character \\u202e" in out
    assert "01-why.md: holds the control character \\x1b:" in out  # a CRLF line end is fine
    assert "exercise.md: holds the control character \\x08" in out
    assert out.splitlines()[-1] == "lesson demo: 4 problems"  # after the problems, on the same stream


def test_lessons_check_and_lesson_show_a_broken_lessons_text_escaped(lesson: Path):
    # A placeholder that does not resolve is quoted in the problem, control characters and all.
    (lesson / "sections" / "02-key-parts.md").write_text("See {{\x1b]0;title\x07}}.\n")
    check = chainrule("lessons", "check", "--no-grading", "lessons", cwd=lesson.parent.parent)
    serve = chainrule("lesson", "--lessons", "lessons", "--no-browser", "--port", "0", cwd=lesson.parent.parent)
    for run in (check, serve):
        assert_no_raw_controls(run)
    assert check.returncode == 1 and "\\x1b]0;title\\x07" in check.stdout.decode()
    assert serve.returncode == 2 and "02-key-parts.md: holds the control characters \\x1b, \\x07" in serve.stderr.decode()


def test_lessons_check_shows_what_a_lessons_solution_prints_escaped(lesson: Path):
    exercise = lesson / "exercises" / "1-gradients"
    for name in ("starter.js", "solution.js", "starter.ts", "solution.ts"):
        (exercise / name).unlink()  # Python alone: one grading of the solution, one of the starter
    solution = exercise / "solution.py"
    solution.write_text(solution.read_text().replace(
        "    values = list(leaves)\n",
        '    print("\\x1b[2J\\x1b]52;c;ZWNobyBvd25lZA==\\x07")\n'
        '    raise ValueError("\\x1b]0;owned\\x07 \\x9b31m")\n', 1))
    run = chainrule("lessons", "check", "lessons", cwd=lesson.parent.parent)
    assert_no_raw_controls(run)
    out = run.stdout.decode()
    assert run.returncode == 1, out
    assert "the reference solution does not pass in python" in out and "\\x1b]0;owned\\x07 \\x9b31m" in out


def test_lessons_new_refuses_a_title_with_control_characters(tmp_path: Path):
    with pytest.raises(ScaffoldError, match=r"without control characters \(\\x1b, \\x07\)"):
        write_lesson("demo", TITLE_ATTACK, tmp_path)
    assert control_characters("tab\tand\nnew lines, CRLF\r\n, accents é →") == []


# ---------------------------------------------------------------- paths outside the folder


NAMES_OUT = [("../secret.md", "climbs out of it with '..'"), ("out.md", "symbolic link"),
            ("out-dir/secret.md", "symbolic link"), ("/etc/passwd", "absolute path"), ("", "not a file name"),
            ("a\x00b", "NUL")]


def folder_with_links(tmp_path: Path) -> Path:
    folder = tmp_path / "lesson"
    (folder / "sections").mkdir(parents=True)
    (folder / "sections" / "a.md").write_text("a")
    (folder / "link.md").symlink_to(folder / "sections" / "a.md")  # a link inside the folder is fine
    (folder / "out.md").symlink_to("/etc/passwd")
    (folder / "out-dir").symlink_to(tmp_path)
    return folder


def test_inside_folder_resolves_names_and_refuses_every_way_out(tmp_path: Path):
    folder = folder_with_links(tmp_path)
    assert inside_folder(folder, "sections/a.md") == (folder / "sections" / "a.md").resolve()
    assert inside_folder(folder, "sections/../link.md") == (folder / "sections" / "a.md").resolve()
    for name, why in NAMES_OUT:
        with pytest.raises(OutsideFolderError, match=why):
            inside_folder(folder, name)


def test_inside_folder_with_the_folder_resolved_once_answers_the_same(tmp_path: Path):
    # An exercise folder's eight names are checked against the folder resolved once (resolved_folder).
    folder = folder_with_links(tmp_path)
    (tmp_path / "via-link").symlink_to(folder)  # a folder may be named through a link of its own
    for given in (folder, tmp_path / "via-link"):
        root = resolved_folder(given)
        assert root == str(folder.resolve())
        for name in ("sections/a.md", "sections/../link.md", "link.md", "sections", "missing.md"):
            assert inside_folder(given, name, root=root) == inside_folder(given, name), name
        for name, why in NAMES_OUT:
            with pytest.raises(OutsideFolderError, match=why) as once:
                inside_folder(given, name, root=root)
            with pytest.raises(OutsideFolderError) as each_time:
                inside_folder(given, name)
            assert str(once.value) == str(each_time.value)


def climb_out_of_a_section(lesson: Path) -> None:
    (lesson.parent.parent / "outside.md").write_text(SECRET)
    edit_json(lesson / "lesson.json", lambda data: data["sections"][0].update(text="../../outside.md"))


def link_a_section_to_etc_passwd(lesson: Path) -> None:
    (lesson / "sections" / "01-why.md").unlink()
    (lesson / "sections" / "01-why.md").symlink_to("/etc/passwd")


def link_an_exercise_text_outside(lesson: Path) -> None:
    (lesson.parent.parent / "outside.md").write_text(SECRET)
    (lesson / "exercises" / "1-gradients" / "exercise.md").unlink()
    (lesson / "exercises" / "1-gradients" / "exercise.md").symlink_to(lesson.parent.parent / "outside.md")


def link_a_solution_outside(lesson: Path) -> None:
    (lesson.parent.parent / "outside.py").write_text(f"# {SECRET}\n")
    (lesson / "exercises" / "1-gradients" / "solution.py").unlink()
    (lesson / "exercises" / "1-gradients" / "solution.py").symlink_to(lesson.parent.parent / "outside.py")


def name_an_exercise_folder_outside(lesson: Path) -> None:
    os.rename(lesson / "exercises" / "1-gradients", lesson.parent.parent / "elsewhere")
    edit_json(lesson / "lesson.json", lambda data: data["exercises"][0].update(folder="../../elsewhere"))


WAYS_OUT = {
    "section text ../../outside.md": (climb_out_of_a_section, "lesson.json:", "'../../outside.md' leaves the folder"),
    "section linked to /etc/passwd": (link_a_section_to_etc_passwd, "lesson.json:", "'sections/01-why.md' leaves"),
    "exercise text linked outside": (link_an_exercise_text_outside, "exercise.json:", "'exercise.md' leaves"),
    "solution linked outside": (link_a_solution_outside, "exercise.json:", "'solution.py' leaves"),
    "exercise folder outside": (name_an_exercise_folder_outside, "lesson.json:", "'../../elsewhere' leaves"),
}


@pytest.mark.parametrize("way", list(WAYS_OUT))
def test_lessons_check_says_which_path_leaves_the_folder_and_why(lesson: Path, way: str):
    make, file, message = WAYS_OUT[way]
    make(lesson)
    run = chainrule("lessons", "check", "--no-grading", "lessons", cwd=lesson.parent.parent)
    out = run.stdout.decode()
    assert run.returncode == 1, out
    problem = next(line for line in out.splitlines() if "leaves the folder" in line)
    assert file in problem and message in problem, out


@pytest.mark.parametrize("way", list(WAYS_OUT))
def test_the_loader_never_serves_a_file_from_outside_the_folder(tmp_path: Path, way: str):
    lesson_id = f"outside-{list(WAYS_OUT).index(way)}"  # exercise ids stay registered: one lesson id per case
    lesson = write_lesson(lesson_id, "Outside", tmp_path / "lessons")
    WAYS_OUT[way][0](lesson)
    try:
        with pytest.raises(LessonDataError, match="leaves the folder"):
            add_lesson_dirs([lesson.parent])  # no check first: the loader itself refuses
            get_lesson(lesson_id)
    finally:
        remove_added_lessons()


def test_a_quiz_linked_outside_the_folder_is_refused_by_check_and_loader(tmp_path: Path):
    lesson = write_lesson("linked-quiz", "Linked", tmp_path / "lessons")
    outside = tmp_path / "quiz.json"
    os.rename(lesson / "quiz.json", outside)
    (lesson / "quiz.json").symlink_to(outside)
    run = chainrule("lessons", "check", "--no-grading", "lessons", cwd=tmp_path)
    assert run.returncode == 1 and "quiz.json: 'quiz.json' leaves the folder" in run.stdout.decode(), run.stdout
    try:
        with pytest.raises(LessonDataError, match="'quiz.json' leaves the folder"):
            add_lesson_dirs([lesson.parent])
            get_lesson("linked-quiz")
    finally:
        remove_added_lessons()
