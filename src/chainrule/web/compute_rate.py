"""The one rate for work a learner can repeat that costs CPU (issue 42): a token bucket per signed-in learner.

    @router.post("/playground", dependencies=[COMPUTE], responses=TOO_FAST)

A route that runs the engine or the grader on request (a driven plot, the playground, Explore, a graded run, a
regrade) declares COMPUTE. Each such request takes one token from its account's bucket, which holds at most
BURST and refills PER_MINUTE a minute; an empty bucket answers 429 with Retry-After (the seconds until the next
token) in the project's error shape (web/error_answers.py: ClassError "rate-limited"), before any work is done.
The functions that do the work are marked ``costs_cpu`` (chainrule/compute_cost.py): a route that reaches one
without declaring COMPUTE fails, so a new compute route cannot forget the rate.

Class mode only: `chainrule lesson` has one learner on their own machine, whose CPU it is. The buckets live in
the server's memory (a restart fills them); at most MAX_BUCKETS are kept, and a full one is forgotten first.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import Depends, Request
from fastapi.routing import APIRoute

from chainrule.classes.accounts import ClassError
from chainrule.compute_cost import charge, request_scope
from chainrule.number_text import count_text
from chainrule.web.app_state import app_state
from chainrule.web.models import ErrorBody
from chainrule.web.rate_buckets import BURST, PER_MINUTE, ComputeRate
from chainrule.web.roles import anyone, routes_of

__all__ = ["BURST", "PER_MINUTE", "COMPUTE", "TOO_FAST", "ComputeRate", "ComputeScope", "charge_compute",
           "compute_routes"]

TOO_FAST: dict[int | str, dict[str, Any]] = {
    429: {"model": ErrorBody, "description": "Too many computed answers from this learner lately: wait Retry-After "
                                             "seconds (class mode; web/compute_rate.py)."}}


def charge_compute(request: Request) -> None:
    """COMPUTE: one token of the signed-in learner's bucket, or ClassError "rate-limited" (429, Retry-After)."""
    state = app_state(request)
    account = anyone(request)
    if state.class_mode and account is not None:
        rate = state.compute_rate
        wait = rate.take(account.id)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise ClassError(f"you asked the server to compute more than {count_text(rate.burst, 'time')} in a short "
                             f"while, more than it can do for everyone at once: try again in "
                             f"{count_text(seconds, 'second')}", kind="rate-limited", retry_after=wait)
    charge()


COMPUTE = Depends(charge_compute)


def compute_routes(routes: Any) -> list[APIRoute]:
    """The routes of an app (``app.routes``, included routers walked) that declare COMPUTE."""
    return [route for route in routes_of(routes) if isinstance(route, APIRoute)
            and any(dependency.call is charge_compute for dependency in route.dependant.dependencies)]


class ComputeScope:
    """The app's layer that gives each request its mark (compute_cost.request_scope), which COMPUTE sets."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with request_scope():
            await self.app(scope, receive, send)
