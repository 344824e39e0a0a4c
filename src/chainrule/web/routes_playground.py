"""The playground: its page (/playground) and its one API call (POST /api/playground), a thin face over
chainrule.lessons.playground. A problem with the input is a 422 whose "problems" name each field (and,
in the expression, the column), so that the page can say it where it belongs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, Strict

from chainrule.expr import MAX_LENGTH
from chainrule.lessons.playground import EXAMPLE, run_playground
from chainrule.web.compute_rate import COMPUTE, TOO_FAST
from chainrule.web.models import Open, Text, error_answer
from chainrule.web.roles import LEARNER
from chainrule.web.routes_api import ERRORS
from chainrule.web.routes_pages import render

router = APIRouter(dependencies=[LEARNER])  # the page and its API: a learner's (web/roles.py)

# Typed numbers travel as text so that the server reads them (one rule, one message); a program may
# send a JSON number too.
TypedNumber = Text | Annotated[float, Strict()]  # strict: true is not 1


class PlaygroundNudgeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: Text = Field(max_length=100, description="The name to move, e.g. x")
    h: TypedNumber = Field(description="How far to move it, as typed (1e-6 <= |h| <= 1)", examples=["0.01"])


class PlaygroundIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expression: Text = Field(EXAMPLE, max_length=MAX_LENGTH, examples=[EXAMPLE],
                             description="An expression of chainrule.expr (without one: the page's first example)")
    values: dict[Text, TypedNumber] = Field(default_factory=dict, max_length=100,
                                            description="{name: number as typed}; a name without one starts at a default")
    seed: Text | None = Field(None, max_length=100, description="The input the forward-mode sweep differentiates by")
    nudge: PlaygroundNudgeIn | None = None


class PlaygroundOut(Open):
    expression: str
    names: list[str]
    values: list[dict[str, Any]]
    seed: str | None
    trace: dict[str, Any] = Field(description="The step trace (docs/trace.md) with its layout and display texts")
    sweeps: dict[str, Any] | None = Field(description="Forward-mode tangents beside reverse-mode gradients")
    nudge: dict[str, Any] | None
    repeats: list[list[str]] = Field(
        default_factory=list, description="Node ids that compute the same thing: the engine builds each written copy anew")


@router.get("/playground", response_class=HTMLResponse, include_in_schema=False)
def playground_page(request: Request) -> HTMLResponse:
    return render(request, "playground.html", "Playground")


@router.post(
    "/api/playground", response_model=PlaygroundOut, tags=["playground"], dependencies=[COMPUTE],
    responses=ERRORS | TOO_FAST | {422: error_answer("A problem with the input, by field (its problems).")},
    summary="Run your own expression: its trace, forward- and reverse-mode sweeps, and a nudge",
)
def post_playground(body: PlaygroundIn) -> Any:
    nudge = (body.nudge.input, body.nudge.h) if body.nudge else None
    return run_playground(body.expression, body.values, body.seed, nudge)  # a PlaygroundError is an InputError: 422
