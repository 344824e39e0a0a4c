"""`chainrule lessons check`: everything that can be wrong with a lesson folder, each problem located.

    problems = check_lesson_folder(Path("my-lessons/vectors"))    # ["FILE:LINE: what is wrong", ...]

It checks the schema of lesson.json and quiz.json; that every placeholder in the prose resolves;
every checked number, quiz key and prediction against the engine; every claim of claims.json
(chainrule.lessons.claims); that no fresh draw lands on a kink; and, in the real sandbox, that
every exercise's reference solution passes and its starter fails in every language it offers.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Callable

import chainrule
from chainrule.folder_paths import OutsideFolderError, inside_folder
from chainrule.lessons.claims import claim_problems
from chainrule.lessons.graphs import build_graph, graph_values
from chainrule.lessons.loader import (
    DATA_DIR,
    add_lesson_dirs,
    before_step,
    builtin_lesson_ids,
    find_lesson_folders,
    make_resolver,
    register_exercises,
)
from chainrule.lessons.mistakes import mistake_problems, prediction_values, why_wrong_problems
from chainrule.lessons.plot_driven import driven_problems
from chainrule.lessons.plots import lesson_plot
from chainrule.lessons.scaffold import LESSON_ID
from chainrule.lessons.text import PLACEHOLDER, LessonDataError
from chainrule.number_text import count_text
from chainrule.sections import SECTIONS as LESSON_SECTIONS
from chainrule.text_safety import control_characters

__all__ = ["SECTIONS", "add_checked_lesson_dirs", "check_lesson_folder", "Problems"]

# The page shows each section's interactive part by its number, so a lesson has these eight
# (chainrule.sections: the one list of numbers, slugs and the work each asks for).
SECTIONS = tuple((number, slug) for number, slug, _ in LESSON_SECTIONS)
# A checked number is written to four places.
CHECKED_PLACES = 4


def shown_path(path: Path | str) -> str:
    """A path as every problem prints it, one way: relative to the current directory when the file is
    inside it, else absolute."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


class Problems:
    """Collects "FILE:LINE: message" lines; `near` finds the line of the first occurrence of a text."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: Path, message: str, text: str | None = None, near: str | None = None,
            line: int | None = None, after: str | None = None) -> None:
        if line is None and text is not None and near is not None:
            start = max(text.find(after), 0) if after else 0
            at = text.find(near, start)
            line = text.count("\n", 0, at) + 1 if at >= 0 else None
        self.items.append(f"{shown_path(path)}{f':{line}' if line else ''}: {message}")

    def add_error(self, folder: Path, message: str) -> None:
        """A problem worded elsewhere (it names its file), with the folder's path written as `add` writes it."""
        self.items.append(message.replace(str(folder.resolve()), shown_path(folder)))


