"""The lesson server: `create_app(token, data_dir)` builds the FastAPI app that `chainrule lesson` runs.

    app = create_app(token=new_token(), data_dir=None, port=8123)

Layers, outermost first: SecurityMiddleware (Host, Origin, token, body size; see security.py and
docs/security.md), then the HTML pages, the JSON API under /api and the static files under /static.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from chainrule import __version__
from chainrule.errors import InputError
from chainrule.lessons import LessonDataError, UnknownItemError, UnknownLessonError
from chainrule.web import routes_api, routes_jobs, routes_pages, routes_playground
from chainrule.web.security import DEFAULT_MAX_BODY, SecurityMiddleware
from chainrule.web.store_access import StoreAccess, StoreUnavailable

__all__ = ["create_app", "STATIC_DIR"]

STATIC_DIR = Path(__file__).parent / "static"


def _describe_validation(error: RequestValidationError) -> str:
    """One readable sentence per problem, named by its field as the page labels it: "c: Type a number ..."."""
    parts = []
    for problem in error.errors():
        names = [str(item) for item in problem.get("loc", ()) if item != "body"]
        where = names[-1] if names else ""
        message = str(problem.get("msg", "is not valid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or "the request is not valid"


def _problem_field(error: RequestValidationError) -> str | None:
    """The input the first problem is about (the last name in its location: "a" of values.a, "h"), if any."""
    for problem in error.errors():
        names = [item for item in problem.get("loc", ()) if isinstance(item, str) and item != "body"]
        if names:
            return names[-1]
    return None


def create_app(
    token: str,
    data_dir: str | os.PathLike | None = None,
    *,
    port: int | None = None,
    extra_hosts: Iterable[str] = (),
    max_body: int = DEFAULT_MAX_BODY,
    clock: Callable[[], Any] | None = None,
    store: Any = None,
    session_secret: str | None = None,
    services: StoreAccess | None = None,
    gate: Any = None,
    schemes: Iterable[str] = ("http",),
    routers: Iterable[Any] = (),
    body_limits: dict[str, int] | None = None,
) -> FastAPI:
    """The app, wrapped in its security middleware.

    token: the session token every API call must carry. data_dir: where the progress store lives
    (None: $CHAINRULE_DATA_DIR, else the user data directory). port: the port the server listens on
    (Host and Origin must name it; None accepts any port, for in-process tests). extra_hosts: Host
    names allowed besides loopback. clock/store: for tests (a fixed clock, an already open store).
    session_secret: the data folder's secret (web/session.py); signed-in browsers then stay signed in
    across restarts. None: the cookie is this start's token.
    Class mode (web/routes_class.py) passes its own services (each request: the signed-in account's
    store), the gate that signs accounts in instead of the token, the schemes its Origin may use, and
    its routers.
    """
    app = FastAPI(
        title="chainrule lesson API",
        version=__version__,
        description="The JSON API of the local lesson server. Every call needs the session token "
        "(cookie chainrule_token or header X-Chainrule-Token).",
        docs_url=None,  # the interactive docs page would load scripts from the internet
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.services = services or StoreAccess(data_dir, clock=clock, store=store)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _describe_validation(error), "field": _problem_field(error)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        detail = error.detail if isinstance(error.detail, str) else str(error.detail)
        if error.status_code == 404 and detail == "Not Found":
            detail = f"no such address: {request.url.path}"
        elif error.status_code == 400 and detail == "There was an error parsing the body":
            detail = "the request body cannot be read: send a JSON object encoded as UTF-8"
        elif error.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}"
        return JSONResponse({"detail": detail}, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(UnknownLessonError)
    @app.exception_handler(UnknownItemError)
    async def unknown(request: Request, error: LookupError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=404)

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(request: Request, error: StoreUnavailable) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=503)

    try:
        from chainrule.progress import StoreError
    except ImportError:  # pragma: no cover - the progress package is part of every build
        StoreError = None
    if StoreError is not None:

        @app.exception_handler(StoreError)
        async def store_error(request: Request, error: Exception) -> JSONResponse:
            return JSONResponse({"detail": str(error)}, status_code=503)

    @app.exception_handler(LessonDataError)
    async def broken_data(request: Request, error: LessonDataError) -> JSONResponse:
        return JSONResponse({"detail": f"the lesson data is broken: {error}"}, status_code=500)

    @app.exception_handler(InputError)
    async def bad_input(request: Request, error: InputError) -> JSONResponse:
        # What was sent cannot be used: say what and what is allowed, and at which field of the page.
        return JSONResponse({"detail": str(error), "field": error.field}, status_code=422)

    @app.exception_handler(Exception)
    async def bug(request: Request, error: Exception) -> JSONResponse:
        # Anything else is a fault of the server, not of what the learner typed: a 500 that says so, with
        # no internals (the traceback goes to the server's log).
        return JSONResponse({"detail": "the lesson server failed on this request (a bug in chainrule, not in "
                             "what you sent); the server's output has the details"}, status_code=500)

    for extra in routers:
        app.include_router(extra)
    app.include_router(routes_api.router)
    app.include_router(routes_jobs.router)
    app.include_router(routes_pages.router)
    app.include_router(routes_playground.router)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR), check_dir=False), name="static")

    from chainrule.web.session import cookie_value

    app.add_middleware(SecurityMiddleware, token=token, port=port, extra_hosts=list(extra_hosts), max_body=max_body,
                       cookie_value=cookie_value(session_secret) if session_secret else None, gate=gate,
                       schemes=schemes, body_limits=body_limits)
    return app
