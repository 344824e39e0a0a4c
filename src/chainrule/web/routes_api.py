"""The JSON API: a thin face over chainrule.lessons, chainrule.grading and chainrule.progress.

Every route here sits behind the security layers (web/security.py: Host, Origin, the token or class mode's
gate, body size). A route raises; web/error_answers.py answers ({"detail", "field", "problems"}; an InputError is
a 422, a store problem a 503).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Awaitable, Callable

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from chainrule import lessons
from chainrule.errors import InputError
from chainrule.progress import StoreError
from chainrule.progress.finished import lesson_state
from chainrule.progress.scheduling import schedule_summary
from chainrule.progress.shapes import Schedule
from chainrule.web.app_state import app_state
from chainrule.web.compute_rate import COMPUTE, TOO_FAST
from chainrule.web.drawn_graphs import with_drawn_graphs
from chainrule.web.error_answers import store_message
from chainrule.web.models import (
    AnswerIn,
    AnswerResult,
    CodeIn,
    DueOut,
    ExplanationIn,
    ExploreIn,
    ExploreOut,
    GradeOut,
    HintOut,
    JobOut,
    Language,
    LessonOut,
    PathOut,
    PredictionIn,
    PredictionResult,
    ProgressOut,
    Saved,
    SolutionOut,
    StarterOut,
    TraceOut,
    UndoOut,
    error_answer,
)
from chainrule.web.page_numbers import grade_result_with_texts, number_text, plot_with_texts
from chainrule.web.roles import LEARNER, learner
from chainrule.web.store_access import StoreAccess, review_text

ERRORS: dict[int | str, dict[str, Any]] = {
    400: error_answer("The request body cannot be read (not UTF-8 JSON)."),
    401: error_answer("No session token (cookie or X-Chainrule-Token header)."),
    403: error_answer("Wrong token, foreign Host, or foreign Origin."),
    404: error_answer("Unknown lesson, graph, exercise, question or prediction."),
    413: error_answer("Request body over the size limit."),
    422: error_answer("The request body or a parameter is not valid."),
    503: error_answer("The progress store cannot be used (the StoreError text)."),
}

router = APIRouter(prefix="/api", responses=ERRORS, dependencies=[LEARNER])  # every route: a learner's (web/roles.py)

# Path parameters, with examples so that the schema (and schemathesis) reach the real content too.
LessonId = Annotated[str, Path(description="A lesson id, e.g. backprop", examples=["backprop"])]
GraphName = Annotated[str, Path(description="section03 or neuron", examples=["section03", "neuron"])]
PredictionKey = Annotated[str, Path(description="n, o, dn, db, dw1 or dw2", examples=["dn", "dw2"])]
QuestionId = Annotated[str, Path(description="A quiz question id", examples=["product-gradient", "addition-node"])]
ExerciseId = Annotated[str, Path(description="An exercise id",
                                  examples=["neuron-grads", "local-gradients", "backward-order"])]


def services(request: Request) -> StoreAccess:
    return app_state(request).services


def store_of(request: Request) -> Any:
    """The store this request may use (class mode: the signed-in account's own); StoreUnavailable is a 503."""
    return services(request).store(request)


def check_exercise(request: Request, exercise_id: str, language: str) -> None:
    known = lessons.exercise_catalog()
    if exercise_id not in known:
        raise HTTPException(
            status_code=404,
            detail=f"unknown exercise {exercise_id!r}: the exercises are {', '.join(known)}",
        )
    languages = known[exercise_id].get("languages", list(lessons.LANGUAGES))
    if language not in languages:
        raise InputError(
            f"exercise {exercise_id!r} is not offered in {language!r}: it is offered in {', '.join(languages)}",
            field="language",
        )


@router.get("/openapi.json", include_in_schema=False)
def openapi(request: Request) -> JSONResponse:
    """This API's OpenAPI schema (FastAPI's own would be served without a role: app.py turns it off)."""
    return JSONResponse(request.app.openapi())


# ---------------------------------------------------------------- path and lesson content


@router.get("/path", response_model=PathOut, summary="The course path with progress per lesson")
def get_path(request: Request) -> dict[str, Any]:
    path = lessons.get_path()
    store, error = services(request).try_store(request)
    work = None
    if store is not None:
        try:
            work = store.work()
        except StoreError as failure:  # a store error must not hide the path
            error = store_message(request, failure)
    for entry in path["lessons"]:
        entry["progress"] = entry["totals"] = None
        if entry["written"] and work is not None:
            # The one rule of "finished" and its one builder (progress/finished.py), as every other view shows it.
            state = lesson_state(lessons.lesson_shape(entry["id"]), work)
            entry |= {"progress": state["done"], "totals": state["totals"], "started": state["started"],
                      "finished": state["lesson"]}
    path["store_error"] = error
    return path


@router.get("/lessons/{lesson_id}", response_model=LessonOut, summary="A lesson's content (no answers)")
def get_lesson(lesson_id: LessonId) -> dict[str, Any]:
    lesson = lessons.get_lesson(lesson_id)
    plot = lesson.get("see_it_work", {}).get("plot")
    if plot:
        lesson["see_it_work"]["plot"] = plot_with_texts(plot)
    return lesson


@router.get("/lessons/{lesson_id}/trace/{graph}", response_model=TraceOut, summary="Step trace of a lesson graph")
def get_trace(lesson_id: LessonId, graph: GraphName) -> dict[str, Any]:
    """The trace (every number with its text), with the layout of its picture for wide and narrow screens."""
    from chainrule.drawing import page_layout
    from chainrule.lessons.graphs import graph_trace

    steps, _ = graph_trace(_lesson_graph(lesson_id, graph), graph)
    return steps | {"layout": page_layout(steps)}  # every box sized to the texts it will show


def _lesson_graph(lesson_id: str, graph: str) -> dict[str, Any]:
    graphs = lessons.lesson_data(lesson_id)["graphs"]
    if graph not in graphs:
        raise HTTPException(
            status_code=404,
            detail=f"lesson {lesson_id!r} has no graph {graph!r}: its graphs are {', '.join(graphs)}",
        )
    return graphs[graph]


@router.post(
    "/lessons/{lesson_id}/explore/{graph}", response_model=ExploreOut, dependencies=[COMPUTE], responses=TOO_FAST,
    summary="Run a lesson graph with other input values (and optionally one input nudged by h)",
)
def post_explore(lesson_id: LessonId, graph: GraphName, body: ExploreIn) -> dict[str, Any]:
    from chainrule.drawing import page_layout
    from chainrule.lessons.graphs import explore_graph

    nudge = (body.nudge.input, body.nudge.h) if body.nudge else None
    explored = explore_graph(_lesson_graph(lesson_id, graph), body.values, nudge, graph)
    steps = explored["trace"]
    return explored | {"trace": steps | {"layout": page_layout(steps)}}  # boxes sized to these numbers


# ---------------------------------------------------------------- exercises


@router.get("/exercises/{exercise_id}/starter", response_model=StarterOut, summary="Starter code of an exercise")
def get_starter(
    request: Request,
    exercise_id: ExerciseId,
    language: Language = Query("python", description="python, javascript or typescript"),
) -> dict[str, Any]:
    check_exercise(request, exercise_id, language)  # refuses an unknown exercise or language
    from chainrule.grading import starter_source

    previous = lessons.continued_exercise(exercise_id)
    carried = _passing_code(request, previous, language) if previous else None
    if previous and carried is not None:  # a step of a project: it starts from the learner's own code of the last
        return {"exercise": exercise_id, "language": language, "carried_from": previous,
                "source": lessons.carried_source(carried, previous, exercise_id)}
    return {"exercise": exercise_id, "language": language, "source": starter_source(exercise_id, language),
            "carried_from": None}


def _passing_code(request: Request, exercise_id: str, language: str) -> str | None:
    """The learner's latest passing code of an exercise in a language; None without one (or without a store)."""
    store, _ = services(request).try_store(request)
    return None if store is None else store.last_passing_code(exercise_id, language)


@router.get(
    "/exercises/{exercise_id}/passing-code", response_class=Response,
    summary="The learner's latest passing code of an exercise as one file that runs on its own",
    responses={200: {"content": {"text/plain": {}}, "description": "The code, as a file to download"}},
)
def get_passing_code(
    request: Request,
    exercise_id: ExerciseId,
    language: Language = Query("python", description="python, javascript or typescript"),
) -> Response:
    check_exercise(request, exercise_id, language)
    from chainrule.grading import LANGUAGES

    code = _passing_code(request, exercise_id, language)
    if code is None:
        raise HTTPException(status_code=404, detail=f"no run of {exercise_id!r} in {language} has passed yet: "
                                                    "pass its tests, then download your code")
    footer = lessons.export_footer(exercise_id, language)
    text = code if footer is None else f"{code.rstrip()}\n\n{footer}"
    return Response(text, media_type="text/plain; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="{exercise_id}.{LANGUAGES[language]}"'})


@router.post("/grade", response_model=GradeOut, summary="Grade code in the sandbox and store it as a submission",
             dependencies=[COMPUTE], responses=TOO_FAST | {202: {"model": JobOut, "description": "Queued for a worker "
                                                                "(a class in PostgreSQL): follow it at /api/jobs/{job}"}})
async def post_grade(request: Request, body: CodeIn) -> Any:
    # async: a run waits for its turn in the event loop, not in the pages' threads (classes/graded_runs.py)
    await run_in_threadpool(check_exercise, request, body.exercise, body.language)
    from chainrule.classes.graded_runs import Submission

    account = learner(request)  # class mode's signed-in learner; None: personal mode's
    run = Submission(account.id if account is not None else None, body.exercise, body.language, body.source,
                     request.headers.get("x-chainrule-run"))
    answer = await services(request).runs.submit(run, _still_connected(request))
    if answer.failure is not None:  # graded but not kept: said as every store failure is (no database address)
        answer.body["store_error"] = store_message(request, answer.failure)
    shown = answer.body if answer.pending else await run_in_threadpool(with_drawn_graphs, answer.body)
    return JSONResponse(shown, status_code=202 if answer.pending else 200)


def _still_connected(request: Request) -> Callable[[], Awaitable[bool]]:
    async def connected() -> bool:
        return not await request.is_disconnected()

    return connected


def _lesson_exercise_or_404(request: Request, lesson_id: str, exercise_id: str, language: str = "python") -> None:
    mine = lessons.exercise_ids(lesson_id)
    if exercise_id not in mine:
        raise HTTPException(
            status_code=404,
            detail=f"lesson {lesson_id!r} has no exercise {exercise_id!r}: its exercises are {', '.join(mine)}",
        )
    check_exercise(request, exercise_id, language)


@router.get(
    "/lessons/{lesson_id}/exercises/{exercise_id}/hints/{number}",
    response_model=HintOut,
    summary="One hint of an exercise (1-based), asked for one at a time",
)
def get_hint(
    request: Request, lesson_id: LessonId, exercise_id: ExerciseId,
    number: Annotated[int, Path(ge=1, le=100, description="Which hint, from 1", examples=[1])],
) -> dict[str, Any]:
    from chainrule.lessons.help import exercise_hint

    _lesson_exercise_or_404(request, lesson_id, exercise_id)
    try:
        hint = exercise_hint(lesson_id, exercise_id, number)
    except LookupError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    store_of(request).record_help(lesson_id, exercise_id, "hint", number)  # the teacher sees the help used
    return hint


@router.get(
    "/lessons/{lesson_id}/exercises/{exercise_id}/solution",
    response_model=SolutionOut,
    summary="The model solution, once enough runs have failed or the learner confirms",
)
def get_solution(
    request: Request, lesson_id: LessonId, exercise_id: ExerciseId,
    language: Language = Query("python", description="python, javascript or typescript"),
    confirm: bool = Query(False, description="The learner asked to see it now, and confirmed."),
    after_run: bool = Query(False, description="Asked by the page after a run that did not pass: the page shows "
                                               "it only at the run that unlocks it."),
) -> dict[str, Any]:
    from chainrule.grading import reference_source
    from chainrule.lessons.help import solution_after, solution_unlocked

    _lesson_exercise_or_404(request, lesson_id, exercise_id, language)
    failed = store_of(request).failed_runs(exercise_id)
    unlocked = solution_unlocked(lesson_id, failed, confirm)
    if unlocked and (not after_run or failed == solution_after(lesson_id)):  # what the page shows: kept
        store_of(request).record_help(lesson_id, exercise_id, "solution")
    return {
        "unlocked": unlocked, "failed_runs": failed, "needed": solution_after(lesson_id), "language": language,
        "source": reference_source(exercise_id, language) if unlocked else None,
    }


@router.put("/progress/code", response_model=Saved, summary="Save the latest code of an exercise")
def put_code(request: Request, body: CodeIn) -> dict[str, Any]:
    check_exercise(request, body.exercise, body.language)
    store_of(request).save_code(body.exercise, body.language, body.source)
    return {"saved": True}


# ---------------------------------------------------------------- progress, predictions, quiz, explanation


@router.get("/progress/{lesson_id}", response_model=ProgressOut, summary="Everything saved for a lesson")
def get_progress(request: Request, lesson_id: LessonId) -> dict[str, Any]:
    mine = set(lessons.exercise_ids(lesson_id))
    store = store_of(request)

    def of_lesson(by_key: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in by_key.items() if key.split("/", 1)[0] in mine}

    code = of_lesson(store.latest_code())
    return {
        "finished": {key: value for key, value in lesson_state(lessons.lesson_shape(lesson_id), store.work()).items()
                     if key in ("sections", "lesson")},
        "predictions": _with_feedback(lesson_id, store.predictions(lesson_id), _prediction_feedback),
        "code": code,
        "results": {key: with_drawn_graphs(grade_result_with_texts(result))
                    for key, result in of_lesson(store.latest_results()).items()},
        "quiz": _with_feedback(lesson_id, store.quiz_answers(lesson_id), _quiz_feedback),
        "explanation": store.explanation(lesson_id),
    }


def _prediction_feedback(lesson_id: str, key: str, saved: dict[str, Any]) -> dict[str, Any]:
    checked = lessons.check_prediction(lesson_id, key, float(saved["value"]))
    return {name: checked[name] for name in ("expected", "expected_text", "reason")} | {
        "value_text": number_text(float(saved["value"]))}


def _quiz_feedback(lesson_id: str, question_id: str, saved: dict[str, Any]) -> dict[str, Any]:
    checked = lessons.check_quiz_answer(lesson_id, question_id, saved["answer"])
    feedback = {"expected": checked["expected"], "reason": checked["reason"]}
    feedback |= {name: checked[name] for name in ("hint", "mistake", "aimed") if name in checked}
    return feedback | {"practice": saved.get("attempts", 1) > 1}


def _with_feedback(lesson_id: str, saved: dict[str, dict[str, Any]], feedback: Any) -> dict[str, dict[str, Any]]:
    """Each saved answer with the right answer and the reason, checked again against the lesson, so
    that a reload (or a restarted server) shows the same feedback as the moment of answering. An
    answer the lesson no longer has a question for is returned as saved."""
    shown = {}
    for key, entry in saved.items():
        try:
            shown[key] = entry | feedback(lesson_id, key, entry)
        except (LookupError, ValueError):
            shown[key] = entry
    return shown


@router.put(
    "/progress/{lesson_id}/predictions/{key}",
    response_model=PredictionResult,
    summary="Check a prediction against the engine and save it",
)
def put_prediction(request: Request, lesson_id: LessonId, key: PredictionKey, body: PredictionIn) -> dict[str, Any]:
    result = lessons.check_prediction(lesson_id, key, body.value) | {"value_text": number_text(body.value)}
    store = store_of(request)
    # The first try is the prediction kept (what "finished" and a class's report read): a right second
    # try after a wrong first is practice, never a first-try right.
    if body.second_try and key in store.predictions(lesson_id):
        return result | {"practice": True}
    store.save_prediction(lesson_id, key, body.value, result["correct"])
    return result | {"practice": False}


def _checked_answer(lesson_id: str, question_id: str, answer: str, variant: str | None = None) -> dict[str, Any]:
    checked = lessons.check_quiz_answer(lesson_id, question_id, answer, variant)
    if checked.get("invalid"):
        raise InputError(checked["reason"], field="answer")
    return checked


def _review_info(schedule: Schedule) -> dict[str, Any]:
    return {
        "due": schedule["due"],
        "text": review_text(schedule["text"]),
        "interval_days": schedule.get("interval_days"),
    }


@router.post(
    "/lessons/{lesson_id}/quiz/{question_id}",
    response_model=AnswerResult,
    summary="Answer a quiz question; it then enters the review queue",
)
def post_quiz_answer(request: Request, lesson_id: LessonId, question_id: QuestionId, body: AnswerIn) -> dict[str, Any]:
    checked = _checked_answer(lesson_id, question_id, body.answer)
    # Only the first answer rates the review card; a retry (after seeing the answer) is practice.
    schedule = store_of(request).answer_question(
        lesson_id, question_id, body.answer.strip(), checked["correct"], first_only=True
    )
    return checked | {"review": _review_info(schedule), "practice": not schedule["rated"]}


@router.put("/lessons/{lesson_id}/explanation", response_model=Saved, summary="Save the explain-it-back answer")
def put_explanation(request: Request, lesson_id: LessonId, body: ExplanationIn) -> dict[str, Any]:
    ideas = lessons.key_idea_ids(lesson_id)
    unknown = [idea for idea in body.ticked if idea not in ideas]
    if unknown:
        raise InputError(f"unknown key idea ids {unknown}: the key ideas are {', '.join(ideas)}", field="ticked")
    ticked = [idea for idea in ideas if idea in body.ticked]  # lesson order, no duplicates
    store_of(request).save_explanation(lesson_id, body.text, ticked)
    return {"saved": True}


# ---------------------------------------------------------------- spaced review


@router.get("/review/due", response_model=DueOut, summary="Questions due for review now")
def get_due(request: Request) -> dict[str, Any]:
    due = []
    for item in store_of(request).due_reviews():
        # Each review of a card has its own variant (from its due time): fresh numbers, kept on reload.
        variant = lessons.review_variant(item["lesson_id"], item["question_id"], item.get("due") or "")
        try:
            question = lessons.quiz_question(item["lesson_id"], item["question_id"], variant)
        except LookupError:
            continue  # a question from a lesson this version no longer has
        due.append(
            {"lesson_id": item["lesson_id"], "question_id": item["question_id"], "due": item.get("due"), "variant": variant}
            | {key: question[key] for key in ("prompt", "kind", "options")}
        )
    return {"due": due, "next_due": store_of(request).next_due()}


@router.post("/review/undo", response_model=UndoOut, summary="Undo the last review answer")
def post_undo(request: Request) -> dict[str, Any]:
    return {"undone": store_of(request).undo_last_review()}


@router.post(
    "/review/{lesson_id}/{question_id}",
    response_model=AnswerResult,
    summary="Answer a question that is due for review",
)
def post_review(request: Request, lesson_id: LessonId, question_id: QuestionId, body: AnswerIn) -> dict[str, Any]:
    checked = _checked_answer(lesson_id, question_id, body.answer, body.variant)
    store = store_of(request)
    card = store.card(lesson_id, question_id)
    if card is not None and datetime.fromisoformat(card["due"]) > store.now():
        # Not due (already answered in this round): practice, the card keeps its schedule.
        schedule = schedule_summary(datetime.fromisoformat(card["due"]), store.now())
        return checked | {"review": _review_info(schedule), "practice": True}
    schedule = store.review(lesson_id, question_id, body.answer.strip(), checked["correct"],
                            lessons.fresh_numbers(lesson_id, question_id, body.variant))
    return checked | {"review": _review_info(schedule), "practice": False}
