"""A lesson as the page shows it (GET /api/lessons/{id}): prose filled from the engine, the predictions in
the order the animation reaches them, exercises with their languages and hint counts, the quiz without
answers."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from chainrule.grading import get_exercise
from chainrule.lessons.checking import quiz_question
from chainrule.lessons.exercises import export_footer
from chainrule.lessons.loader import (
    SOLUTION_AFTER_DEFAULT,
    before_step,
    build_lesson_graph,
    check_lesson_id,
    lesson_cache,
    lesson_plots,
    lesson_resolver,
    loaded_lesson,
    path_data,
    path_entry,
    register_exercises,
)
from chainrule.lessons.text import LessonDataError, Resolve, fill, inside_lesson, render_inline, render_markdown

__all__ = ["get_lesson"]


def _neighbour(index: int) -> dict[str, Any] | None:
    lessons = path_data()["lessons"]
    if 0 <= index < len(lessons):
        return path_entry(lessons[index])
    return None


def _prediction_steps(lesson_id: str, predict: dict[str, Any], resolve: Resolve) -> list[dict[str, Any]]:
    """The Predict section's steps, each with the animation's step just before it, in the order the animation
    reaches them: forward before backward, then by step."""
    import chainrule

    trace = chainrule.trace(build_lesson_graph(lesson_id, predict["graph"]))
    steps = [
        {
            "key": step["key"],
            "kind": step["kind"],
            "node_label": step["node_label"],
            "prompt": fill(step["prompt"], resolve, f"prediction {step['key']}"),
            "before_step": before_step(trace, step["node_label"], step["kind"]),
        }
        for step in predict["steps"]
    ]
    steps.sort(key=lambda s: (s["before_step"]["phase"] != "forward", s["before_step"]["index"]))
    return steps


@lesson_cache
def _build_lesson(lesson_id: str) -> dict[str, Any]:
    data = loaded_lesson(lesson_id)
    folder = Path(data["folder"])
    resolve = lesson_resolver(lesson_id)
    path = path_data()
    position = [entry["id"] for entry in path["lessons"]].index(lesson_id)
    entry = path["lessons"][position]
    plot = lesson_plots(lesson_id)

    def prose(relative: str) -> str:
        try:
            text = inside_lesson(folder, relative).read_text(encoding="utf-8")
        except OSError as error:
            raise LessonDataError(f"lesson {lesson_id!r}: cannot read {relative}: {error}") from error
        return fill(text, resolve, relative)

    sections = []
    for section in data["sections"]:
        html = render_markdown(prose(section["text"]))
        if section["slug"] == "recap":
            items = "".join(f"<li>{render_inline(point)}</li>" for point in data["recap"]["points"])
            html += f"<ul>{items}</ul>\n"
        sections.append({key: section[key] for key in ("number", "slug", "title")} | {"html": html})

    predict = data["predict"]
    steps = _prediction_steps(lesson_id, predict, resolve)
    exercises = [
        {
            "id": exercise["id"],
            "title": exercise["title"],
            "html": render_markdown(prose(exercise["text"])),
            "languages": list(get_exercise(exercise["id"]).languages),
            # Hints come one at a time on request (GET .../hints/{n}); only their number is sent here.
            "hint_count": len(exercise.get("hints", [])),
            # A step of a project starts from the learner's passing code of the step it continues.
            "continues": exercise.get("continues"),
            # The languages whose passing code downloads as one file that runs on its own (export.<ext>).
            "downloads": [language for language in get_exercise(exercise["id"]).languages
                          if export_footer(exercise["id"], language) is not None],
        }
        for exercise in data["exercises"]
    ]

    following = _neighbour(position + 1)
    return {
        "id": lesson_id,
        "title": data["title"],
        "minutes": entry["minutes"],
        "path": {"id": path["id"], "title": path["title"], "href": "/"},
        "previous": _neighbour(position - 1),
        "next": following,
        "sections": sections,
        "see_it_work": {
            "graph": data["see_it_work"]["graph"],
            "graph_name": graph_name("See it work", data, data["see_it_work"]["graph"]),
            "chain_formula": fill(data["see_it_work"]["chain_formula"], resolve, "chain_formula"),
            # What the formula under the graph shows, for screen readers (a lesson before the chain rule
            # shows its steps, not the chain rule).
            "formula_label": data["see_it_work"].get("formula_label", "The chain rule along one path"),
        } | ({"plot": plot} if plot is not None else {}),
        "predict": {
            "graph": predict["graph"],
            "graph_name": graph_name("Predict", data, predict["graph"]),
            "tolerance": data["tolerance"],
            "total": len(steps),
            "steps": steps,
        },
        "exercises": exercises,
        "solution_after": int(data.get("solution_after_failed_runs", SOLUTION_AFTER_DEFAULT)),
        "quiz": [quiz_question(lesson_id, question["id"]) for question in data["quiz"]],
        "explain": copy.deepcopy(data["explain"]),
        "recap": {"points": list(data["recap"]["points"]), "next": following},
    }


def graph_name(section: str, data: dict[str, Any], graph: str) -> str:
    """What a graph of the page is called, for a screen reader too: its section and its formula (the graph's
    title in lesson.json, "y = x*tanh(w*x)"), never one name for every graph."""
    from chainrule.number_text import formula_text

    title = data["graphs"][graph].get("title")
    return f"{section}: the graph of {formula_text(title)}" if isinstance(title, str) and title.strip() \
        else f"{section}: the graph {graph}"


def get_lesson(lesson_id: str) -> dict[str, Any]:
    """The lesson as GET /api/lessons/{id} serves it; no answers are included."""
    check_lesson_id(lesson_id)
    register_exercises()  # the page lists each exercise's languages, which the grader's registry knows
    return copy.deepcopy(_build_lesson(lesson_id))


