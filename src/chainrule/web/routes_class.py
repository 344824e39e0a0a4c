"""Class mode's own pages and API: sign-in, joining, one-time links, a learner's data, the teacher's view.

    app = create_class_app(store, accounts=Accounts(store), runs=QueuedRuns(store, url), secure=False)

The lesson pages and their API (routes_api.py) are the personal mode's, unchanged: ClassServices hands
them the signed-in account's own store. Here: the forms (their CSRF token travels in the form body),
and /api/class/... for the teacher (their own class only) and for a learner's export and import.
Every refusal is a ClassError or an InputError, answered by web/error_answers.py (a form shows it on its page);
an id of another class's learner is "not found", exactly as an id that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Iterable

import anyio
from fastapi import APIRouter, FastAPI, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.accounts import ASSISTANT, MAX_SEATS, STAFF, TEACHER, Account, Accounts, ClassError
from chainrule.classes.passwords import PasswordsBusy
from chainrule.classes.sessions import (
    DEVICE_LIFETIME,
    cookie_header,
    cookie_names,
    csrf_ok,
    csrf_token,
    device_cookie,
    session_cookie,
)
from chainrule.errors import InputError
from chainrule.progress import StoreError
from chainrule.web.app_state import app_state, install
from chainrule.web.class_gate import ClassGate, ClassServices, class_store
from chainrule.web.compute_rate import COMPUTE, TOO_FAST
from chainrule.web.error_answers import answer_for
from chainrule.web.forms import RowId, read_form
from chainrule.web.models import error_answer
from chainrule.web.page_templates import templates
from chainrule.web.progress_files import chunks, file_slot, spooled_export
from chainrule.web.roles import ANYONE, Learner, Staff, Teacher
from chainrule.web.routes_sso import buttons as sso_buttons
from chainrule.web.routes_sso import password_refusal, passwords_allowed
from chainrule.web.section_filter import SectionFilter, chosen_section

if TYPE_CHECKING:
    from chainrule.classes.graded_runs import GradedRuns

CLASS_ERRORS: dict[int | str, dict[str, Any]] = {
    401: error_answer("Not signed in."),
    403: error_answer("Not the teacher of this class, a missing or wrong CSRF token, "
                      "or a foreign Host or Origin."),
    404: error_answer("No such learner in your class."),
    409: error_answer("The class is full, or the name is taken."),
    413: error_answer("Request body over the size limit."),
    422: error_answer("The request is not valid (a progress file that is not one, say)."),
    503: error_answer("The class database cannot be reached (nothing of its address)."),
}

LearnerId = RowId
PathLessonId = Annotated[str, Path(max_length=100, description="A lesson id of the path, e.g. backprop",
                                   examples=["backprop"])]

router = APIRouter(responses=CLASS_ERRORS)  # each route's role: web/roles.py
IMPORT_PATH = "/api/class/progress/import"
MAX_IMPORT_BODY = 32 * 1024 * 1024  # a progress file holds every run's code and result: far above 256 KB
DEFAULT_LEARNER_QUOTA = 64 * 1000 * 1000  # characters one learner may keep (code, results, answers, cards)


def _accounts(request: Request) -> Accounts:
    return app_state(request).accounts


def _state(request: Request) -> dict[str, Any]:
    return request.scope.get("state", {})


def _local_path(target: str | None, default: str) -> str:
    """Only a path on this server (never //host or a scheme): no open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


# ---------------------------------------------------------------- forms


def _form_page(request: Request, *, title: str, intro: str, fields: list[dict], action: str, button: str,
               error: BaseException | None = None, status: int = 200, extra: dict | None = None) -> HTMLResponse:
    """A form page; with ``error``, the form again with that error's sentence and status (web/error_answers.py)."""
    headers: dict[str, str] = {}
    message = ""
    if error is not None:
        answer = answer_for(error, request)
        status, message, headers = answer.status, answer.detail, answer.headers
    state = app_state(request)
    names = state.cookie_names
    token = csrf_token(state.secret, _state(request).get("session_cookie"))
    context = {"request": request, "title": title, "intro": intro, "fields": fields, "action": action,
               "button": button, "error": message, "csrf": token, **(extra or {})}
    response = templates.TemplateResponse(request, "class_form.html", context, status_code=status, headers=headers)
    # With "no-referrer" (the default here) Chromium sends a form's POST with "Origin: null", which the
    # Origin check refuses; "same-origin" still sends nothing to other sites.
    response.headers["referrer-policy"] = "same-origin"
    response.headers.append("set-cookie", cookie_header(names.csrf, token, secure=state.secure,
                                                        http_only=False, same_site="Strict", max_age=None))
    return response


async def _form(request: Request) -> dict[str, str]:
    """The url-encoded form (web/forms.py's limits), after checking its CSRF field against the cookie."""
    form = await read_form(request)
    state = _state(request)
    if not csrf_ok(app_state(request).secret, state.get("csrf_cookies", []), form.get("csrf"),
                   state.get("session_cookie")):
        raise ClassError("this form has expired: reload the page and send it again", kind="refused")
    return form


def _signed_in_response(request: Request, account: Account, target: str) -> Response:
    app = app_state(request)
    secure, names, secret = app.secure, app.cookie_names, app.secret
    now = int(app.clock().timestamp())
    cookie = session_cookie(secret, account.id, account.session_epoch, now)
    response = RedirectResponse(target, status_code=303)
    response.headers.append("set-cookie", cookie_header(names.session, cookie, secure=secure))
    response.headers.append("set-cookie", cookie_header(
        names.csrf, csrf_token(secret, cookie), secure=secure, http_only=False, same_site="Strict"))
    device = _state(request).get("device")
    if device is None or device[0] != account.id:  # this browser is known to the account from now on
        response.headers.append("set-cookie", cookie_header(
            names.device, device_cookie(secret, account.id), secure=secure, max_age=DEVICE_LIFETIME))
    return response


# What a form shows again with its sentence and status (web/error_answers.py's mapping; anything else is a 500).
FORM_ERRORS = (ClassError, InputError, PasswordsBusy, StoreError)


def _home(account: Account) -> str:
    return "/teacher" if account.role in STAFF else "/"


SIGN_IN_FIELDS = [
    {"name": "class_name", "label": "Class", "type": "text", "autocomplete": "organization"},
    {"name": "name", "label": "Your name in the class", "type": "text", "autocomplete": "username"},
    {"name": "password", "label": "Password", "type": "password", "autocomplete": "current-password"},
]


@router.get("/sign-in", include_in_schema=False, response_class=HTMLResponse, dependencies=[ANYONE])
def sign_in_page(request: Request, next: str = "") -> HTMLResponse:
    return _form_page(request, title="Sign in", intro="Sign in to your class.", fields=SIGN_IN_FIELDS,
                      action="/sign-in?next=" + _local_path(next, ""), button="Sign in",
                      extra={"providers": sso_buttons(request, next=_local_path(next, ""))})


@router.post("/sign-in", include_in_schema=False, dependencies=[ANYONE])
async def sign_in(request: Request, next: str = "") -> Response:
    try:
        form = await _form(request)
        account = await _accounts(request).sign_in(form.get("class_name", ""), form.get("name", ""),
                                                   form.get("password", ""), known_device=_state(request).get("device"))
        refusal = await anyio.to_thread.run_sync(password_refusal, request, account)
        if refusal is not None:
            raise ClassError(refusal, kind="refused")
    except FORM_ERRORS as error:
        return _form_page(request, title="Sign in", intro="Sign in to your class.", fields=SIGN_IN_FIELDS,
                          action="/sign-in?next=" + _local_path(next, ""), button="Sign in", error=error,
                          extra={"providers": sso_buttons(request, next=_local_path(next, ""))})
    return _signed_in_response(request, account, _local_path(next, _home(account)))


ROSTER_FIELD = {"name": "roster_key", "label": "Your school e-mail or school id, as your teacher listed it "
                "(leave it empty if you were not listed)", "type": "text", "autocomplete": "email", "optional": True}


def _roster_of(request: Request) -> Any:
    from chainrule.classes.roster import Roster

    return Roster(_accounts(request))


NEW_PASSWORD = {"name": "password", "label": "Choose a password (10 characters or more)", "type": "password",
                "autocomplete": "new-password"}


@router.get("/join/{invite}", include_in_schema=False, response_class=HTMLResponse, dependencies=[ANYONE])
def join_page(request: Request, invite: str) -> HTMLResponse:
    try:
        _, class_name = _accounts(request).invited_class(invite)
    except ClassError as error:
        return _form_page(request, title="Join a class", intro=str(error), fields=[], action="", button="",
                          status=404)
    return _join_form(request, invite, class_name)


def _join_form(request: Request, invite: str, class_name: str, error: BaseException | None = None) -> HTMLResponse:
    fields: list[dict[str, Any]] = [{"name": "name", "label": "Your name (your teacher and you will see it)",
                                     "type": "text", "autocomplete": "username"}, NEW_PASSWORD]
    class_id, _ = _accounts(request).invited_class(invite)
    if _roster_of(request).has_entries(class_id):  # a teacher listed the class: the learner names their entry
        fields.append(ROSTER_FIELD)
    with_passwords = passwords_allowed(request, class_id)
    intro = "Choose the name your teacher will know you by." if with_passwords else \
        "Join with your school account (your teacher turned passwords off for this class)."
    return _form_page(request, title=f"Join {class_name}", intro=intro, fields=fields if with_passwords else [],
                      action=f"/join/{invite}", button="Join the class", error=error,
                      extra={"providers": sso_buttons(request, invite=invite), "provider_verb": "Join"})


@router.post("/join/{invite}", include_in_schema=False, dependencies=[ANYONE])
async def join(request: Request, invite: str) -> Response:
    accounts = _accounts(request)
    try:
        _, class_name = await _run(accounts.invited_class, invite)
    except ClassError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    try:
        form = await _form(request)
        if not await anyio.to_thread.run_sync(passwords_allowed, request, accounts.invited_class(invite)[0]):
            raise ClassError("this class is joined with a school account only: use the button below", kind="refused")
        account = await accounts.join(invite, form.get("name", ""), form.get("password", ""),
                                      form.get("roster_key", ""))
    except FORM_ERRORS as error:
        return _join_form(request, invite, class_name, error)
    if not account.approved:  # the class asks for the teacher's approval: no session until then
        return _form_page(request, title=f"Joined {class_name}", fields=[], action="", button="", status=202,
                          intro=f"You joined as {account.name}. Your teacher lets each learner in: once they "
                          "have, sign in at /sign-in with your name and password.")
    return _signed_in_response(request, account, "/")


@router.get("/set-password/{token}", include_in_schema=False, response_class=HTMLResponse, dependencies=[ANYONE])
def set_password_page(request: Request, token: str) -> HTMLResponse:
    try:
        account = _accounts(request).link_account(token)
    except ClassError as error:
        return _form_page(request, title="Set your password", intro=str(error), fields=[], action="", button="",
                          status=404)
    return _form_page(request, title="Set your password",
                      intro=f"{account.name}, choose a new password for {account.class_name}.",
                      fields=[NEW_PASSWORD], action=f"/set-password/{token}", button="Set the password")


@router.post("/set-password/{token}", include_in_schema=False, dependencies=[ANYONE])
async def set_password(request: Request, token: str) -> Response:
    try:
        form = await _form(request)
        account = await _accounts(request).use_link(token, form.get("password", ""))
    except FORM_ERRORS as error:
        return _form_page(request, title="Set your password", intro="Choose a new password.", fields=[NEW_PASSWORD],
                          action=f"/set-password/{token}", button="Set the password", error=error)
    return _signed_in_response(request, account, _home(account))


@router.post("/sign-out", include_in_schema=False)
async def sign_out(request: Request, account: Learner) -> Response:
    await _form(request)
    await _run(_accounts(request).end_sessions, account.id)  # every copy of the cookie, on any device, stops working
    response = RedirectResponse("/sign-in", status_code=303)
    state = app_state(request)
    response.headers.append("set-cookie", cookie_header(state.cookie_names.session, "", secure=state.secure,
                                                        max_age=0))
    return response


async def _run(function: Any, *args: Any, **kwargs: Any) -> Any:
    """A database call (or a big file's work): off the event loop."""
    import functools

    import anyio

    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))


