"""Pydantic models of the JSON API's request and response bodies, so that the OpenAPI
schema FastAPI publishes says exactly what the routes accept and return."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, WithJsonSchema

from chainrule.web.page_numbers import MAX_TYPED_CHARS, read_explore_number, read_number

Language = Literal["python", "javascript", "typescript"]

# Limits on text fields, well under the request body limit; the error says which field and the limit.
MAX_SOURCE_CHARS = 100_000
MAX_ANSWER_CHARS = 1_000
MAX_EXPLANATION_CHARS = 20_000


def _encodable(text: str) -> str:
    """JSON may carry a lone UTF-16 surrogate ("\\ud800"); no file, database or compiler wants one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the text contains an invalid character (a lone UTF-16 surrogate)") from None
    return text


Text = Annotated[str, AfterValidator(_encodable)]

# A number as the learner typed it ("−1,5", " .5") or a JSON number; the server reads it (web/page_numbers.py).
TypedNumber = Annotated[float, BeforeValidator(read_number), WithJsonSchema({
    "anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_TYPED_CHARS}],
    "description": "A number, or the text typed for it (a decimal comma and the typographic minus are fine).",
})]


class ApiModel(BaseModel):
    """Every model of the API's answers. Its validator and serializer are built when first used, not when the class
    is made (defer_build): FastAPI builds its own for each route's answer, and most models are never validated or
    serialized by themselves, so a server's start no longer builds them twice. The schema is the same
    (tests/test_web_models_deferred.py). A request body's model (the *In classes) stays a plain BaseModel, built
    as its class is made: FastAPI's own validator of a deferred body would be built at the first request, outside
    the filter FastAPI puts around that build for a warning of pydantic's, which the server would then print."""

    model_config = ConfigDict(defer_build=True)


class Open(ApiModel):
    """A response that may carry more keys than listed (the API grows only by adding keys)."""

    model_config = ConfigDict(extra="allow")


class Problem(ApiModel):
    field: str | None = Field(description='The input it is about: "expression", "values.<name>", "nudge.h", ...')
    message: str
    column: int | None = Field(default=None, description="1-based column in a text (the expression), or null")
    length: int | None = Field(default=None, description="How many characters from the column, or null")


class ErrorBody(ApiModel):
    """Every error answer's shape (web/error_answers.py builds them all)."""

    detail: str = Field(description="What was wrong and what is allowed.")
    field: str | None = Field(default=None, description="The input a 422 is about, so a page can say it there.")
    problems: list[Problem] = Field(default_factory=list, description="Each problem at its field, when a 422 "
                                    "has several or they have a place in a text; else empty")


ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorBody"}


def error_answer(description: str) -> dict[str, Any]:
    """An error answer in a route's ``responses``: ErrorBody as JSON, with its description. It says in the schema
    what ``{"model": ErrorBody, "description": ...}`` said, written out, without the validator and serializer of
    ErrorBody that FastAPI builds for each such entry of each route, only for the schema (608 in the class app
    at every start). ErrorBody stays in the schema's components through TOO_FAST (web/compute_rate.py), which
    names it as a model; tests/test_web_models_deferred.py checks that every reference of the schema resolves."""
    return {"description": description, "content": {"application/json": {"schema": dict(ERROR_SCHEMA)}}}


# ---------------------------------------------------------------- requests


class PredictionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: TypedNumber
    second_try: StrictBool = Field(  # strict: "yes" or 1 is refused, as the schema says
        False, description="The one more try after a wrong prediction: checked, but the first try stays the saved one.")


class CodeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    exercise: Text = Field(max_length=100)
    language: Language
    source: Text = Field(max_length=MAX_SOURCE_CHARS)


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: Text = Field(min_length=1, max_length=MAX_ANSWER_CHARS, description="A typed number, or an option's text.")
    variant: str | None = Field(
        None, pattern=r"^[0-9a-f]{1,64}$",
        description="For a review: the variant GET /api/review/due gave, so the answer is checked against the numbers shown.",
    )


class NudgeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: Text = Field(max_length=100, description="The input to move, e.g. a")
    h: TypedNumber = Field(description="How far to move it (1e-6 <= |h| <= 1)")


# A number typed into the explorable graph: the same reading, and "too large" said with the range it takes.
ExploreNumber = Annotated[float, BeforeValidator(read_explore_number), WithJsonSchema({
    "anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_TYPED_CHARS}],
    "description": "A number from -1000 to 1000, or the text typed for it.",
})]


class ExploreIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    values: dict[Text, ExploreNumber] = Field(default_factory=dict, max_length=20, description="{input label: number}; the others keep the lesson's")
    nudge: NudgeIn | None = None


class ExplanationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: Text = Field(max_length=MAX_EXPLANATION_CHARS)
    ticked: list[Text] = Field(default_factory=list, max_length=50, description="Ids of the key ideas covered.")


# ---------------------------------------------------------------- responses


class Progress(ApiModel):
    """The learner's work in a lesson, counted among what it asks for (progress.finished.lesson_state)."""
    predictions: int
    exercises: int = Field(description="Exercises passed (in any language)")
    quiz: int = Field(description="Quiz questions answered")
    explanation: bool = Field(description="The explanation is written")


class LessonRef(Open):
    id: str
    title: str
    href: str


class PathLesson(Open):
    id: str
    title: str
    summary: str
    minutes: int
    status: Literal["available", "coming-next", "not-yet-written"]
    written: bool
    href: str | None
    progress: Progress | None = Field(description="null when the lesson is not written or the store is unavailable")
    totals: dict[str, int] | None = Field(default=None, description="What finishing the lesson takes: how many "
                                          "predictions, exercises and quiz questions (with progress)")
    started: bool = Field(default=False, description="Any work of the lesson saved (code included)")
    finished: bool = Field(default=False, description="Every section finished (chainrule.progress.finished's rule)")
    builds_on: list[LessonRef] = Field(default=[], description="The lessons this one builds on, in path order")
    assumes: str | None = Field(default=None, description="What the lesson assumes a learner knows, as a phrase")


class PathOut(Open):
    id: str
    title: str
    summary: str
    href: str
    lessons: list[PathLesson]
    store_error: str | None = None


class Neighbour(Open):
    id: str
    title: str
    summary: str
    minutes: int
    status: str
    written: bool
    href: str | None


class Section(Open):
    number: str
    slug: str
    title: str
    html: str


class SeeItWork(Open):
    graph: str
    graph_name: str = Field(description="The graph's name for the page and a screen reader: its section and formula")
    chain_formula: str
    formula_label: str = Field(default="The chain rule along one path", description="What the formula shows")


class StepRef(ApiModel):
    phase: Literal["forward", "backward"]
    index: int


class PredictStep(Open):
    key: str
    kind: Literal["forward", "backward"]
    node_label: str
    prompt: str
    before_step: StepRef


class Predict(Open):
    graph: str
    graph_name: str = Field(description="The graph's name for the page and a screen reader: its section and formula")
    tolerance: float
    total: int
    steps: list[PredictStep]


class ExerciseInfo(Open):
    id: str
    title: str
    html: str
    languages: list[str]
    hint_count: int = Field(0, description="How many hints GET .../hints/{number} can give, one at a time.")
    continues: str | None = Field(None, description="The exercise whose passing code this one starts from.")
    downloads: list[str] = Field(default_factory=list, description="The languages whose passing code "
                                 "GET /api/exercises/{id}/passing-code gives as one file that runs on its own.")


class HintOut(ApiModel):
    number: int
    count: int
    html: str


class SolutionOut(ApiModel):
    unlocked: bool = Field(description="False until enough runs failed or the learner confirmed; then source is set.")
    failed_runs: int
    needed: int = Field(description="Runs that did not pass after which the solution opens without confirming.")
    language: Language
    source: str | None = None


class Question(Open):
    id: str
    prompt: str
    kind: Literal["number", "choice"]
    options: list[str]


class KeyIdea(ApiModel):
    id: str
    text: str


class Explain(Open):
    prompt: str
    key_ideas: list[KeyIdea]


class Recap(Open):
    points: list[str]
    next: Neighbour | None


class PathRef(Open):
    id: str
    title: str
    href: str


class LessonOut(Open):
    id: str
    title: str
    minutes: int
    path: PathRef
    previous: Neighbour | None
    next: Neighbour | None
    sections: list[Section]
    see_it_work: SeeItWork
    predict: Predict
    exercises: list[ExerciseInfo]
    solution_after: int = 3
    quiz: list[Question]
    explain: Explain
    recap: Recap


class TraceOut(Open):
    """A step trace of the graph (schema "chainrule.trace/1", docs/trace.md)."""

    schema_: str = Field(alias="schema")
    output: str
    nodes: list[dict[str, Any]]
    forward: list[dict[str, Any]]
    backward: list[dict[str, Any]]
    layout: dict[str, Any] | None = Field(default=None, description="Where every shape goes, for wide and narrow screens (docs/trace.md).")


