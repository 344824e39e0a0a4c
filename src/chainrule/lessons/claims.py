"""A lesson's factual claims, checked by the engine: `claims.json` beside lesson.json (optional).

Prose fills its numbers from placeholders, but a sentence can still state a fact about those numbers
("only the second hidden layer goes dark", "x's gradient is the second derivative"). Such a sentence is
written down as a claim, and `chainrule lessons check` recomputes it:

    {"claims": [
      {"id": "second-layer-dark",
       "file": "sections/03-see-it-work.md",
       "sentence": "every neuron of the second hidden layer outputs",
       "value": {"check": "relu_firing", "run": "large", "layer": 2},
       "expect": 0},
      {"id": "x-grad-is-second-derivative",
       "file": "sections/04-predict.md",
       "sentence": "is the second derivative",
       "value": {"number": "dual.x.grad"},
       "expect": {"expression": "tanh(x) + x*(1 - tanh(x)**2)", "given": {"x": 0.5}, "wrt": "x"},
       "tolerance": 1e-9}
    ]}

`sentence` is a piece of the claim's sentence, quoted exactly (line breaks and runs of spaces count as
one space) from `file`, a file of the lesson folder: a claim whose sentence is gone fails, so a
sentence cannot be rewritten without its check. `value` and `expect` are each one engine number:

- `{"number": "point.w1.grad"}`: a number the lesson's placeholders know (a graph's value or gradient,
  a plot's field, `lesson.tolerance`);
- `{"expression": "relu(1 - y*s)", "given": {"y": 1, "s": 0.25}, "wrt": "s"}`: an expression of the
  engine's language (`chainrule.expr`), its value, or its gradient with respect to `wrt`;
- `{"check": NAME, ...}`: a named check (`CHECKS` below), with its arguments.

`expect` may also be a plain number. The claim holds when the two are within `tolerance` (default 1e-9,
relative or absolute); with `"relation": "<"` or `">"` when the value is below or above the expected by
more than that. A false claim is reported with its sentence, the engine's number and the expected.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from chainrule.lessons.text import LessonDataError, inside_lesson

if TYPE_CHECKING:
    from chainrule.nn import MLP

__all__ = ["CHECKS", "CLAIMS_FILE", "claim_problems"]

CLAIMS_FILE = "claims.json"
DEFAULT_TOLERANCE = 1e-9
_CLAIM_FIELDS = {"id", "file", "sentence", "value", "relation", "expect", "tolerance"}
# How a value may stand to the expected: equal within the tolerance (the default), or beyond it on one side.
RELATIONS = {
    "=": ("equal to", lambda a, b, tol: math.isclose(a, b, rel_tol=tol, abs_tol=tol)),
    "<": ("below", lambda a, b, tol: a < b and not math.isclose(a, b, rel_tol=tol, abs_tol=tol)),
    ">": ("above", lambda a, b, tol: a > b and not math.isclose(a, b, rel_tol=tol, abs_tol=tol)),
}


def _boundary_run(plot_spec: dict[str, Any], run_name: object) -> tuple[MLP, list[tuple[float, float]], list[int]]:
    """The model of the boundary plot's run `run_name`, trained again exactly as the page's plot, with
    the plot's points and labels."""
    from chainrule.datasets import moons
    from chainrule.lessons.plot_boundary import train_run

    if not isinstance(plot_spec, dict) or plot_spec.get("kind") != "boundary":
        raise LessonDataError("this check reads a boundary plot (see_it_work.plot with kind \"boundary\")")
    run = next((r for r in plot_spec.get("runs", []) if isinstance(r, dict) and r.get("name") == run_name), None)
    if run is None:
        raise LessonDataError(f"the boundary plot has no run {run_name!r}")
    points, labels = moons(plot_spec["samples"], plot_spec.get("noise", 0.1), plot_spec.get("seed", 0))
    model, _ = train_run(points, labels, run["sizes"], run.get("activation", "relu"), float(run["lr"]),
                         run["steps"], plot_spec.get("seed", 0))
    return model, points, labels


def _hidden_outputs(model: MLP, point: Sequence[float]) -> list[list[float]]:
    """Every hidden layer's outputs for one point (the last layer, the score, left out)."""
    values, layers = list(point), []
    for layer in model.layers:
        values = [v.data for v in layer(values)]
        layers.append(values)
    return layers[:-1]


def relu_firing(plot_spec: dict[str, Any], args: dict[str, Any]) -> float:
    """How many neurons of hidden layer `layer` (1 is the first) output more than 0 for at least one point
    of the data set, after the boundary plot's run `run`."""
    model, points, _ = _boundary_run(plot_spec, args.get("run"))
    layer = args.get("layer")
    hidden = len(model.layers) - 1
    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= hidden:
        raise LessonDataError(f"layer must be a hidden layer, 1 to {hidden}, not {layer!r}")
    firing: set[int] = set()
    for point in points:
        outputs = _hidden_outputs(model, point)[layer - 1]
        firing.update(k for k, out in enumerate(outputs) if out > 0.0)
    return float(len(firing))


def distinct_scores(plot_spec: dict[str, Any], args: dict[str, Any]) -> float:
    """How many different scores the model gives the data's points after the run `run`."""
    model, points, _ = _boundary_run(plot_spec, args.get("run"))
    return float(len({model(list(point))[0].data for point in points}))


def largest_gradient(plot_spec: dict[str, Any], args: dict[str, Any]) -> float:
    """The largest size |dL/dp| of any parameter's gradient of the mean loss after the run `run`."""
    from chainrule.losses import max_margin

    model, points, labels = _boundary_run(plot_spec, args.get("run"))
    loss = max_margin([model(list(point))[0] for point in points], labels)
    model.zero_grad()
    loss.backward()
    return max(abs(p.grad) for p in model.parameters())


