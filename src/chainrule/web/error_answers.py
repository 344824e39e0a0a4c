"""Every error answer of the web app: one mapping from an error to a status, one body shape.

    {"detail": "what was wrong and what is allowed", "field": "h" or null, "problems": [...]}

``problems`` lists each problem at its field ({"field", "message", "column", "length"}) when there are
several or they have a place in a text (the playground's expression); else it is empty. The mapping:

    InputError (and FastAPI's own validation errors, read into one)    422  the only source of a 422
    ClassError: not-found 404, refused 403, conflict 409, rate-limited 429 (with Retry-After), full 409
        (every seat of the class taken), waiting 403 (the teacher has not let the learner in yet)
    PasswordsBusy (the password pool is full)                          503  with Retry-After
    StoreError kind over-quota (progress/quota.py: a learner's storage) 413  its own sentence
    StoreError, StoreUnavailable                                       503  in class mode without the
        database's address or file; the whole text goes to the server's log, every password in it redacted.
        Only a connection failure says "the class database cannot be reached"; busy says busy; a change
        the database refused by a constraint is a 409 (nothing saved); any other failure says it failed
    UnknownLessonError, UnknownItemError                               404
    LessonDataError                                                    500
    a role's refusal (web/roles.py): NotSignedIn 401, NotATeacher 403  one sentence each; a page (not
        under /api) gets the role's page instead (NotSignedIn: to /sign-in; NotATeacher: "for teachers")
    a route's HTTPException (401, 403, 404, 405, ...)                  its own status
    anything else                                                      500 (a bug; the traceback is logged)

The security layers' refusals (security.py, class_gate.py) are built here too (``refusal``), and class
mode's forms show the same status and sentence on their page (``answer_for``).
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from dataclasses import field as default
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException

from chainrule.classes.accounts import ClassError
from chainrule.classes.passwords import PasswordsBusy
from chainrule.errors import InputError
from chainrule.lessons import LessonDataError, UnknownItemError, UnknownLessonError
from chainrule.progress import StoreError
from chainrule.progress.connection import redact_secrets
from chainrule.progress.quota import OVER_QUOTA
from chainrule.progress.store_errors import CANNOT_OPEN, INVALID_INPUT, LOCKED
from chainrule.web.app_state import app_state
from chainrule.web.roles import RoleRefused
from chainrule.web.store_access import StoreUnavailable

__all__ = ["ErrorAnswer", "answer_for", "install_error_handlers", "refusal", "store_message", "log", "is_api"]

log = logging.getLogger("chainrule.web")

CLASS_STATUS = {"not-found": 404, "refused": 403, "conflict": 409, "rate-limited": 429, "full": 409, "waiting": 403}
CLASS_DATABASE_AWAY = ("the class database cannot be reached, so nothing was read or saved: try again in a "
                       "moment (the server's log says why)")
CLASS_DATABASE_BUSY = "the class database is busy with other changes, so nothing was saved: try again in a moment"
CLASS_DATABASE_REFUSED = ("the class database refused this change because it conflicts with what it holds, so "
                          "nothing was saved: reload the page and try again (the server's log says why)")
CLASS_DATABASE_FAILED = ("the class database failed on this request, so nothing was read or saved: try again in "
                         "a moment (the server's log says why)")
BUG = ("the lesson server failed on this request (a bug in chainrule, not in what you sent); the server's "
       "output has the details")


@dataclass
class ErrorAnswer:
    status: int
    detail: str
    field: str | None = None
    problems: list[dict[str, Any]] = default(default_factory=list)
    headers: dict[str, str] = default(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail, "field": self.field, "problems": self.problems}

    def json(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def _validation_input_error(error: RequestValidationError) -> InputError:
    """FastAPI's validation problems as one InputError: a readable sentence per problem, named by its
    field as the page labels it ("c: Type a number ..."), and each problem at its field."""
    problems: list[dict[str, Any]] = []
    for problem in error.errors():
        names = [str(item) for item in problem.get("loc", ()) if item != "body"]
        message = str(problem.get("msg", "is not valid")).removeprefix("Value error, ")
        problems.append({"field": ".".join(names) or None, "message": message, "column": None, "length": None})
    detail = "; ".join(f"{p['field'].rsplit('.', 1)[-1]}: {p['message']}" if p["field"] else p["message"]
                       for p in problems) or "the request is not valid"
    first = next((p["field"].rsplit(".", 1)[-1] for p in problems if p["field"]), None)
    return InputError(detail, field=first, problems=problems)


def store_message(request: Request, error: BaseException) -> str:
    """What a store failure says to whoever asked. Personal mode: the store's own text (the learner's own
    files, and what to do about them). Class mode: nothing of the database's address or file; the whole
    text, with any password redacted, goes to the server's log."""
    text = str(error)
    if not getattr(app_state(request), "class_mode", False):  # (a bare app in a test sets no default)
        return text
    log.error("class database failure on %s %s: %s", request.method, request.url.path, redact_secrets(text))
    if _refused_by_a_constraint(error):
        return CLASS_DATABASE_REFUSED
    kind = getattr(error, "kind", None)
    if kind == LOCKED:
        return CLASS_DATABASE_BUSY
    # Only a connection that could not be made or was lost is "cannot be reached" (a database that is away).
    return CLASS_DATABASE_AWAY if isinstance(error, StoreUnavailable) or kind == CANNOT_OPEN else CLASS_DATABASE_FAILED