# ---------------------------------------------------------------- a learner's own data


@router.get("/api/class/me")
def me(account: Learner) -> dict[str, Any]:
    return {"id": account.id, "name": account.name, "role": account.role, "class": account.class_name}


@router.get("/api/class/progress/export", response_class=StreamingResponse,
         responses={200: {"content": {"application/json": {}},
                          "description": "The file `chainrule progress export` writes"}})
async def export_own(request: Request, account: Learner) -> StreamingResponse:
    """The signed-in account's progress in the format `chainrule progress export` writes. It is written to
    a temporary file first (one consistent read) and sent from there: an answer the client does not read
    holds no copy in the server's memory, and is dropped after the write deadline (web/connections.py)."""
    store = app_state(request).services.store(request)
    async with file_slot(request):
        spool = await _run(spooled_export, store)
    return StreamingResponse(chunks(spool), media_type="application/json", headers={
        "content-disposition": 'attachment; filename="chainrule-progress.json"'})


async def _upload(request: Request, limit: int) -> Any:
    """The request's body, counted while it arrives (413 past ``limit``) and kept in a temporary file."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            spool.close()
            raise HTTPException(status_code=413, detail=f"request body too large: more than {limit} bytes, and the "
                                f"limit for a progress file is {limit} bytes ({limit // (1024 * 1024)} MB).")
        spool.write(chunk)
    spool.seek(0)
    return spool


@router.post(IMPORT_PATH, dependencies=[COMPUTE], responses=TOO_FAST)
async def import_own(request: Request, account: Learner) -> dict[str, Any]:
    """A file from `chainrule progress export` (personal mode), added to the signed-in account: read with
    limits off the event loop, checked (classes/imports.py), kept in short batches, and its code graded again
    by the class's own grader (web/regrading.py)."""
    from chainrule.classes.imports import add_own_file
    from chainrule.progress import StoreError
    from chainrule.progress.exchange import read_progress_file
    from chainrule.web.regrading import grade_again

    spool = await _upload(request, MAX_IMPORT_BODY)
    store = app_state(request).services.store(request)
    created = await _run(_accounts(request).created_at, account.id)
    try:
        async with file_slot(request):
            with spool:
                document = await _run(lambda: read_progress_file(spool.read()))
            outcome = await _run(add_own_file, store, created, document, quota=app_state(request).learner_quota)
            del document
    except StoreError as error:
        if error.kind == "invalid-file":
            raise InputError(str(error)) from None
        raise  # over the quota: 413 (web/error_answers.py)
    return {"added": outcome.added, "graded_again": await grade_again(request, outcome.grade_again)}


