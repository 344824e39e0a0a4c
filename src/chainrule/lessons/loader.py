"""Load the path and the lesson folders (docs/authoring.md) and shape them as the web API serves them.

Built-in lessons live next to this module in data/: path.json (the course path) and one folder per
written lesson. `add_lesson_dirs` adds lesson folders from elsewhere (`chainrule lesson --lessons DIR`,
`chainrule serve --lessons DIR`): a folder named as a built-in lesson takes that lesson's place on the path
(a class's own copy, `chainrule lessons copy DIR`), any other goes to the end of the path. A lesson folder holds lesson.json (graphs, checked numbers, predictions,
exercises, explain, recap), quiz.json, markdown prose in sections/ and exercise folders in exercises/
(docs/authoring.md). Every number the prose shows is a placeholder filled here from the engine
(`{{graph.label.data|grad}}`, `{{plot.run.w}}`) or from lesson.json (`{{lesson.key}}`).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any, Callable, TypeVar

from chainrule.engine import Value
from chainrule.lessons.exercises import register_builtin_exercises, register_lesson_exercises
from chainrule.lessons.graphs import build_graph, graph_values
from chainrule.lessons.plots import lesson_plot, plot_number
from chainrule.lessons.text import LessonDataError, Resolve, inside_lesson
from chainrule.number_text import count_text

__all__ = [
    "DATA_DIR", "LANGUAGES", "UnknownLessonError", "UnknownItemError", "get_path", "register_exercises",
    "lesson_ids", "lesson_data", "lesson_numbers", "lesson_resolver", "build_lesson_graph",
    "graph_names", "exercise_ids", "before_step", "add_lesson_dirs", "find_lesson_folders",
    "lesson_folder", "added_lesson_ids", "added_lesson_folders", "builtin_lesson_ids", "make_resolver", "path_data", "path_entry", "lesson_plots", "lesson_shape",
    "check_lesson_id", "loaded_lesson", "loaded_numbers", "lesson_cache", "SOLUTION_AFTER_DEFAULT",
]

DATA_DIR = Path(__file__).parent / "data"
# Graded runs that did not pass before an exercise's model solution opens (lesson.json may say otherwise).
SOLUTION_AFTER_DEFAULT = 3
# What `{{lesson.KEY}}` gives for a key lesson.json may leave out.
LESSON_DEFAULTS = {"solution_after_failed_runs": SOLUTION_AFTER_DEFAULT}
LANGUAGES = ("python", "javascript", "typescript")


class UnknownLessonError(LookupError):
    """No written lesson has that id; the message lists the ids that exist."""


class UnknownItemError(LookupError):
    """A lesson has no graph / prediction / question / exercise of that id; the message lists those it has."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise LessonDataError(f"cannot read lesson data file {path}: {error}") from error


# Lessons added from folders outside the package: {id: folder}, in the order they were added.
_ADDED: dict[str, Path] = {}
# What is built from the lessons and cached, cleared whenever lessons are added.
_CACHES: list = []


Built = TypeVar("Built")


def lesson_cache(function: Callable[..., Built]) -> functools._lru_cache_wrapper[Built]:
    """functools.lru_cache for something built from the lessons: cleared whenever lessons are added.
    (functools._lru_cache_wrapper: the type lru_cache gives, so that a cached function keeps its result's.)"""
    cached = functools.lru_cache(maxsize=None)(function)
    _CACHES.append(cached)
    return cached


@functools.lru_cache(maxsize=None)
def _builtin_path() -> dict[str, Any]:
    return _read_json(DATA_DIR / "path.json")


@lesson_cache
def path_data() -> dict[str, Any]:
    """path.json, with the added lessons after the built-in ones (their entries from lesson.json)."""
    data = copy.deepcopy(_builtin_path())
    places = {entry["id"]: index for index, entry in enumerate(data["lessons"])}
    for lesson_id, folder in _ADDED.items():
        meta = _read_json(inside_lesson(folder, "lesson.json"))
        entry = {
            "id": lesson_id, "title": meta["title"], "status": "available",
            "minutes": meta["minutes"], "summary": meta["summary"],
        } | {key: meta[key] for key in ("builds_on", "assumes") if key in meta}
        if lesson_id in places:  # a copy of a built-in lesson: in its place
            data["lessons"][places[lesson_id]] = entry
        else:
            data["lessons"].append(entry)
    return data


