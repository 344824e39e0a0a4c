"""Work that costs CPU on request, marked where it is done, so that no route can run it uncharged.

    @costs_cpu
    def drive(spec, values): ...                 # the engine's work a learner can ask for again and again

    with request_scope():                         # the web app, around every request (web/compute_rate.py)
        charge()                                  # what the route's COMPUTE dependency does once it admitted it
        drive(spec, values)                       # fine; without charge() it raises UnchargedCompute

Inside a web request, a function marked ``costs_cpu`` runs only when the request was charged to the learner's
rate (web/compute_rate.py's COMPUTE, declared on the route). A route that calls one without declaring COMPUTE
fails with UnchargedCompute the first time it runs (a 500 and a logged traceback: a bug of the route), so a new
compute route cannot ship without the rate. Outside a web request (the CLI, a worker, `lessons check`) nothing is
checked. This module imports nothing of chainrule.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

__all__ = ["COSTLY", "UnchargedCompute", "charge", "costs_cpu", "request_scope"]

F = TypeVar("F", bound=Callable[..., Any])


class _Scope:
    """One request's mark: charged once the rate admitted it. A mutable object, so that a dependency run in a
    worker thread (which sees a copy of the context) marks the request the route's own thread sees."""

    charged = False


_REQUEST: ContextVar[_Scope | None] = ContextVar("chainrule_compute_scope", default=None)
COSTLY: list[str] = []  # the marked functions' names, for the docs and tests


class UnchargedCompute(RuntimeError):
    """A route ran work marked costs_cpu without declaring COMPUTE (web/compute_rate.py): a bug of the route."""


@contextmanager
def request_scope() -> Iterator[None]:
    token = _REQUEST.set(_Scope())
    try:
        yield
    finally:
        _REQUEST.reset(token)


def charge() -> None:
    """Mark the current request as charged to a learner's rate."""
    scope = _REQUEST.get()
    if scope is not None:
        scope.charged = True


def _check(name: str) -> None:
    scope = _REQUEST.get()
    if scope is not None and not scope.charged:
        raise UnchargedCompute(f"{name} costs CPU on request, and this route does not declare COMPUTE "
                               "(chainrule.web.compute_rate): add dependencies=[COMPUTE] to the route")


def costs_cpu(function: F) -> F:
    """Mark `function` (plain or async) as work that costs CPU on request."""
    name = f"{function.__module__}.{function.__qualname__}"
    COSTLY.append(name)
    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def checked_async(*args: Any, **kwargs: Any) -> Any:
            _check(name)
            return await function(*args, **kwargs)
        return checked_async  # type: ignore[return-value]  # wraps keeps F's signature; mypy sees a new one

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        _check(name)
        return function(*args, **kwargs)
    return checked  # type: ignore[return-value]  # wraps keeps F's signature; mypy sees a new one