# ---------------------------------------------------------------- the teacher's view


def _report(request: Request) -> Any:
    from chainrule.classes.report import ClassReport

    return ClassReport(class_store(request), _accounts(request))


@router.get("/api/class/overview", responses={304: {"description": "Nothing changed since the ETag sent in If-None-Match."}})
def overview(request: Request, account: Staff, section: SectionFilter = None) -> Response:
    """Roster against the path, per exercise and per quiz question, for the teacher's own class (one section's
    learners only, with ``section``). With the ETag of an earlier answer in If-None-Match, 304 while nothing
    has changed (the page asks every few seconds while a class works)."""
    from chainrule.classes.report import overview_etag

    data = _report(request).overview(account.class_id, chosen_section(request, account, section))
    etag = overview_etag(data)
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"etag": etag})
    return JSONResponse(data, headers={"etag": etag})


@router.get("/api/class/lessons/{lesson_id}/explanations")
def explanations(request: Request, account: Staff, lesson_id: PathLessonId,
                 section: SectionFilter = None) -> dict[str, Any]:
    """Every learner's explain-it-back text of one lesson, side by side, with the key ideas each ticked."""
    return _report(request).explanations(account.class_id, lesson_id, chosen_section(request, account, section))


@router.get("/api/class/learners/{learner_id}/timeline")
def timeline(request: Request, account: Staff, learner_id: LearnerId) -> dict[str, Any]:
    return _report(request).timeline(account.class_id, learner_id)