def builtin_lesson_ids() -> list[str]:
    """The ids of the built-in lessons that are written, in path order."""
    return [entry["id"] for entry in _builtin_path()["lessons"] if entry["status"] == "available"]


def lesson_ids() -> list[str]:
    """The ids of the lessons that are written (status "available"), in path order."""
    return [entry["id"] for entry in path_data()["lessons"] if entry["status"] == "available"]


def added_lesson_ids() -> list[str]:
    """The ids of the lessons added from folders outside the package, in the order they were added."""
    return list(_ADDED)


def added_lesson_folders() -> dict[str, Path]:
    """{id: folder} of the lessons added from folders outside the package."""
    return dict(_ADDED)


def lesson_folder(lesson_id: str) -> Path:
    check_lesson_id(lesson_id)
    return _ADDED.get(lesson_id, DATA_DIR / lesson_id)


def find_lesson_folders(directory: Path) -> list[Path]:
    """The lesson folders in `directory`: itself if it holds lesson.json, else its subfolders that do."""
    directory = Path(directory)
    if (directory / "lesson.json").is_file():
        return [directory]
    if not directory.is_dir():
        raise LessonDataError(f"{directory}: no such folder")
    found = sorted(child for child in directory.iterdir() if (child / "lesson.json").is_file())
    if not found:
        raise LessonDataError(f"{directory}: no lesson folder here (a lesson folder holds a lesson.json)")
    return found


def _clear_caches() -> None:
    for cached in _CACHES:
        cached.cache_clear()


def register_exercises() -> None:
    """Make the built-in lessons' exercises gradable by id, once per process (calling again costs nothing).

    chainrule.grading knows exercise folders, not lessons, and importing this package registers nothing:
    whoever serves lessons or grades by id calls this first (the web app, `chainrule worker`, `chainrule
    check`). Added lessons register theirs when they are added, after these.
    """
    register_builtin_exercises(DATA_DIR)


def add_lesson_dirs(directories: list[Path]) -> list[str]:
    """Add the lessons found under each directory to the path; their ids.

    A lesson's id is its folder's name. A folder named as a built-in lesson takes its place (and its
    exercises take the places of that lesson's exercises of the same ids: a class's own copy to edit);
    any other goes to the end of the path. Its exercise folders are registered with the grader, so they
    are graded in the same sandbox. Raises LessonDataError (naming the file) for a folder that cannot
    be used: run `chainrule lessons check` on it for every problem at once.
    """
    register_exercises()  # the built-in lessons' ids first: an added exercise may not take one
    added = []
    for directory in directories:
        for folder in find_lesson_folders(Path(directory)):
            lesson_id = folder.name
            if lesson_id in _ADDED and _ADDED[lesson_id] != folder.resolve():
                raise LessonDataError(f"{folder}: a lesson with the id {lesson_id!r} is already added from "
                                      f"{_ADDED[lesson_id]}")
            builtin = lesson_id in builtin_lesson_ids()
            if lesson_id in lesson_ids() and not builtin and lesson_id not in _ADDED:
                raise LessonDataError(f"{folder}: a lesson with the id {lesson_id!r} is already on the path")
            meta = _read_json(inside_lesson(folder, "lesson.json"))
            missing = [key for key in ("title", "summary", "minutes") if key not in meta]
            if missing:
                raise LessonDataError(f"{folder / 'lesson.json'}: missing {', '.join(missing)} (the path shows them)")
            _ADDED[lesson_id] = folder.resolve()
            _clear_caches()
            try:
                register_lesson_exercises(folder.resolve(), meta, replaces=DATA_DIR / lesson_id if builtin else None)
            except Exception:
                del _ADDED[lesson_id]
                _clear_caches()
                raise
            added.append(lesson_id)
    return added


def remove_added_lessons() -> None:
    """Forget the lessons added from outside (for tests); their exercises stay registered, except that a
    built-in lesson's own exercises take back the ids a copy of it had taken."""
    for lesson_id, folder in _ADDED.items():
        builtin = DATA_DIR / lesson_id
        if lesson_id in builtin_lesson_ids():
            register_lesson_exercises(builtin, _read_json(builtin / "lesson.json"), replaces=folder, builtin=True)
    _ADDED.clear()
    _clear_caches()


