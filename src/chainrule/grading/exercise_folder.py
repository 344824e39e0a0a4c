"""An exercise folder: everything one graded exercise needs, in one place a teacher can write.

    exercise.json      {"id", "title", "summary", "text": "exercise.md",
                        "function": {"python": "forward_values", "javascript": "forwardValues"},
                        "kind": "graph-values", "cases": [{"name": ..., inputs of the kind}, ...],
                        "diagnoses": {"mistake name": "message", ...},      (optional)
                        "hidden": {"count": N, "draw": {"field": [low, high], ...}}}  (see hidden_cases.py)
    exercise.md        the task, in markdown (the lesson page shows it)
    starter.py|js|ts   what the learner starts from (it must fail the tests)
    solution.py|js|ts  the reference (it must pass); a language is offered when both of its files exist

TypeScript uses the JavaScript function name. The cases hold inputs only: the expected numbers are
computed by the engine for the case kind (chainrule.grading.kinds). "diagnoses" replaces the
message of mistakes the kind recognises. Other fields (a lesson's "hints") are the lesson's to read.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from chainrule.folder_paths import OutsideFolderError, inside_folder, resolved_folder
from chainrule.grading.hidden_cases import HiddenRule, draw_hidden, read_hidden_rule
from chainrule.grading.json_objects import JsonList, JsonObject
from chainrule.grading.kinds import CaseError, CaseKind, kind_of
from chainrule.grading.kinds.base import check_messages

__all__ = ["Exercise", "ExerciseFolderError", "GradingCase", "LANGUAGES", "load_exercise_folder", "read_json_located"]

LANGUAGES: dict[str, str] = {"python": "py", "javascript": "js", "typescript": "ts"}
_ID = re.compile(r"[a-z][a-z0-9-]{0,39}")
_FUNCTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")


class ExerciseFolderError(ValueError):
    """An exercise folder is invalid; the message starts with the file (and line) at fault."""


@dataclass(frozen=True)
class GradingCase:
    name: str
    args: JsonList  # the call's arguments
    expected: list[float]  # raw engine floats
    labels: tuple[str, ...]  # what each expected number is
    inputs: JsonObject  # the case as written in exercise.json (what its kind's recognisers read)
    hidden: bool = False  # drawn fresh for one run (hidden_cases.py), not shown to the learner


@dataclass(frozen=True)
class _Graded:
    """What checking a folder's cases and hidden rule gives: the cases with the engine's expected numbers."""

    cases: tuple[GradingCase, ...]
    hidden: HiddenRule | None


@dataclass(frozen=True)
class Exercise:
    """A loaded exercise folder: what grade() needs, resolved once.

    Its cases (the engine's expected numbers, some of them from training) and its hidden rule (checked by
    drawing it) are the costly part of a load: `grade` computes them on their first use, once per process,
    when the folder was loaded with `checked=False` (the built-in folders; see load_exercise_folder)."""

    id: str
    title: str
    summary: str
    python_function: str
    js_function: str
    folder: Path
    kind: CaseKind
    languages: tuple[str, ...]
    graded: Callable[[], _Graded] = field(repr=False, compare=False)  # computes (and checks) cases and rule
    messages: dict[str, str] = field(default_factory=dict)  # the folder's own texts for its kind's mistakes

    @functools.cached_property
    def _graded(self) -> _Graded:
        return self.graded()

    @property
    def cases(self) -> tuple[GradingCase, ...]:
        """The cases in file order, each with the engine's expected numbers."""
        return self._graded.cases

    @property
    def hidden(self) -> HiddenRule | None:
        """The rule of the cases drawn fresh for each run (None without one)."""
        return self._graded.hidden

    def hidden_cases(self, seed: int) -> tuple[GradingCase, ...]:
        """The hidden cases of the run seeded `seed` (none without a rule), expected numbers from the engine."""
        if self.hidden is None:
            return ()
        drawn = draw_hidden(self.hidden, self.kind, [case.inputs for case in self.cases], seed)
        return tuple(GradingCase(case["name"], self.kind.args(case), self.kind.expected(case),
                                 tuple(self.kind.labels(case)), case, hidden=True) for case in drawn)

    def with_seeds(self, seeds: range) -> Exercise:
        """This exercise with the hidden cases of every seed in `seeds` shown beside its own, each named with
        its seed (`lessons check` grades its reference on many draws in one run)."""
        drawn = [replace(case, name=f"{case.name} of seed {seed}", hidden=False)
                 for seed in seeds for case in self.hidden_cases(seed)]
        every = _Graded((*self.cases, *drawn), None)
        return replace(self, graded=lambda: every)

    def function_name(self, language: str) -> str:
        return self.python_function if language == "python" else self.js_function

    def source(self, role: str, language: str) -> str:
        """The text of starter.<ext> or solution.<ext> (role "starter" or "solution")."""
        if language not in self.languages:
            raise ValueError(f"exercise {self.id!r} comes in {', '.join(self.languages)}, not {language}")
        return (self.folder / f"{role}.{LANGUAGES[language]}").read_text(encoding="utf-8")

    def message(self, mistake: str, default: str) -> str:
        return self.messages.get(mistake, default)