@router.post("/api/class/learners/{learner_id}/reset-link")
def reset_link(request: Request, account: Teacher, learner_id: LearnerId) -> dict[str, Any]:
    token = _accounts(request).new_reset_link(account, learner_id)
    return {"link": f"{str(request.base_url).rstrip('/')}/set-password/{token}"}


# ---------------------------------------------------------------- who is in the class (the teacher decides)


class AdmissionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    seats: int | None = Field(default=None, ge=0, le=MAX_SEATS, description="learners the class takes (null: any number)")
    approval: bool = Field(default=False, description="each learner who joins waits until the teacher lets them in")


def _admission(accounts: Accounts, class_id: int) -> dict[str, Any]:
    admission = accounts.admission(class_id)
    return {"seats": admission.seats, "approval": admission.approval, "taken": admission.taken}


@router.get("/api/class/learners")
def learners(request: Request, account: Staff) -> dict[str, Any]:
    """The class's learners (waiting ones too), its seats and whether joining needs approval."""
    accounts, class_id = _accounts(request), account.class_id
    return _admission(accounts, class_id) | {"learners": [
        {"id": learner.id, "name": learner.name, "approved": learner.approved} for learner in accounts.learners(class_id)]}


@router.put("/api/class/admission", responses={400: error_answer("The body is not JSON.")})
def set_admission(request: Request, account: Teacher, body: AdmissionIn) -> dict[str, Any]:
    """How many learners the class takes, and whether each waits for the teacher's approval."""
    accounts, class_id = _accounts(request), account.class_id
    accounts.set_admission(class_id, body.seats, body.approval)
    return _admission(accounts, class_id)


@router.post("/api/class/learners/{learner_id}/approve")
def approve(request: Request, account: Teacher, learner_id: LearnerId) -> dict[str, Any]:
    learner = _accounts(request).approve(account, learner_id)
    return {"id": learner.id, "name": learner.name, "approved": learner.approved}