def _read(path: Path, problems: Problems) -> tuple[Any, str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        problems.add(path, f"cannot be read ({error.strerror or error})")
        return None
    try:
        return json.loads(text), text
    except json.JSONDecodeError as error:
        problems.add(path, f"not valid JSON: {error.msg} (column {error.colno})", line=error.lineno)
        return None


def _check_control_characters(path: Path, value: Any, problems: Problems) -> None:
    """No string in `value` (a JSON document, or a file's text) holds a control character: titles and
    prose reach terminals (`chainrule lessons`, `lessons check`), where ESC sequences would clear the
    screen, set the window title or write the clipboard. Tab and line ends are fine."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, f"{where}.{key}" if where else str(key)) for key, child in reversed(item.items()))
            stack.extend((key, f"{where}: a key") for key in item if isinstance(key, str))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in reversed(list(enumerate(item))))
        elif isinstance(item, str):
            found = control_characters(item)
            if found:
                problems.add(path, f"{where + ' ' if where else ''}holds the control character"
                             f"{'s' if len(found) > 1 else ''} {', '.join(found)}: lesson text must be "
                             "plain text (tab and line ends are fine)")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_placeholders(path: Path, text: str, resolve: Callable, problems: Problems, *,
                        within: tuple[str, str] | None = None, what: str = "") -> None:
    """Report each placeholder of `text` that does not resolve. `text` is a whole file, or a string from
    a JSON file: then `within` = (the file's text, a string near the field) locates it in the file."""
    for match in PLACEHOLDER.finditer(text):
        try:
            resolve(match.group("path").split("."))
        except (KeyError, IndexError, LessonDataError):
            line: int | None
            if within is None:
                line = text.count("\n", 0, match.start()) + 1
            else:
                source, near = within
                at = source.find(match.group(0), max(source.find(near), 0))
                line = source.count("\n", 0, at) + 1 if at >= 0 else None
            problems.add(path, f"{what}the placeholder {match.group(0)} does not resolve", line=line)


def check_lesson_folder(folder: Path, *, grade: bool = True, grade_with: Callable | None = None) -> list[str]:
    """Every problem of the lesson folder, as "FILE[:LINE]: message"; [] when it is clean.

    `grade_with(exercise, language, source)` grades the references and starters (default:
    chainrule.grading.grade; a test suite passes one that remembers what it has graded)."""
    folder = Path(folder)
    problems = Problems()
    lesson_path, quiz_path = folder / "lesson.json", folder / "quiz.json"
    for path in (lesson_path, quiz_path):
        try:
            inside_folder(folder, path.name)
        except OutsideFolderError as error:
            problems.add(path, str(error))
            return problems.items
    read = _read(lesson_path, problems)
    quiz_read = _read(quiz_path, problems)
    if read is None:
        return problems.items
    data, text = read
    if not isinstance(data, dict):
        problems.add(lesson_path, "the file must hold one JSON object", line=1)
        return problems.items
    _check_control_characters(lesson_path, data, problems)
    if quiz_read is not None:
        _check_control_characters(quiz_path, quiz_read[0], problems)

    def need(key: str, kind: type | tuple, what: str) -> Any:
        value = data.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            problems.add(lesson_path, f"{key!r} must be {what}", text, f'"{key}"')
            return None
        return value

    if not LESSON_ID.fullmatch(folder.name):
        problems.add(folder, "the folder's name is the lesson's id: 1 to 40 lower-case letters, digits and "
                             "dashes, starting with a letter")
    need("title", str, "the lesson's title (a string)")
    tolerance = need("tolerance", (int, float), "a number: how far a prediction may be from the engine's")
    need("summary", str, "a one-sentence summary (the path shows it)")
    need("minutes", int, "a whole number of minutes (the path shows it)")
    _check_builds_on(folder, lesson_path, text, data, problems)
    numbers, graphs = _check_graphs(lesson_path, text, data, problems)
    plot = _check_plot(lesson_path, text, data, problems)
    resolve = make_resolver(data, numbers, plot)
    _check_checked_numbers(lesson_path, text, data, numbers, problems)
    _check_sections(folder, lesson_path, text, data, resolve, problems)
    _check_see_it_work(lesson_path, text, data, graphs, resolve, problems)
    _check_predictions(lesson_path, text, data, graphs, numbers, resolve, problems)
    _check_explain_and_recap(lesson_path, text, data, problems)
    claim_problems(folder, data, resolve, problems.add)
    driven_problems(folder, problems.add)
    if quiz_read is not None:
        _check_quiz(quiz_path, *quiz_read, problems, _tolerance(data))
    _check_exercises(folder, lesson_path, text, data, resolve, problems, grade=grade, grade_with=grade_with)
    if tolerance is not None and tolerance <= 0:
        problems.add(lesson_path, "'tolerance' must be more than 0", text, '"tolerance"')
    return problems.items


def _check_builds_on(folder: Path, path: Path, text: str, data: dict, problems: Problems) -> None:
    """builds_on (optional) names lessons of the path: built-in ones, or lesson folders beside this one."""
    if "assumes" in data and (not isinstance(data["assumes"], str) or not data["assumes"].strip()):
        problems.add(path, "'assumes' must be a phrase: what the lesson assumes a learner knows", text, '"assumes"')
    if "builds_on" not in data:
        return
    ids = data["builds_on"]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        problems.add(path, "'builds_on' must be a list of lesson ids", text, '"builds_on"')
        return
    builtin = [entry["id"] for entry in json.loads((DATA_DIR / "path.json").read_text(encoding="utf-8"))["lessons"]]
    for lesson_id in ids:
        beside = LESSON_ID.fullmatch(lesson_id) and (folder.parent / lesson_id / "lesson.json").is_file()
        if lesson_id == folder.name or not (lesson_id in builtin or beside):
            problems.add(path, f"'builds_on' names {lesson_id!r}, which is neither a lesson of the path "
                               f"({', '.join(builtin)}) nor a lesson folder beside this one", text, '"builds_on"')


def _check_graphs(path: Path, text: str, data: dict[str, Any], problems: Problems
                  ) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, Any]]:
    numbers: dict[str, dict[str, dict[str, float]]] = {}
    graphs = data.get("graphs")
    if not isinstance(graphs, dict) or not graphs:
        problems.add(path, "'graphs' must map graph names to {leaves, nodes, output}", text, '"graphs"')
        return numbers, {}
    for name, spec in graphs.items():
        try:
            numbers[name] = graph_values(spec, name)
        except (LessonDataError, KeyError, TypeError, ValueError) as error:
            problems.add(path, f"graph {name!r}: {error}", text, f'"{name}"')
        else:
            labels = [label for label, *_ in spec["leaves"]] + [node[0] for node in spec["nodes"]]
            if len(set(labels)) != len(labels):
                problems.add(path, f"graph {name!r}: two values share a label", text, f'"{name}"')
            if any("." in str(label) for label in labels):
                problems.add(path, f"graph {name!r}: a label may not contain a dot (placeholders split at dots)",
                             text, f'"{name}"')
            leaves = [label for label, *_ in spec["leaves"]]
            constants = spec.get("constants", [])
            if not isinstance(constants, list) or any(label not in leaves for label in constants):
                problems.add(path, f"graph {name!r}: 'constants' must list some of its leaves ({', '.join(map(str, leaves))}),"
                             f" not {constants!r}", text, f'"{name}"')
    return numbers, {name: graphs[name] for name in numbers}


