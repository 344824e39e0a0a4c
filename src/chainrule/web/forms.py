"""The one reader of every form body and query string, with one set of limits, and the one rule for row ids.

    form = await read_form(request)          # a route's url-encoded form: a dict, or an InputError (422)
    params = query(request)                  # the query string, read the same way
    learner_id: RowId                        # an id in a path: 1 to 2**31 - 1, else a 422 (never a 500)
    account_id = row_id(form["account"], "account")   # the same rule for an id in a form

The limits: at most MAX_FIELDS fields, MAX_FIELD characters per field (a signed token the LMS or this server
made, TOKEN_FIELDS, may fill the body), a body of MAX_BODY bytes, no NUL. ``FormLimits`` (a layer of
web/security.py, in front of the class gate) applies them to the query string of every request and to every
url-encoded body, before any route runs: a route added later gets them without doing anything. A route reads
its form with ``read_form`` (whatever the body's content type says), which applies the same rule again.
Every refusal is the project's one 4xx shape (web/error_answers.py): 422 saying what was wrong and what is allowed,
413 for a body over the size.

RowId: the ids of a class's rows count up from 1 in every table, and no class makes 2**31 rows of anything: an
id past 2**31 - 1 names no row, and 2**64 overflowed SQLite's driver (a 500). Refused here as a 422 instead,
the same on both backends.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import Path, Request
from starlette.types import Message, Receive, Scope, Send

from chainrule.errors import InputError
from chainrule.web.error_answers import ErrorAnswer, answer_for, refusal

__all__ = ["MAX_FIELDS", "MAX_FIELD", "MAX_BODY", "TOKEN_FIELDS", "ROW_ID_MAX", "RowId", "FormLimits", "fields",
           "read_form", "query", "row_id"]

MAX_FIELDS = 40  # the largest form (an LMS's launch) has about 10; the class's own forms 3 and a CSRF token
MAX_FIELD = 2000  # characters in a field's name or value: a name is 60, a password 200
MAX_BODY = 64 * 1024  # bytes of a url-encoded body: an LMS's signed launch (id_token) is a few KB
TOKEN_FIELDS = frozenset({"id_token", "JWT", "settings", "ticket", "code", "lti_message_hint"})  # signed tokens
ROW_ID_MAX = 2**31 - 1  # far past any class's rows; the bound every id route had
FORM_TYPE = "application/x-www-form-urlencoded"

RowId = Annotated[int, Path(ge=1, le=ROW_ID_MAX, description="A row's id (1 to 2147483647)", examples=[2])]


def fields(raw: bytes | str, where: str = "form") -> list[tuple[str, str]]:
    """The (name, value) pairs of a url-encoded text, or an InputError saying which limit it passed."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if len(text.encode("utf-8")) > MAX_BODY:
        raise InputError(f"this {where} is over {MAX_BODY // 1024} KB: send only the {where}'s own fields")
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise InputError(f"this {where} has more than {MAX_FIELDS} fields: send only the {where}'s own "
                         "fields") from None
    for name, value in pairs:
        shown = name if name.isidentifier() and len(name) <= 40 else "field"
        label = shown.replace("_", " ") if shown != "field" else f"{where}'s field"
        if len(name) > MAX_FIELD or len(value) > MAX_FIELD and name not in TOKEN_FIELDS:
            raise InputError(f"the {label} is over {MAX_FIELD:,} characters: a field holds at most {MAX_FIELD:,}",
                             field=shown)
        if "\x00" in name or "\x00" in value:
            raise InputError(f"the {label} may not hold a NUL character (U+0000)", field=shown)
    return pairs


async def read_form(request: Request) -> dict[str, str]:
    """The request's url-encoded body as a dict (a repeated name: its last value), read with the limits."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise InputError(f"this form is over {MAX_BODY // 1024} KB: send only the form's own fields")
    return dict(fields(body))


def all_values(body: bytes, name: str) -> list[str]:
    """Every value of a repeated field (a form's checkboxes), read with the limits."""
    return [value for key, value in fields(body) if key == name]


def query(request: Request) -> dict[str, str]:
    """The query string as a dict, read with the limits (FormLimits has checked it already)."""
    return dict(fields(request.scope.get("query_string", b""), "address's query"))


def row_id(value: Any, field: str) -> int:
    """An id sent in a form: digits, 1 to ROW_ID_MAX, else an InputError."""
    text = str(value or "")
    if not (text.isascii() and text.isdigit() and len(text) <= 10 and 1 <= int(text) <= ROW_ID_MAX):
        raise InputError(f"the {field} must be an id from 1 to {ROW_ID_MAX}", field=field)
    return int(text)




class FormLimits:
    """The limits on every request's query string and url-encoded body, before any route (and any gate) runs.
    ``uploads``: paths whose body is a large file read by its own route (not a form)."""

    def __init__(self, app: Any, *, uploads: tuple[str, ...] = ()) -> None:
        self.app, self.uploads = app, frozenset(uploads)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"").split(b";")[0].strip().lower()
        is_form = content_type == FORM_TYPE.encode() and scope.get("path", "/") not in self.uploads
        try:
            fields(scope.get("query_string", b""), "address's query")
            body = await self._body(receive) if is_form else None
            if body is not None:
                fields(body)
        except (InputError, OverflowError) as error:
            await self._refuse(scope, receive, send, error)
            return
        except ConnectionAbortedError:  # the client went away before its body was whole
            return
        if body is None:
            await self.app(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    @staticmethod
    async def _body(receive: Receive) -> bytes:
        """The whole url-encoded body; OverflowError past MAX_BODY, ConnectionAbortedError when the client left."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise ConnectionAbortedError
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                raise OverflowError
            if not message.get("more_body", False):
                return bytes(body)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, error: Exception) -> None:
        """web/error_answers.py's answer (an InputError's 422), or 413 for a body past MAX_BODY; a page off the API."""
        if isinstance(error, OverflowError):
            answer = ErrorAnswer(413, f"request body too large: more than {MAX_BODY} bytes, and the limit for a form "
                                      f"is {MAX_BODY} bytes ({MAX_BODY // 1024} KB).")
        else:
            answer = answer_for(error, Request(scope))
        path = scope.get("path", "/")
        if path == "/api" or path.startswith("/api/"):
            await answer.json()(scope, receive, send)
            return
        await refusal(answer.status, answer.detail, as_json=False, title="This request was refused")(
            scope, receive, send)