@router.delete("/api/class/learners/{learner_id}")
def remove(request: Request, account: Teacher, learner_id: LearnerId) -> dict[str, Any]:
    """Remove a learner's account, its work and its runs waiting for the grader; its seat is free again."""
    learner = _accounts(request).remove_learner(account, learner_id)
    taken_back = app_state(request).services.runs.forget_learner(learner.id)
    return {"id": learner.id, "name": learner.name, "runs_taken_back": taken_back}


@router.get("/teacher/gradebook.csv", include_in_schema=False)
def gradebook_csv(request: Request, account: Staff, section: SectionFilter = None) -> Response:
    rows = _report(request).gradebook(account.class_id, chosen_section(request, account, section))
    from chainrule.classes.report import csv_text

    return Response(csv_text(rows), media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="gradebook.csv"'})


@router.get("/account", include_in_schema=False, response_class=HTMLResponse)
def account_page(request: Request, account: Learner) -> HTMLResponse:
    """Who is signed in, their progress as a file (both ways), and signing out."""
    state = _state(request)  # the CSRF cookie that belongs to this session (another port may have planted more)
    token = next((value for value in state.get("csrf_cookies", []) if csrf_ok(
        app_state(request).secret, [value], value, state.get("session_cookie"))), None)
    response = templates.TemplateResponse(request, "account.html", {
        "request": request, "title": "Your account", "name": account.name, "class_name": account.class_name,
        "csrf": token or "", "providers": sso_buttons(request),
        "is_teacher": account.role == TEACHER})
    response.headers["referrer-policy"] = "same-origin"  # its sign-out form, as in _form_page
    return response


@router.get("/teacher", include_in_schema=False, response_class=HTMLResponse)
def teacher_page(request: Request, account: Staff) -> HTMLResponse:
    """The class's page (a learner gets a page saying it is for teachers: web/roles.py); the part about the LMS
    course only in a class that is an LMS course's (its requests would be refused in any other)."""
    lti = app_state(request).lti
    lms_course = lti is not None and lti.tables.context_of_class(account.class_id) is not None
    response = templates.TemplateResponse(request, "teacher.html", {
        "request": request, "title": f"{account.class_name}: the class", "class_name": account.class_name,
        "lms_course": lms_course, "assistant": account.role == ASSISTANT})
    response.headers["referrer-policy"] = "same-origin"  # its sign-out form, as in _form_page
    return response


# ---------------------------------------------------------------- the app


def create_class_app(
    store: Any,
    *,
    accounts: Accounts,
    runs: "GradedRuns | None" = None,
    secure: bool = False,
    hosts: Iterable[str] = (),
    port: int | None = None,
    public: tuple[str, int] | None = None,
    clock: Any = None,
    learner_quota: int = DEFAULT_LEARNER_QUOTA,
) -> FastAPI:
    """The lesson app in class mode: the same pages and API, behind accounts instead of a token. ``runs``:
    classes/graded_runs.py's seam (default: graded in this process, kept in the class store). learner_quota:
    the most characters one learner may keep (progress/quota.py: anything past it is refused).

    hosts: names (besides loopback) this server answers to on ``port`` (None: any port, in-process
    tests); public: the (host, port) of the address learners open (--url), which may be a proxy's."""
    from chainrule.classes.graded_runs import InProcessRuns
    from chainrule.web import (
        routes_comments,
        routes_deadlines,
        routes_items,
        routes_marks,
        routes_mistakes,
        routes_people,
        routes_regrade,
        routes_roster,
        routes_similar,
    )
    from chainrule.web.app import create_app

    services = ClassServices(store, runs if runs is not None else InProcessRuns.for_class(store))
    clock = clock or store.now
    secret = accounts.secret()
    gate = (ClassGate, {"accounts": accounts, "secret": secret, "clock": clock, "secure": secure})
    app = create_app("", None, services=services, gate=gate, port=port, extra_hosts=hosts, public=public,
                     schemes=("http", "https") if secure else ("http",),
                     routers=[router, routes_people.router, routes_comments.router, routes_deadlines.router,
                              routes_regrade.router, routes_marks.router, routes_similar.router,
                              routes_mistakes.router, routes_items.router, routes_roster.router],
                     body_limits={IMPORT_PATH: MAX_IMPORT_BODY, routes_roster.ROSTER_PATH: routes_roster.ROSTER_BODY_LIMIT})
    install(app, accounts=accounts, secret=secret, secure=secure, cookie_names=cookie_names(secure), clock=clock,
            learner_quota=learner_quota)
    store.quota = learner_quota  # every learner's store (for_learner) refuses saves past it: progress/quota.py
    return app