def _check_plot(path: Path, text: str, data: dict[str, Any], problems: Problems) -> dict[str, Any] | None:
    spec = (data.get("see_it_work") or {}).get("plot") if isinstance(data.get("see_it_work"), dict) else None
    if spec is None:
        return None
    try:
        return lesson_plot(spec)
    except (LessonDataError, TypeError, ValueError, ArithmeticError) as error:
        problems.add(path, str(error), text, '"plot"')
        return None


def _check_checked_numbers(path: Path, text: str, data: dict, numbers: dict, problems: Problems) -> None:
    for graph, labels in (data.get("checked_numbers") or {}).items():
        for label, fields in labels.items():
            for field, written in fields.items():
                engine = numbers.get(graph, {}).get(label, {}).get(field)
                where = f"checked number {graph}.{label}.{field}"
                if engine is None:
                    problems.add(path, f"{where}: the graph has no such value", text, f'"{label}"',
                                 after='"checked_numbers"')
                elif not _is_number(written) or abs(written - engine) > 0.5 * 10 ** -CHECKED_PLACES + 1e-12:
                    problems.add(path, f"{where} is {written!r}, but the engine computes "
                                       f"{round(engine, CHECKED_PLACES)!r}", text, f'"{label}"',
                                 after='"checked_numbers"')


def _check_sections(folder: Path, path: Path, text: str, data: dict, resolve: Callable, problems: Problems) -> None:
    sections = data.get("sections")
    if not isinstance(sections, list):
        problems.add(path, "'sections' must list the eight sections", text, '"sections"')
        return
    found = tuple((s.get("number"), s.get("slug")) for s in sections if isinstance(s, dict))
    if found != SECTIONS:
        expected = ", ".join(f"{n} {s}" for n, s in SECTIONS)
        problems.add(path, f"'sections' must be, in this order: {expected}", text, '"sections"')
    for section in sections:
        if not isinstance(section, dict) or not isinstance(section.get("title"), str):
            problems.add(path, "every section needs a number, a slug, a title and a text file", text, '"sections"')
            continue
        _check_prose_file(folder, path, text, section.get("text"), resolve, problems)


def _check_prose_file(folder: Path, path: Path, text: str, relative: Any, resolve: Callable,
                      problems: Problems) -> None:
    if isinstance(relative, str):
        try:
            inside_folder(folder, relative)
        except OutsideFolderError as error:
            problems.add(path, f"the prose file {error}", text, f'"{relative}"')
            return
    if not isinstance(relative, str) or not (folder / relative).is_file():
        problems.add(path, f"the prose file {relative!r} does not exist", text, f'"{relative}"')
        return
    prose_path = folder / relative
    prose = prose_path.read_text(encoding="utf-8")
    _check_control_characters(prose_path, prose, problems)
    _check_placeholders(prose_path, prose, resolve, problems)