def check_lesson_id(lesson_id: str) -> None:
    """UnknownLessonError, naming the lessons there are, unless `lesson_id` is one."""
    if lesson_id not in lesson_ids():
        raise UnknownLessonError(
            f"unknown lesson {lesson_id!r}: the lessons you can open are {', '.join(lesson_ids())}"
        )


def _exercise_entry(folder: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """A lesson.json exercise entry, {"folder": "exercises/<name>"}, as {"id", "title", "text", "folder",
    "hints"}: id, title, prose and hints from the folder's exercise.json; "text" relative to the lesson
    folder."""
    manifest = _read_json(inside_lesson(folder, entry["folder"]) / "exercise.json")
    return {"id": manifest["id"], "title": manifest["title"],
            "text": f"{entry['folder'].rstrip('/')}/{manifest['text']}", "folder": entry["folder"],
            "hints": list(manifest.get("hints", []))} | (
                {"continues": manifest["continues"]} if isinstance(manifest.get("continues"), str) else {})


@lesson_cache
def loaded_lesson(lesson_id: str) -> dict[str, Any]:
    """The lesson's data as loaded, cached and shared by every caller of the lessons package: read it,
    never change it (lesson_data gives a copy). The id is not checked here (check_lesson_id)."""
    folder = _ADDED.get(lesson_id, DATA_DIR / lesson_id)
    data = _read_json(inside_lesson(folder, "lesson.json"))
    data["quiz"] = _read_json(inside_lesson(folder, "quiz.json"))["questions"]
    data["folder"] = str(folder)
    data["exercises"] = [_exercise_entry(folder, entry) for entry in data.get("exercises", [])]
    return data


def lesson_data(lesson_id: str) -> dict[str, Any]:
    """The raw data of a lesson (lesson.json with quiz.json's questions under "quiz"); a fresh copy."""
    check_lesson_id(lesson_id)
    return copy.deepcopy(loaded_lesson(lesson_id))


def graph_names(lesson_id: str) -> list[str]:
    check_lesson_id(lesson_id)
    return list(loaded_lesson(lesson_id)["graphs"])


def build_lesson_graph(lesson_id: str, graph: str) -> Value:
    """A freshly built graph of the lesson (forward values only); its output Value."""
    check_lesson_id(lesson_id)
    graphs = loaded_lesson(lesson_id)["graphs"]
    if graph not in graphs:
        raise UnknownItemError(
            f"lesson {lesson_id!r} has no graph {graph!r}: its graphs are {', '.join(graphs)}"
        )
    output, _ = build_graph(graphs[graph], graph)
    return output


@lesson_cache
def loaded_numbers(lesson_id: str) -> dict[str, dict[str, dict[str, float]]]:
    """lesson_numbers, cached and shared (read it, never change it); the id is not checked here."""
    graphs = loaded_lesson(lesson_id)["graphs"]
    return {name: graph_values(spec, name) for name, spec in graphs.items()}


def lesson_numbers(lesson_id: str) -> dict[str, dict[str, dict[str, float]]]:
    """{graph: {label: {"data", "grad"}}}: every node's value and gradient, computed by the engine."""
    check_lesson_id(lesson_id)
    return copy.deepcopy(loaded_numbers(lesson_id))


@lesson_cache
def lesson_plots(lesson_id: str) -> dict[str, Any] | None:
    spec = loaded_lesson(lesson_id).get("see_it_work", {}).get("plot")
    return lesson_plot(spec) if spec else None


def lesson_resolver(lesson_id: str) -> Resolve:
    """The placeholder resolver for a lesson's prose: graph and plot numbers from the engine, others
    from lesson.json."""
    return make_resolver(loaded_lesson(lesson_id), loaded_numbers(lesson_id), lesson_plots(lesson_id))


def make_resolver(data: dict[str, Any], numbers: dict[str, dict[str, dict[str, float]]],
                  plot: dict[str, Any] | None) -> Resolve:
    """resolve(["graph", "label", "data"|"grad"]), (["plot", run, field]), (["predict", "total"|"forward"|
    "backward"]) or (["lesson", key]) -> value; KeyError for anything else."""
    # How many predictions section 04 asks, counted from the data so the prose cannot drift from it.
    kinds = [step["kind"] for step in data.get("predict", {}).get("steps", [])]
    prediction_counts = {"total": len(kinds), "forward": kinds.count("forward"), "backward": kinds.count("backward")}

    def resolve(parts: list[str]) -> float | str:
        if len(parts) == 3 and parts[0] in numbers:
            graph, label, field = parts
            return numbers[graph][label][field]
        if len(parts) == 2 and parts[0] == "predict" and parts[1] in prediction_counts:
            return prediction_counts[parts[1]]
        if len(parts) == 3 and parts[0] == "plot" and plot is not None:
            return plot_number(plot, parts[1], parts[2])
        if len(parts) == 2 and parts[0] == "lesson":
            value = data[parts[1]] if parts[1] in data else LESSON_DEFAULTS[parts[1]]
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                return value
        raise KeyError(".".join(parts))

    return resolve


def exercise_ids(lesson_id: str) -> list[str]:
    check_lesson_id(lesson_id)
    return [exercise["id"] for exercise in loaded_lesson(lesson_id)["exercises"]]


def lesson_shape(lesson_id: str) -> dict[str, Any]:
    """What a written lesson asks a learner for, by the parts of chainrule.sections: its section numbers,
    its prediction keys, exercise ids and quiz question ids (progress.finished decides "finished" from it)."""
    check_lesson_id(lesson_id)
    data = loaded_lesson(lesson_id)
    return {"id": lesson_id, "sections": [section["number"] for section in data["sections"]],
            "predictions": [step["key"] for step in data.get("predict", {}).get("steps", [])],
            "exercises": [exercise["id"] for exercise in data["exercises"]],
            "quiz": [question["id"] for question in data.get("quiz", [])]}


def _builds_on(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The lessons an entry builds on ({"id", "title", "href"}), those the path has, in the entry's order."""
    on_path = {lesson["id"]: lesson for lesson in path_data()["lessons"]}
    return [{"id": lesson_id, "title": on_path[lesson_id]["title"], "href": f"/lessons/{lesson_id}"}
            for lesson_id in entry.get("builds_on", []) if lesson_id in on_path]


def path_entry(entry: dict[str, Any]) -> dict[str, Any]:
    written = entry["status"] == "available"
    return {
        "id": entry["id"],
        "title": entry["title"],
        "summary": entry["summary"],
        "minutes": entry["minutes"],
        "status": entry["status"],
        "written": written,
        # A lesson that is not written yet is never a link to an empty page.
        "href": f"/lessons/{entry['id']}" if written else None,
        # What the lesson builds on, and what it assumes a learner knows (a note shows it to one who
        # opens it before finishing those lessons).
        "builds_on": _builds_on(entry),
        "assumes": entry.get("assumes"),
    }


def get_path() -> dict[str, Any]:
    """The course path: {"id","title","summary","href","lessons":[{"id","title","summary","minutes","status","written","href",
    "builds_on","assumes"}]}."""
    data = path_data()
    return {
        "id": data["id"],
        "title": data["title"],
        "summary": data["summary"],
        "href": "/",
        "lessons": [path_entry(entry) for entry in data["lessons"]],
    }


def before_step(trace: dict[str, Any], label: str, kind: str) -> dict[str, Any]:
    """The trace step that a prediction about node `label` precedes.

    A forward prediction precedes the forward step that computes the node. A backward (gradient)
    prediction precedes the first backward step that sends gradient into the node (for the output,
    the seed step 0).
    """
    ids = [node["id"] for node in trace["nodes"] if node["label"] == label]
    if len(ids) != 1:
        raise LessonDataError(f"the trace has {count_text(len(ids), 'node')} labelled {label!r}; a prediction needs exactly one")
    node_id = ids[0]
    if kind == "forward":
        for index, step in enumerate(trace["forward"]):
            if step["node"] == node_id:
                return {"phase": "forward", "index": index}
    else:
        if trace["output"] == node_id:
            return {"phase": "backward", "index": 0}
        for index, step in enumerate(trace["backward"]):
            if any(c["input"] == node_id for c in step.get("contributions", [])):
                return {"phase": "backward", "index": index}
    raise LessonDataError(f"no {kind} step of the trace involves node {label!r}")
