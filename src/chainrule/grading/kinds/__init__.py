"""Kinds of test cases an exercise folder can ask for; the expected numbers of each come from the engine.

An exercise folder's exercise.json names one kind and lists its cases (only inputs, never answers).
The kinds, by module:

    graph_steps.py graph-values, graph-values-any-order, graph-grads
    lines.py       line-loss-grad, line-fit
    backward.py    neuron-params, expression-grads
    slopes.py      nudge-slopes, rule-slopes, chain-links
    training.py    neuron-step, neuron-train
    tangents.py    expression-jvp, jacobian
    gradients.py   nudge-gradient, rule-gradient, path-sum
    softmax.py     softmax, softmax-ce-grad, softmax-step
    engine_build.py engine-graph, engine-mlp, engine-train (the learner's own Value, network and training loop)

Each kind also recognises classic mistakes from the numbers a failing test produced (its `mistakes`);
docs/grading.md lists them all.
"""

from __future__ import annotations

from chainrule.grading.kinds.backward import BACKWARD_KINDS
from chainrule.grading.kinds.base import Attempt, CaseError, CaseKind, Mistake
from chainrule.grading.kinds.engine_build import ENGINE_BUILD_KINDS
from chainrule.grading.kinds.gradients import GRADIENT_KINDS
from chainrule.grading.kinds.graph_steps import GRAPH_KINDS
from chainrule.grading.kinds.lines import LINE_KINDS
from chainrule.grading.kinds.slopes import SLOPE_KINDS
from chainrule.grading.kinds.softmax import SOFTMAX_KINDS
from chainrule.grading.kinds.tangents import TANGENT_KINDS
from chainrule.grading.kinds.training import TRAINING_KINDS

__all__ = ["CASE_KINDS", "Attempt", "CaseError", "CaseKind", "Mistake", "describe_kinds", "kind_of"]

CASE_KINDS: dict[str, CaseKind] = {
    kind.name: kind for kind in (*GRAPH_KINDS, *LINE_KINDS, *BACKWARD_KINDS, *SLOPE_KINDS, *TRAINING_KINDS, *TANGENT_KINDS,
                 *GRADIENT_KINDS, *SOFTMAX_KINDS, *ENGINE_BUILD_KINDS)
}


def describe_kinds() -> str:
    return ", ".join(CASE_KINDS)


def kind_of(name: object) -> CaseKind:
    if not isinstance(name, str) or name not in CASE_KINDS:
        raise CaseError(f"unknown case kind {name!r}; the kinds are: {describe_kinds()}")
    return CASE_KINDS[name]