def _check_prompt_and_reason(path: Path, text: str, item: dict, name: str, near: str, resolve: Callable,
                             problems: Problems) -> None:
    """A prediction's or question's prompt and reason: present, and every placeholder resolves."""
    for part in ("prompt", "reason"):
        if not isinstance(item.get(part), str) or not item[part].strip():
            problems.add(path, f"{name} needs a {part}", text, near)
        else:
            _check_placeholders(path, item[part], resolve, problems, within=(text, near), what=f"{name}: ")


def _check_see_it_work(path: Path, text: str, data: dict, graphs: dict, resolve: Callable, problems: Problems) -> None:
    part = data.get("see_it_work")
    if not isinstance(part, dict) or part.get("graph") not in (data.get("graphs") or {}):
        problems.add(path, "'see_it_work' must name one of the graphs (\"graph\") and give a \"chain_formula\"",
                     text, '"see_it_work"')
        return
    formula = part.get("chain_formula", "")
    _check_placeholders(path, formula, resolve, problems, within=(text, '"chain_formula"'), what="chain_formula: ")


def _check_predictions(path: Path, text: str, data: dict, graphs: dict, numbers: dict, resolve: Callable,
                       problems: Problems) -> None:
    predict = data.get("predict")
    if not isinstance(predict, dict) or predict.get("graph") not in graphs or not isinstance(predict.get("steps"), list):
        problems.add(path, "'predict' must name one of the graphs and list its steps", text, '"predict"')
        return
    graph = predict["graph"]
    trace = chainrule.trace(build_graph(graphs[graph], graph)[0])
    keys = set()
    for step in predict["steps"]:
        key = step.get("key") if isinstance(step, dict) else None
        if not isinstance(key, str) or key in keys:
            problems.add(path, f"every prediction needs a key of its own, not {key!r}", text, '"steps"')
            continue
        keys.add(key)
        near = f'"key": "{key}"'
        label, field, kind = step.get("node_label"), step.get("field"), step.get("kind")
        if label not in numbers[graph] or field not in ("data", "grad") or kind not in ("forward", "backward"):
            problems.add(path, f"prediction {key!r}: node_label must be a value of graph {graph!r}, field "
                               "\"data\" or \"grad\", kind \"forward\" or \"backward\"", text, near)
            continue
        if (field == "data") != (kind == "forward"):
            problems.add(path, f"prediction {key!r}: a forward prediction asks for data, a backward one for grad",
                         text, near)
        try:
            before_step(trace, label, kind)
        except LessonDataError as error:
            problems.add(path, f"prediction {key!r}: {error}", text, near)
        if not math.isfinite(numbers[graph][label][field]):
            problems.add(path, f"prediction {key!r}: the engine's number is not finite", text, near)
        _check_prompt_and_reason(path, text, step, f"prediction {key!r}", near, resolve, problems)
        _check_mistakes(path, text, step, f"prediction {key!r}", near, resolve, problems,
                        numbers[graph][label][field], _tolerance(data), lambda m: prediction_values(m, numbers[graph]))


def _tolerance(data: dict) -> float:
    tolerance = data.get("tolerance")
    return float(tolerance) if isinstance(tolerance, (int, float)) and _is_number(tolerance) else 0.0


def _check_mistakes(path: Path, text: str, item: dict, name: str, near: str, resolve: Callable,
                    problems: Problems, key: Any, tolerance: float, values_of: Callable) -> None:
    """An item's named mistakes and hints (lessons/mistakes.py): each well formed, none giving the right
    answer or another's number, every placeholder of a hint resolving."""
    found = mistake_problems(item, float(key), tolerance, values_of) if _is_number(key) else []
    found += why_wrong_problems(item) if item.get("kind") == "choice" else []
    for problem in found:
        problems.add(path, f"{name}: {problem}", text, near)
    texts = [item.get("hint")] + [m.get("hint") for m in item.get("mistakes") or [] if isinstance(m, dict)]
    texts += item.get("why_wrong") or [] if isinstance(item.get("why_wrong"), list) else []
    for hint in texts:
        if hint is not None and not isinstance(hint, str):
            problems.add(path, f"{name}: a hint is a sentence (a string), not {hint!r}", text, near)
        elif hint:
            _check_placeholders(path, hint, resolve, problems, within=(text, near), what=f"{name}: ")


