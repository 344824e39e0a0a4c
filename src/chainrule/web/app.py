"""The lesson server: `create_app(token, data_dir)` builds the FastAPI app that `chainrule lesson` runs.

    app = create_app(token=new_token(), data_dir=None, port=8123)

Layers, outermost first: the security layers (headers, Host, Origin, token or class mode's gate, body
size; security.py and docs/security.md), then the HTML pages, the JSON API under /api and the static
files under /static. Every error becomes its answer in web/error_answers.py.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from fastapi import FastAPI

from chainrule import __version__
from chainrule.lessons import register_exercises
from chainrule.web import routes_api, routes_driven, routes_jobs, routes_pages, routes_playground
from chainrule.web.app_state import DEFAULTS, install
from chainrule.web.compute_rate import ComputeRate, ComputeScope
from chainrule.web.error_answers import install_error_handlers
from chainrule.web.security import DEFAULT_MAX_BODY, LOOPBACK_HOSTS, AllowedHosts, TokenGate, add_security_layers
from chainrule.web.static_files import STATIC_DIR, StaticFilesApp
from chainrule.web.store_access import StoreAccess

__all__ = ["create_app", "STATIC_DIR"]


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
    gate: tuple[type, dict[str, Any]] | None = None,
    public: tuple[str, int] | None = None,
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
    store), the gate that signs accounts in instead of the token (ClassGate and its options), the public
    (host, port) of its --url, the schemes its Origin may use, and its routers.
    """
    register_exercises()  # the pages offer the lessons' exercises, graded by id
    app = FastAPI(
        title="chainrule lesson API",
        version=__version__,
        description="The JSON API of the local lesson server. Every call needs the session token "
        "(cookie chainrule_token or header X-Chainrule-Token).",
        docs_url=None,  # the interactive docs page would load scripts from the internet
        redoc_url=None,
        openapi_url=None,  # served by routes_api (/api/openapi.json), a route with its role like every other
    )
    install(app, **(DEFAULTS | {"services": services or StoreAccess(data_dir, clock=clock, store=store),
                                "class_mode": gate is not None, "regrade_tasks": set(),
                                "compute_rate": ComputeRate()}))  # web/app_state.py: what the routes read, named once

    install_error_handlers(app)  # web/error_answers.py: every error's status and body, in one place

    for extra in routers:
        app.include_router(extra)
    app.include_router(routes_api.router)
    app.include_router(routes_jobs.router)
    app.include_router(routes_pages.router)
    app.include_router(routes_playground.router)
    app.include_router(routes_driven.router)
    app.mount("/static", StaticFilesApp(), name="static")  # web/static_files.py: fingerprinted, compressed
    app.add_middleware(ComputeScope)  # web/compute_rate.py: work that costs CPU runs only on a COMPUTE route

    from chainrule.web.session import cookie_value

    if gate is None:
        gate = (TokenGate, {"token": token, "port": port,
                            "cookie_value": cookie_value(session_secret) if session_secret else None})
    add_security_layers(app, hosts=AllowedHosts(LOOPBACK_HOSTS | set(extra_hosts), port, public=public),
                        gate=gate, schemes=schemes, max_body=max_body, body_limits=body_limits)
    return app
