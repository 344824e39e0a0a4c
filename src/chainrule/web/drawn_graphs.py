"""The learner's own graph, drawn: a passing test that carries the graph the learner's engine built ("graph":
{"nodes": [...]}, walked through their `_prev` and `_op` and checked by the grader, grading/kinds/engine_build.py)
gets "drawing" beside it, the trace and layout graph.js renders (chainrule.drawing.walked_trace and
upright_layout). What is not a graph the page can draw (malformed, too large, a text that is no number's) gets
no drawing; the rest of the result is unchanged."""

from __future__ import annotations

from typing import Any

__all__ = ["with_drawn_graphs"]


def with_drawn_graphs(result: dict[str, Any]) -> dict[str, Any]:
    """A graded result as the page gets it, with a "drawing" in each passing test that carries a graph."""
    tests = result.get("tests")
    if not isinstance(tests, list) or not any(isinstance(test, dict) and "graph" in test for test in tests):
        return result
    return result | {"tests": [_drawn(test) if isinstance(test, dict) else test for test in tests]}


def _drawn(test: dict[str, Any]) -> dict[str, Any]:
    from chainrule.drawing import upright_layout, walked_trace
    from chainrule.grading.kinds.engine_build import MOST_DRAWN

    graph = test.get("graph")
    if test.get("status") != "pass" or not isinstance(graph, dict):
        return test
    trace = walked_trace(graph.get("nodes"), MOST_DRAWN)
    return test if trace is None else test | {"drawing": trace | {"layout": upright_layout(trace)}}