def _check_explain_and_recap(path: Path, text: str, data: dict, problems: Problems) -> None:
    explain = data.get("explain")
    ideas = explain.get("key_ideas") if isinstance(explain, dict) else None
    if not isinstance(explain, dict) or not isinstance(explain.get("prompt"), str) or not isinstance(ideas, list) \
            or not ideas or not all(isinstance(i, dict) and isinstance(i.get("id"), str)
                                    and isinstance(i.get("text"), str) for i in ideas):
        problems.add(path, "'explain' needs a prompt and key_ideas, each {id, text}", text, '"explain"')
    elif len({i["id"] for i in ideas}) != len(ideas):
        problems.add(path, "two key ideas share an id", text, '"key_ideas"')
    recap = data.get("recap")
    points = recap.get("points") if isinstance(recap, dict) else None
    if not isinstance(points, list) or not points or not all(isinstance(p, str) for p in points):
        problems.add(path, "'recap' needs points: a list of sentences", text, '"recap"')


def _question_values(question: dict) -> dict[str, Any]:
    values = dict(question.get("given") or {})
    if question.get("kind") == "number":
        values["answer"] = question.get("answer")
    return values


def _check_quiz(path: Path, data: Any, text: str, problems: Problems, tolerance: float = 0.0) -> None:
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list) or not questions:
        problems.add(path, "the file must hold {\"questions\": [...]} with at least one question", line=1)
        return
    ids = set()
    for question in questions:
        qid = question.get("id") if isinstance(question, dict) else None
        if not isinstance(qid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", qid) or qid in ids:
            problems.add(path, f"every question needs an id of its own (lower case, digits, dashes), not {qid!r}",
                         text, '"questions"')
            continue
        ids.add(qid)
        near = f'"id": "{qid}"'
        kind = question.get("kind")
        if kind == "number":
            _check_numeric_question(path, text, question, near, problems)
        elif kind == "choice":
            options, index = question.get("options"), question.get("answer_index")
            if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
                problems.add(path, f"question {qid!r}: options must be a list of at least two strings", text, near)
            elif isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(options):
                problems.add(path, f"question {qid!r}: answer_index must be 0 to {len(options) - 1}", text, near)
        else:
            problems.add(path, f"question {qid!r}: kind must be \"number\" or \"choice\", not {kind!r}", text, near)
            continue
        if "fresh" in question:
            from chainrule.lessons.fresh import fresh_problems

            for problem in fresh_problems(question):
                problems.add(path, f"question {qid!r}: {problem}", text, near)
        values = _question_values(question)

        def resolve(parts: list[str], values: dict[str, Any] = values) -> Any:
            if len(parts) == 1 and parts[0] in values:
                return values[parts[0]]
            raise KeyError(".".join(parts))

        _check_prompt_and_reason(path, text, question, f"question {qid!r}", near, resolve, problems)
        if kind == "number" and question.get("mistakes") is not None and "compute" not in question:
            problems.add(path, f"question {qid!r}: named mistakes need the question's compute", text, near)
        numbers = {k: v for k, v in (question.get("given") or {}).items() if _is_number(v)}
        _check_mistakes(path, text, question, f"question {qid!r}", near, resolve, problems,
                        question.get("answer"), tolerance, lambda _, numbers=numbers: numbers)


def _check_numeric_question(path: Path, text: str, question: dict, near: str, problems: Problems) -> None:
    from chainrule.expr import ExpressionError, parse

    qid = question["id"]
    # As written in quiz.json: checked below before any is used.
    given: Any = question.get("given") or {}
    answer: Any = question.get("answer")
    compute = question.get("compute")
    if not isinstance(given, dict) or not all(_is_number(v) for v in given.values()):
        problems.add(path, f"question {qid!r}: given must map names to numbers", text, near)
        return
    if not _is_number(answer):
        problems.add(path, f"question {qid!r}: answer must be a number", text, near)
        return
    if not isinstance(compute, dict) or not isinstance(compute.get("expression"), str):
        problems.add(path, f"question {qid!r}: a numeric question needs \"compute\": {{\"expression\": ..., "
                           "optionally \"wrt\": a name}, so that the engine can recompute its answer", text, near)
        return
    try:
        expression = parse(compute["expression"])
        output, leaves = expression.build({name: given[name] for name in expression.names if name in given})
        wrt = compute.get("wrt")
        if wrt is not None:
            if wrt not in leaves:
                raise ExpressionError(f"wrt names {wrt!r}, which is not in the expression")
            output.backward()
            key = leaves[wrt].grad
        else:
            key = output.data
    except (ExpressionError, ArithmeticError, ValueError) as error:
        problems.add(path, f"question {qid!r}: compute: {error}", text, near)
        return
    if not math.isclose(key, answer, rel_tol=1e-9, abs_tol=1e-9):
        problems.add(path, f"question {qid!r}: the answer is {answer!r}, but the engine computes {key!r} "
                           f"from {compute['expression']!r}", text, near)


# The fields an exercise.json may hold: the grader's (chainrule.grading.exercise_folder) and the lesson's hints.
EXERCISE_FIELDS = ("id", "title", "summary", "text", "function", "kind", "cases", "diagnoses", "hints", "hidden",
                   "continues")
# The hidden draws a reference must pass (seeds 0, 1, ...), all in the one run that grades it.
REFERENCE_SEEDS = 10


def _check_hints(manifest: Path, manifest_text: str, hints: Any, resolve: Callable, problems: Problems) -> None:
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        problems.add(manifest, "hints must be a list of non-empty markdown strings (the page shows them one at a "
                               "time, in order)", manifest_text, '"hints"')
        return
    for number, hint in enumerate(hints, start=1):
        _check_placeholders(manifest, hint, resolve, problems, within=(manifest_text, '"hints"'),
                            what=f"hints[{number - 1}]: ")


def _check_exercises(folder: Path, path: Path, text: str, data: dict, resolve: Callable, problems: Problems, *,
                     grade: bool, grade_with: Callable | None = None) -> None:
    from chainrule.grading import LANGUAGES, ExerciseFolderError, register_exercise_folder
    from chainrule.grading import grade as grade_source

    grade_with = grade_with or grade_source
    register_exercises()  # the built-in exercises hold their ids first: a folder may not take one of them ...
    # ... unless it is a copy of their lesson (named as it), which takes their places (loader.add_lesson_dirs).
    copied_from = DATA_DIR / folder.name if folder.name in builtin_lesson_ids() else None
    entries = data.get("exercises")
    if not isinstance(entries, list):
        problems.add(path, "'exercises' must be a list of {\"folder\": \"exercises/NAME\"}", text, '"exercises"')
        return
    earlier: list[str] = []  # the ids of this lesson's exercises so far ("continues" names one of them)
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"folder"} or not isinstance(entry["folder"], str):
            extra = " (hints belong in the exercise folder's exercise.json)" if isinstance(entry, dict) and (
                "hints" in entry) else ""
            problems.add(path, f"an exercise entry must be {{\"folder\": \"exercises/NAME\"}}, not {entry!r}{extra}",
                         text, '"exercises"')
            continue
        try:
            exercise = register_exercise_folder(inside_folder(folder, entry["folder"]), replaces=copied_from)
        except OutsideFolderError as error:
            problems.add(path, f"the exercise folder {error}", text, f'"{entry["folder"]}"')
            continue
        except ExerciseFolderError as error:
            problems.add_error(folder, str(error))
            continue
        manifest = exercise.folder / "exercise.json"
        manifest_text = manifest.read_text(encoding="utf-8")
        fields = json.loads(manifest_text)
        _check_control_characters(manifest, fields, problems)
        unknown = sorted(set(fields) - set(EXERCISE_FIELDS))
        if unknown:
            problems.add(manifest, f"unknown field(s) {', '.join(map(repr, unknown))}: an exercise.json holds "
                                   f"{', '.join(EXERCISE_FIELDS)}", manifest_text, f'"{unknown[0]}"')
        if "continues" in fields and fields["continues"] not in earlier:
            problems.add(manifest, f"continues names {fields['continues']!r}, which is no earlier exercise of this "
                                   f"lesson (the earlier ones: {', '.join(earlier) or 'none'})", manifest_text,
                         '"continues"')
        earlier.append(exercise.id)
        if "hints" in fields:
            _check_hints(manifest, manifest_text, fields["hints"], resolve, problems)
        prose = exercise.folder / fields["text"]
        prose_text = prose.read_text(encoding="utf-8")
        _check_control_characters(prose, prose_text, problems)
        _check_placeholders(prose, prose_text, resolve, problems)
        if not grade:
            continue
        drawn = exercise.with_seeds(range(REFERENCE_SEEDS))
        for language in exercise.languages:
            ext = LANGUAGES[language]
            reference = grade_with(drawn, language, exercise.source("solution", language))
            if reference["verdict"] == "type-error":
                problems.add(exercise.folder / f"solution.{ext}",
                             f"exercise {exercise.id!r}: the reference solution does not pass in {language}: "
                             f"{_first_type_error(reference)}")
            elif reference["verdict"] != "passed":
                problems.add(exercise.folder / f"solution.{ext}",
                             f"exercise {exercise.id!r}: the reference solution does not pass in {language}: "
                             f"{reference['message']}{_failing_cases(reference)}")
            starter = grade_with(exercise, language, exercise.source("starter", language))
            if starter["verdict"] == "passed":
                problems.add(exercise.folder / f"starter.{ext}",
                             f"exercise {exercise.id!r}: the starter already passes every test in {language}; "
                             "leave the learner something to do")