def read_json_located(path: Path, error: type[Exception]) -> Any:
    """The JSON document in `path`, or `error` with "FILE:LINE: what is wrong"."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as problem:
        raise error(f"{path}: cannot be read ({problem.strerror or problem})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise error(f"{path}:{problem.lineno}: not valid JSON: {problem.msg} (column {problem.colno})") from None


def _line_of(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _finite(numbers: list[float]) -> bool:
    return all(isinstance(x, float) and x == x and abs(x) != float("inf") for x in numbers)


@dataclass(frozen=True)
class _Manifest:
    """An exercise.json being read: its errors name the file and, where known, the line."""

    path: Path
    text: str

    def fail(self, message: str, near: str | None = None) -> ExerciseFolderError:
        line = _line_of(self.text, near) if near else None
        return ExerciseFolderError(f"{self.path}{f':{line}' if line else ''}: {message}")


def load_exercise_folder(folder: Path, *, checked: bool = True) -> Exercise:
    """The exercise in `folder`, read and checked (ExerciseFolderError names the file and line at fault);
    every case's expected numbers computed by the engine.

    checked=False leaves the costly part (the cases' expected numbers and the hidden rule's trial draws) to
    the exercise's first use, once per process, where the same check raises the same error: for the built-in
    folders, shipped with the package and checked in full by `chainrule lessons check` and the test suite, so
    that a process that grades one exercise does not pay for every other. An author's folder is checked
    in full as it loads (the default)."""
    folder = Path(folder)
    path = folder / "exercise.json"
    data = read_json_located(path, ExerciseFolderError)
    manifest = _Manifest(path, path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise manifest.fail("the file must hold one JSON object")
    _check_texts(manifest, data)
    _check_files(manifest, folder, data)
    functions = _functions(manifest, data)
    kind, messages = _kind_and_messages(manifest, data)
    checked_now = _checked_cases(manifest, kind, data) if checked else None  # a wrong case: refused as it loads
    return Exercise(
        id=data["id"],
        title=data["title"].strip(),
        summary=data["summary"].strip(),
        python_function=functions["python"],
        js_function=functions["javascript"],
        folder=folder,
        kind=kind,
        languages=_languages(manifest, folder),
        messages=dict(messages),
        graded=(lambda: checked_now) if checked_now else functools.partial(_checked_cases, manifest, kind, data),
    )


def _checked_cases(manifest: _Manifest, kind: CaseKind, data: JsonObject) -> _Graded:
    """The folder's cases with the engine's expected numbers and its hidden rule, checked."""
    cases = _graded_cases(manifest, kind, data["cases"])
    return _Graded(tuple(cases), _hidden_rule(manifest, kind, data, cases))


def _check_texts(manifest: _Manifest, data: JsonObject) -> None:
    """Every field is there; the id and the texts are well formed."""
    for key in ("id", "title", "summary", "text", "function", "kind", "cases"):
        if key not in data:
            raise manifest.fail(f"missing the field {key!r}")
    exercise_id = data["id"]
    if not isinstance(exercise_id, str) or not _ID.fullmatch(exercise_id):
        raise manifest.fail(
            f"id must be lower-case letters, digits and dashes, starting with a letter, not {exercise_id!r}", '"id"')
    for key in ("title", "summary", "text"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise manifest.fail(f"{key} must be a non-empty string", f'"{key}"')


def _check_files(manifest: _Manifest, folder: Path, data: JsonObject) -> None:
    """The files the folder names stay inside it, and its text is there."""
    root = resolved_folder(folder)  # once for its eight names
    for named in ["exercise.json", data["text"]] + [f"{kind}.{ext}" for ext in LANGUAGES.values()
                                                    for kind in ("starter", "solution")]:
        try:  # a name, or a symbolic link, that leads out of the folder would serve any file as lesson text
            inside_folder(folder, named, root=root)
        except OutsideFolderError as problem:
            raise manifest.fail(str(problem), f'"{named}"' if named == data["text"] else None) from None
    if not (folder / data["text"]).is_file():
        raise manifest.fail(f"text names {data['text']!r}, which is not a file in {folder}", '"text"')


def _functions(manifest: _Manifest, data: JsonObject) -> dict[str, str]:
    functions = data["function"]
    if not isinstance(functions, dict) or set(functions) != {"python", "javascript"} or not all(
            isinstance(name, str) and _FUNCTION.fullmatch(name) for name in functions.values()):
        raise manifest.fail('function must be {"python": name, "javascript": name} with identifiers as names',
                            '"function"')
    return functions


def _kind_and_messages(manifest: _Manifest, data: JsonObject) -> tuple[CaseKind, JsonObject]:
    """The case kind, and the folder's own messages for its mistakes (checked against the kind)."""
    try:
        kind = kind_of(data["kind"])
    except CaseError as problem:
        raise manifest.fail(str(problem), '"kind"') from None
    messages = data.get("diagnoses", {})
    unusable = check_messages(kind, messages)
    if unusable:
        raise manifest.fail(unusable, '"diagnoses"')
    return kind, messages


