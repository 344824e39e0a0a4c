"""The graded exercises, as data: files, interfaces and test cases.

The backpropagation lesson's three exercises live in `exercise_files/<id>/` with `starter.<ext>` (what
the learner edits) and `solution.<ext>` (our reference) for Python (.py), JavaScript (.js) and
TypeScript (.ts); their cases come from `cases.json` (see `chainrule.grading.cases`).

Every other exercise is an *exercise folder* (see `exercise_folder`): exercise.json (id, title,
functions, a case kind and its cases' inputs) next to its starters and solutions. The built-in
lessons' folders are found at import; a lesson folder from elsewhere registers its own with
`register_exercise_folder`. Expected numbers always come from the engine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

EXERCISE_DIR = Path(__file__).with_name("exercise_files")

LANGUAGES: dict[str, str] = {"python": "py", "javascript": "js", "typescript": "ts"}
EXTENSION_LANGUAGE: dict[str, str] = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript",
    ".mts": "typescript", ".cts": "typescript",
}
LANGUAGE_ALIASES: dict[str, str] = {
    "python": "python", "py": "python", "javascript": "javascript", "js": "javascript",
    "typescript": "typescript", "ts": "typescript",
}


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    summary: str
    python_function: str
    js_function: str
    expressions: tuple[str, ...]  # which expressions of cases.json are graded
    folder: Path | None = None  # an exercise folder (None: exercise_files/<id>/ and cases.json)
    case_kind: str = ""  # the folder's case kind (chainrule.grading.case_kinds)
    case_inputs: tuple = ()  # the folder's cases, inputs only
    languages: tuple[str, ...] = tuple(LANGUAGES)

    def function_name(self, language: str) -> str:
        return self.python_function if language == "python" else self.js_function


EXERCISES: dict[str, Exercise] = {
    exercise.id: exercise
    for exercise in (
        Exercise(
            id="neuron-grads",
            title="Differentiate one neuron by hand",
            summary="Given out = tanh(w1*x1 + w2*x2 + b), fill grad with d out/d w1, d out/d w2 and d out/d b.",
            python_function="neuron_grads",
            js_function="neuronGrads",
            expressions=("neuron",),
        ),
        Exercise(
            id="local-gradients",
            title="Teach +, * and tanh their backward step",
            summary="Fill the _backward bodies of +, * and tanh in a minimal Value class, accumulating with +=.",
            python_function="grads_of",
            js_function="gradsOf",
            expressions=("neuron", "reuse", "chain", "shared"),
        ),
        Exercise(
            id="backward-order",
            title="Put the backward pass in order",
            summary="Write backward(out): seed the output with 1, order the graph topologically, walk it in reverse.",
            python_function="grads_of",
            js_function="gradsOf",
            expressions=("neuron", "reuse", "chain", "shared"),
        ),
    )
}


def register_exercise_folder(folder: Path) -> Exercise:
    """Load an exercise folder and make its exercise gradable; ExerciseFolderError if it is invalid.

    Registering the same folder again is harmless; another folder with an id already taken is refused.
    """
    from chainrule.grading.exercise_folder import ExerciseFolderError, load_exercise_folder

    exercise = Exercise(**load_exercise_folder(Path(folder), LANGUAGES))
    known = EXERCISES.get(exercise.id)
    if known is not None and (known.folder is None or known.folder.resolve() != exercise.folder.resolve()):
        raise ExerciseFolderError(
            f"{Path(folder) / 'exercise.json'}: the exercise id {exercise.id!r} is already taken"
            + (f" by {known.folder}" if known.folder else " by a built-in exercise"))
    EXERCISES[exercise.id] = exercise
    return exercise


def _register_builtin_folders() -> None:
    package = Path(__file__).resolve().parent.parent
    for manifest in sorted((package / "lessons" / "data").glob("*/exercises/*/exercise.json")):
        register_exercise_folder(manifest.parent)


def get_exercise(exercise_id: str) -> Exercise:
    try:
        return EXERCISES[exercise_id]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown exercise {exercise_id!r}; the exercises are: {', '.join(EXERCISES)}"
        ) from None


def normalize_language(language: str) -> str:
    """'python' | 'javascript' | 'typescript' (short forms py, js, ts accepted) or ValueError."""
    try:
        return LANGUAGE_ALIASES[str(language).strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown language {language!r}; the languages are: python (py), javascript (js), typescript (ts)"
        ) from None


def list_exercises() -> list[dict[str, Any]]:
    """[{"id", "title", "summary", "languages"}] in lesson order."""
    return [
        {"id": e.id, "title": e.title, "summary": e.summary, "languages": list(e.languages)}
        for e in EXERCISES.values()
    ]


def _source(exercise_id: str, language: str, kind: str) -> str:
    exercise = get_exercise(exercise_id)
    language = normalize_language(language)
    if language not in exercise.languages:
        raise ValueError(f"exercise {exercise.id!r} comes in {', '.join(exercise.languages)}, not {language}")
    folder = exercise.folder or EXERCISE_DIR / exercise.id
    return (folder / f"{kind}.{LANGUAGES[language]}").read_text(encoding="utf-8")


def starter_source(exercise_id: str, language: str) -> str:
    """The file a learner starts from."""
    return _source(exercise_id, language, "starter")


def reference_source(exercise_id: str, language: str) -> str:
    """Our reference solution (for tests and for showing after a pass)."""
    return _source(exercise_id, language, "solution")


@dataclass(frozen=True)
class GradingCase:
    name: str
    expression: str
    args: list  # the call's arguments; the last one is the grad list to fill
    expected: list[float]  # raw engine floats
    labels: tuple[str, ...] = ()  # what each expected number is (empty: the expression's inputs)
    inputs: dict | None = None  # an exercise folder's case as written (for its kind's diagnosis)


@lru_cache(maxsize=None)
def _cases_document() -> str:
    from chainrule.grading.cases import load_cases  # imported late: `python -m ...cases` stays clean

    return json.dumps(load_cases())


def exercise_cases(exercise_id: str) -> list[GradingCase]:
    """The exercise's test cases in file order, expected numbers as the engine computed them."""
    exercise = get_exercise(exercise_id)
    if exercise.folder is not None:
        from chainrule.grading.case_kinds import kind_of

        kind = kind_of(exercise.case_kind)
        return [
            GradingCase(case["name"], exercise.case_kind, kind.args(case), kind.expected(case),
                        tuple(kind.labels(case)), case)
            for case in exercise.case_inputs
        ]
    document = json.loads(_cases_document())
    cases: list[GradingCase] = []
    for expression in exercise.expressions:
        for row in document["expressions"][expression]["sets"]:
            vals, grads = row["vals"], row["grads"]
            if exercise.id == "neuron-grads":
                x1, w1, x2, w2, b = vals
                args = [[x1, x2], [w1, w2], b, row["out"], [0.0, 0.0, 0.0]]
                expected = [grads[1], grads[3], grads[4]]
            else:
                args = [expression, list(vals), [0.0] * len(vals)]
                expected = list(grads)
            cases.append(GradingCase(f"{expression}: {row['name']}", expression, args, expected))
    return cases


_MARKER = re.compile(r"chainrule exercise:\s*([a-z][a-z0-9-]*)")


def detect_exercise(source: str) -> str | None:
    """The exercise a file belongs to: its marker comment, else the functions it defines."""
    match = _MARKER.search(source[:2000])
    if match and match.group(1) in EXERCISES:
        return match.group(1)
    for exercise in EXERCISES.values():
        if exercise.folder is not None and re.search(
                rf"\b({exercise.python_function}|{exercise.js_function})\b", source):
            return exercise.id
    if re.search(r"\b(neuron_grads|neuronGrads)\b", source):
        return "neuron-grads"
    if re.search(r"\b(grads_of|gradsOf)\b", source):
        # Exercises 2 and 3 share their interface and their tests; without a marker, grade as exercise 2.
        return "local-gradients"
    return None


_register_builtin_folders()