def _first_type_error(result: dict) -> str:
    """A run failed by TypeScript's checker, said as the author needs it: the first type error, which the
    ones after it often only follow from (one wrong type makes every use of it wrong too), counted once."""
    from chainrule.grading.type_errors import type_error_lines

    errors = result.get("type_errors") or []
    if not errors:
        return str(result.get("message"))
    first = " ".join(type_error_lines(errors[:1])[0].split())
    later = len(errors) - 1
    after = (f"; the {count_text(later, 'type error')} TypeScript reports after it may all follow "
             "from this one: fix it first, then check again") if later else ""
    passed = sum(t.get("status") == "pass" for t in result.get("tests", []))
    return (f"TypeScript finds a type error at {first}{after} (the tests ran anyway: {passed} of "
            f"{len(result.get('tests', []))} passed)")


def _failing_cases(result: dict) -> str:
    """Each failing test of a graded run by name, with the expected and the actual values."""
    lines = [f"\n    case {test['name']!r}: expected {test.get('expected')}, got {test.get('actual')}"
             + (f" ({test['message'].splitlines()[0]})" if test.get("message") else "")
             for test in result.get("tests", []) if test.get("status") != "pass"]
    return "".join(lines)


def add_checked_lesson_dirs(directories: list[Path]) -> list[str]:
    """Check (without grading) every lesson folder under the directories, then add them to the path.

    LessonDataError names the first problem and how many there are, so a broken lesson stops the
    server before it starts instead of failing on its page. A folder that is a built-in lesson as it was
    copied (`chainrule lessons copy`: the same name, the same files, byte for byte) is not checked again: it is
    the lesson `chainrule serve` serves without --lessons (its checks train the networks of a lesson's plot,
    seconds of CPU for the built-in lessons at each start of a server or worker).
    """
    for directory in directories:
        for folder in find_lesson_folders(Path(directory)):
            if _built_in_as_copied(folder):
                continue
            problems = check_lesson_folder(folder, grade=False)
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise LessonDataError(f"{problems[0]}{more}")
    return add_lesson_dirs(directories)


def _built_in_as_copied(folder: Path) -> bool:
    """Whether ``folder`` holds exactly the built-in lesson of its name: the same folders and regular files, each
    with the same bytes; a link or any other kind of entry, a file more or less, or one byte changed: False."""
    built_in = DATA_DIR / folder.name
    if folder.name not in builtin_lesson_ids() or folder.resolve() == built_in.resolve():
        return False
    mine, theirs = _tree(folder), _tree(built_in)
    return mine is not None and mine == theirs and all(
        (folder / name).read_bytes() == (built_in / name).read_bytes() for name, size in mine.items() if size >= 0)


def _tree(root: Path) -> dict[str, int] | None:
    """Every entry under ``root`` by relative path: a regular file's size, -1 for a folder; None when an entry
    is a link or neither a folder nor a regular file."""
    found: dict[str, int] = {}
    for path in root.rglob("*"):
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            return None
        found[path.relative_to(root).as_posix()] = path.stat().st_size if path.is_file() else -1
    return found