def _graded_cases(manifest: _Manifest, kind: CaseKind, cases: object) -> list[GradingCase]:
    """Each case with its call's arguments and the engine's expected numbers."""
    if not isinstance(cases, list) or not cases:
        raise manifest.fail("cases must be a non-empty list", '"cases"')
    graded: list[GradingCase] = []
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str) or not case["name"].strip():
            raise manifest.fail(f"case {index + 1} must be an object with a non-empty \"name\"", '"cases"')
        name, near = case["name"], f'"{case["name"]}"'
        if any(name == other.name for other in graded):
            raise manifest.fail(f"two cases are named {name!r}", near)
        try:
            args, expected, labels = kind.args(case), kind.expected(case), kind.labels(case)
        except CaseError as problem:
            raise manifest.fail(f"case {name!r}: {problem}", near) from None
        except (OverflowError, ValueError, ZeroDivisionError) as problem:
            raise manifest.fail(f"case {name!r}: the engine cannot compute it ({problem})", near) from None
        if not _finite(expected):
            raise manifest.fail(f"case {name!r}: the engine's answer is not finite; choose other inputs", near)
        graded.append(GradingCase(name, args, expected, tuple(labels), case))
    return graded


CHECKED_SEEDS = 3  # seeds whose hidden draws loading a folder tries, so a rule that cannot draw is refused early


def _hidden_rule(manifest: _Manifest, kind: CaseKind, data: JsonObject, graded: list[GradingCase]) -> HiddenRule | None:
    """The folder's rule for hidden cases (None without one), checked by drawing it for several seeds."""
    if "hidden" not in data:
        return None
    shown = [case.inputs for case in graded]
    try:
        rule = read_hidden_rule(data["hidden"], shown)
        for seed in range(CHECKED_SEEDS):
            draw_hidden(rule, kind, shown, seed)
    except CaseError as problem:
        raise manifest.fail(str(problem), '"hidden"') from None
    return rule


def _languages(manifest: _Manifest, folder: Path) -> tuple[str, ...]:
    """The languages the folder has both a starter and a solution in (at least one)."""
    languages = tuple(
        language for language, ext in LANGUAGES.items()
        if (folder / f"starter.{ext}").is_file() and (folder / f"solution.{ext}").is_file()
    )
    if not languages:
        raise manifest.fail("the folder needs a starter and a solution in at least one language "
                            "(starter.py and solution.py, starter.js and solution.js, starter.ts and solution.ts)")
    return languages