class NudgeOut(Open):
    """The nudge check (chainrule.lessons.nudge): every number with its "<key>_text" beside it."""

    input: str
    h: float
    before: float | None
    after: float | None
    change: float | None
    ratio: float | None
    grad: float | None
    symbol: str = Field(description="How the page writes the gradient: dL/da")
    verdict: Literal["agree", "close", "h-large", "kink", "not-finite", "differ"]
    note: str = Field(description="Whether change / h and the gradient agree, and if not, why")


class ExploreOut(Open):
    trace: TraceOut
    nudge: NudgeOut | None


class StarterOut(ApiModel):
    exercise: str
    language: Language
    source: str
    # The step this exercise continues, when the source is the learner's own passing code of it (else None).
    carried_from: str | None = None


class GradeTest(Open):
    name: str
    status: Literal["pass", "fail", "error"]
    message: str | None = None


class GradeOut(Open):
    """The grader's result (the Exercism test-runner interface v3 plus extras, docs/grading.md)."""

    version: int
    status: Literal["pass", "fail", "error"]
    message: str | None = None
    verdict: str
    tests: list[GradeTest] = Field(default_factory=list)
    saved: bool = Field(description="False when the result was not stored: the store failed (see store_error) or the grader was busy")
    store_error: str | None = None


class Saved(ApiModel):
    saved: bool


class PredictionResult(Open):
    key: str
    value: float
    correct: bool
    expected: float
    expected_text: str
    reason: str
    hint: str | None = Field(None, description="For a wrong prediction: a hint aimed at the slip it matches, or a general one.")
    mistake: str | None = Field(None, description="The named mistake a wrong prediction matches (lesson.json), if any.")
    aimed: bool | None = Field(None, description="For a wrong prediction: whether the hint speaks to this very answer.")
    practice: bool = Field(False, description="True for a second try: checked, not saved over the first.")


class ReviewInfo(Open):
    due: str
    text: str
    interval_days: float | None = None


class AnswerResult(Open):
    correct: bool
    expected: str
    reason: str
    review: ReviewInfo
    practice: bool = Field(default=False, description="True when this answer did not rate the review card (a retry, or not due).")
    hint: str | None = Field(None, description="For a wrong answer: why that option is wrong, or a hint aimed at the slip it matches.")
    mistake: str | None = Field(None, description="The named mistake a wrong number matches (quiz.json), if any.")
    aimed: bool | None = Field(None, description="For a wrong answer: whether the hint speaks to this very answer "
                               "(a named mistake, why this option is wrong) rather than a general one.")


class Finished(ApiModel):
    sections: list[str] = Field(description="The numbers of the finished sections, in order")
    lesson: bool = Field(description="Every section is finished")


class ProgressOut(ApiModel):
    finished: Finished
    predictions: dict[str, dict[str, Any]]
    code: dict[str, str]
    results: dict[str, dict[str, Any]]
    quiz: dict[str, dict[str, Any]]
    explanation: dict[str, Any] | None


class DueQuestion(Open):
    lesson_id: str
    question_id: str
    prompt: str
    kind: Literal["number", "choice"]
    options: list[str]
    due: str | None = None
    variant: str | None = Field(None, description="Which numbers this review shows; send it back with the answer.")


class DueOut(ApiModel):
    due: list[DueQuestion]
    next_due: str | None = Field(default=None, description="When the earliest question is due (ISO 8601); null: none yet")


class UndoOut(ApiModel):
    undone: dict[str, Any] | None


class JobOut(Open):
    """A graded run waiting for, or taken by, a worker (class mode in PostgreSQL; web/routes_jobs.py)."""

    job: int
    state: Literal["queued", "running", "graded", "ended"]
    exercise: str
    language: str
    position: int | None = Field(default=None, description="1 for the next run a worker takes (while queued)")
    poll_after: float | None = Field(default=None, description="seconds to wait before asking again (while open)")
    result: GradeOut | None = Field(default=None, description="the grading result, once graded or ended")


class JobsOut(ApiModel):
    queued: bool = Field(description="True when runs are graded by workers (a class in PostgreSQL)")
    jobs: list[JobOut]
    ungraded: list[JobOut] = Field(default_factory=list, description="per exercise and language, the latest run "
                                   "if it ended without a grade after the latest graded one")
