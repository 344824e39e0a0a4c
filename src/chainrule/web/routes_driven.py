"""Driven plots (chainrule.lessons.plot_driven): GET /api/lessons/{id}/driven lists a lesson's, with the
stops of their sliders; POST /api/lessons/{id}/driven/{name} computes one for the controls' values. A
thin face: the numbers are the engine's, every one with its text (web/page_numbers.py); a value out of
its control's limits is a 422 that says what is allowed."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from chainrule.lessons import UnknownItemError
from chainrule.lessons.loader import check_lesson_id, lesson_folder
from chainrule.lessons.plot_driven import drive, driven_plots, read_driven
from chainrule.number_text import with_number_texts
from chainrule.web.compute_rate import COMPUTE, TOO_FAST
from chainrule.web.models import Open, Text
from chainrule.web.page_numbers import estimate_text, number_text
from chainrule.web.roles import LEARNER
from chainrule.web.routes_api import ERRORS

router = APIRouter(prefix="/api", responses=ERRORS, dependencies=[LEARNER])  # a learner's (web/roles.py)

LessonId = Annotated[str, Path(description="A lesson id", examples=["gradient-descent-linear-regression"])]
PlotName = Annotated[str, Path(description="A driven plot's name in the lesson's driven.json",
                               examples=["descent", "moons", "nudge"])]


def _json_number(value: Any) -> Any:
    """A slider's value travels as a JSON number: text and true/false are refused, saying so."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("a control's value is a JSON number, such as 0.05 (not text, not true or false)")
    return value


ControlValue = Annotated[float, BeforeValidator(_json_number)]


class DrivenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    values: dict[Annotated[Text, Field(max_length=20)], ControlValue] = Field(
        default_factory=dict, max_length=10, examples=[{"lr": 0.05}],
        description="{control: number} (a JSON number, never text); a control left out keeps its start")


class DrivenListOut(Open):
    plots: list[dict[str, Any]]


class DrivenOut(Open):
    kind: str
    name: str
    chosen: dict[str, Any]


@router.get("/lessons/{lesson_id}/driven", response_model=DrivenListOut,
            summary="A lesson's driven plots and the stops of their sliders")
def get_driven(lesson_id: LessonId) -> dict[str, Any]:
    check_lesson_id(lesson_id)
    plots = driven_plots(lesson_folder(lesson_id))
    for plot in plots:
        for control in plot["controls"]:
            control |= {"values_text": [number_text(v) for v in control["values"]], "start_text": number_text(control["start"])}
    return {"plots": plots}


@router.post("/lessons/{lesson_id}/driven/{name}", response_model=DrivenOut, dependencies=[COMPUTE], responses=TOO_FAST,
             summary="Compute a driven plot for the controls' values (the engine runs it on request)")
def post_driven(lesson_id: LessonId, name: PlotName, body: DrivenIn) -> dict[str, Any]:
    check_lesson_id(lesson_id)
    specs = {spec["name"]: spec for spec in read_driven(lesson_folder(lesson_id)) or []}
    if name not in specs:
        raise UnknownItemError(f"lesson {lesson_id!r} has no driven plot {name!r}: its driven plots are "
                               f"{', '.join(specs) or 'none'}")
    return _with_texts(drive(specs[name], body.values))


def _with_texts(plot: dict[str, Any]) -> dict[str, Any]:
    """Every number the page shows with its text; a nudge estimate never reads as exact when it is not
    (estimate_text), and the contour map's levels each with theirs."""
    texts: dict[str, Any] = with_number_texts(plot)
    if plot["kind"] == "slope":
        def estimate(row: dict[str, Any], shown: dict[str, Any]) -> dict[str, Any]:
            return shown | {"ratio_text": estimate_text(row["ratio"], plot["slope"])}
        texts["chosen_nudge"] = estimate(plot["chosen_nudge"], texts["chosen_nudge"])
        texts["nudges"] = [estimate(row, shown) for row, shown in zip(plot["nudges"], texts["nudges"])]
    if plot["kind"] == "descent":
        texts["surface"]["levels_text"] = [number_text(level) for level in plot["surface"]["levels"]]
    return texts