# The named checks: NAME -> function(the lesson's see_it_work.plot, the value spec) -> number.
CHECKS: dict[str, Callable[[dict[str, Any], dict[str, Any]], float]] = {
    "relu_firing": relu_firing,
    "distinct_scores": distinct_scores,
    "largest_gradient": largest_gradient,
}


def _expression_value(spec: dict[str, Any]) -> float:
    from chainrule.expr import ExpressionError, parse

    given = spec.get("given", {})
    if not isinstance(given, dict):
        raise LessonDataError("given must map names to numbers")
    try:
        expression = parse(spec["expression"])
        output, leaves = expression.build({name: float(given[name]) for name in expression.names})
    except KeyError as error:
        raise LessonDataError(f"the expression's name {error} has no number in given") from None
    except (ExpressionError, TypeError, ValueError) as error:
        raise LessonDataError(f"expression: {error}") from None
    wrt = spec.get("wrt")
    if wrt is None:
        return output.data
    if wrt not in leaves:
        raise LessonDataError(f"wrt names {wrt!r}, which is not a name of the expression")
    output.backward()
    return leaves[wrt].grad


def _engine_number(spec: Any, resolve: Callable, plot_spec: Any) -> float:
    """One side of a claim as the engine computes it (see the module's docstring)."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return float(spec)
    if not isinstance(spec, dict) or len({"number", "expression", "check"} & set(spec)) != 1:
        raise LessonDataError('a value is a number, {"number": NAME}, {"expression": TEXT, "given": {...}, '
                              f'"wrt"?}} or {{"check": one of {", ".join(CHECKS)}, ...}}; not {spec!r}')
    if "number" in spec:
        try:
            value = resolve(str(spec["number"]).split("."))
        except (KeyError, IndexError, LessonDataError):
            raise LessonDataError(f"{spec['number']!r} is no number of the lesson (as a placeholder names it)") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LessonDataError(f"{spec['number']!r} is not a number")
        return float(value)
    if "expression" in spec:
        return _expression_value(spec)
    check = CHECKS.get(spec["check"])
    if check is None:
        raise LessonDataError(f"no check {spec['check']!r}: the checks are {', '.join(CHECKS)}")
    return check(plot_spec, spec)


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _sentence_line(text: str, sentence: str) -> int | None:
    """The line of `text` where `sentence` (spaces loose) starts, None when it is not there."""
    pattern = r"\s+".join(re.escape(word) for word in sentence.split())
    found = re.search(pattern, text) if pattern else None
    return text.count("\n", 0, found.start()) + 1 if found else None


def claim_problems(folder: Path, data: dict[str, Any], resolve: Callable, add: Callable[..., None]) -> None:
    """Check the folder's claims.json (if any); `add(path, message, line=...)` records each problem."""
    path = folder / CLAIMS_FILE
    if not path.exists():
        return
    try:
        claims = json.loads(path.read_text(encoding="utf-8")).get("claims")
    except (OSError, ValueError, AttributeError) as error:
        add(path, f"must be a JSON object {{\"claims\": [...]}} ({error})", line=1)
        return
    if not isinstance(claims, list):
        add(path, 'must hold {"claims": [...]}, a list of claims', line=1)
        return
    plot_spec = (data.get("see_it_work") or {}).get("plot")
    text = path.read_text(encoding="utf-8")
    seen: set[str] = set()
    for claim in claims:
        cid = claim.get("id") if isinstance(claim, dict) else None
        line = _sentence_line(text, f'"id": "{cid}"') if isinstance(cid, str) else None
        if not isinstance(cid, str) or not cid or cid in seen:
            add(path, f"every claim needs an id of its own, not {cid!r}", line=line)
            continue
        seen.add(cid)
        unknown = set(claim) - _CLAIM_FIELDS
        if unknown or not {"file", "sentence", "value", "expect"} <= set(claim):
            add(path, f"claim {cid!r}: a claim holds id, file, sentence, value, expect and optionally relation, tolerance"
                      f"{'; unknown: ' + ', '.join(sorted(unknown)) if unknown else ''}", line=line)
            continue
        try:
            source = inside_lesson(folder, str(claim["file"]))
            source_text = source.read_text(encoding="utf-8")
        except (LessonDataError, OSError, ValueError) as error:
            add(path, f"claim {cid!r}: its file {claim['file']!r} cannot be read ({error})", line=line)
            continue
        sentence = str(claim["sentence"])
        at = _sentence_line(source_text, sentence) if sentence.strip() else None
        if at is None:
            add(path, f"claim {cid!r}: the sentence {_spaced(sentence)!r} is not in {claim['file']}: a claim quotes "
                      "the sentence it checks, so change the two together", line=line)
            continue
        tolerance = claim.get("tolerance", DEFAULT_TOLERANCE)
        try:
            if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
                raise LessonDataError(f"tolerance must be a number of at least 0, not {tolerance!r}")
            actual = _engine_number(claim["value"], resolve, plot_spec)
            expected = _engine_number(claim["expect"], resolve, plot_spec)
        except (LessonDataError, ArithmeticError) as error:
            add(path, f"claim {cid!r}: {error}", line=line)
            continue
        relation = claim.get("relation", "=")
        if relation not in RELATIONS:
            add(path, f"claim {cid!r}: relation must be one of {', '.join(RELATIONS)}, not {relation!r}", line=line)
            continue
        words, holds = RELATIONS[relation]
        if not (math.isfinite(actual) and holds(actual, expected, tolerance)):
            add(source, f"claim {cid!r} is false: \"{_spaced(sentence)}\": the engine gives {actual!r}, the claim "
                        f"expects a number {words} {expected!r} (tolerance {tolerance:g})", line=at)