def _refused_by_a_constraint(error: BaseException) -> bool:
    """The database refused the change by a constraint (a foreign key, a unique key): the DB-API's
    IntegrityError on both backends (SQLite's, psycopg's), which the store keeps as the error's cause."""
    return any(kind.__name__ == "IntegrityError" for kind in type(error.__cause__).__mro__)


def answer_for(error: BaseException, request: Request) -> ErrorAnswer:
    """The one mapping from an error to its answer (the table above)."""
    if isinstance(error, RequestValidationError):
        error = _validation_input_error(error)
    elif isinstance(error, StoreError) and error.kind == INVALID_INPUT:  # text the database cannot keep
        error = InputError(str(error))
    if isinstance(error, InputError):
        return ErrorAnswer(422, str(error), error.field, list(error.problems))
    if isinstance(error, RoleRefused):
        return ErrorAnswer(error.status, str(error))
    if isinstance(error, ClassError):
        after = {"retry-after": str(max(1, int(error.retry_after + 0.999)))} if error.retry_after else {}
        return ErrorAnswer(CLASS_STATUS.get(error.kind, 400), str(error), headers=after)
    if isinstance(error, StoreError) and error.kind == OVER_QUOTA:
        return ErrorAnswer(413, str(error))
    if isinstance(error, PasswordsBusy):
        return ErrorAnswer(503, str(error), headers={"retry-after": str(error.retry_after)})
    if isinstance(error, (StoreError, StoreUnavailable)):
        if _refused_by_a_constraint(error):
            return ErrorAnswer(409, store_message(request, error))
        return ErrorAnswer(503, store_message(request, error), headers={"retry-after": "5"})
    if isinstance(error, (UnknownLessonError, UnknownItemError)):
        return ErrorAnswer(404, str(error))
    if isinstance(error, LessonDataError):
        return ErrorAnswer(500, f"the lesson data is broken: {error}")
    if isinstance(error, HTTPException):
        return _http_answer(error, request)
    return ErrorAnswer(500, BUG)


def _http_answer(error: HTTPException, request: Request) -> ErrorAnswer:
    """Starlette's own refusals (no route, a body it cannot parse, a method not allowed) in our words."""
    detail = error.detail if isinstance(error.detail, str) else str(error.detail)
    if error.status_code == 404 and detail == "Not Found":
        detail = f"no such address: {request.url.path}"
    elif error.status_code == 400 and detail == "There was an error parsing the body":
        detail = "the request body cannot be read: send a JSON object encoded as UTF-8"
    elif error.status_code == 405:
        detail = f"{request.method} is not allowed on {request.url.path}"
    return ErrorAnswer(error.status_code, detail, headers=dict(error.headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    async def handle(request: Request, error: Exception) -> Response:
        page = error.page(request) if isinstance(error, RoleRefused) and not is_api(request.url.path) else None
        return page or answer_for(error, request).json()

    for kind in (RequestValidationError, InputError, RoleRefused, ClassError, PasswordsBusy, StoreError, StoreUnavailable,
                 UnknownLessonError, UnknownItemError, LessonDataError, HTTPException, Exception):
        app.add_exception_handler(kind, handle)


def is_api(path: str) -> bool:
    """Whether a path is the JSON API's (a refusal is JSON) rather than a page's."""
    return path == "/api" or path.startswith("/api/")


REFUSED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · chainrule</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<main><h1>{title}</h1>
<p>{message}</p>{more}</main>
</body></html>
"""


def refusal(status: int, detail: str, *, as_json: bool, title: str = "Refused", more_html: str = "",
            headers: dict[str, str] | None = None) -> Response:
    """A security layer's refusal (an ASGI app): the one JSON shape for the API, a short page for a page."""
    if as_json:
        return ErrorAnswer(status, detail, headers=dict(headers or {})).json()
    page = REFUSED_PAGE.format(title=html.escape(title), message=html.escape(detail), more=more_html)
    return HTMLResponse(page, status_code=status, headers=headers)
