"""Gradient checkpointing (`func.checkpoint`, issue 45 item 3): a segment kept as one node and made again when
its gradient arrives gives PyTorch's gradient of the whole chain (first and second order, through every
transform and compiled replay) while the graph kept is the segments' nodes only. docs/performance.md has the
measured memory on a 10^6-node chain (benchmarks/bench_checkpoint.py)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import chainrule
from chainrule import Value, func
from reference_torch import needs_torch, torch


def piece(v, steps: int = 50):
    for _ in range(steps):
        v = (v * 0.999).sin() + v * 0.01
    return v


def torch_chain(t, segments: int):
    for _ in range(segments * 50):
        t = torch.sin(t * 0.999) + t * 0.01
    return t


@needs_torch
def test_a_checkpointed_chain_has_pytorchs_gradient_and_second_derivative() -> None:
    cut = func.checkpoint(piece)
    chain = lambda x: cut(cut(cut(x)))  # noqa: E731
    t = torch.tensor(0.7, dtype=torch.float64)
    first = torch.func.grad(lambda s: torch_chain(s, 3))(t).item()
    second = torch.func.hessian(lambda s: torch_chain(s, 3))(t).item()
    assert func.grad(chain)(0.7) == pytest.approx(first, rel=1e-12)
    assert func.jacrev(chain)(0.7) == pytest.approx(first, rel=1e-12)
    assert func.jvp(chain, (0.7,), (1.0,))[1] == pytest.approx(first, rel=1e-12)
    assert func.hessian(chain)(0.7) == pytest.approx(second, rel=1e-10)
    x = Value(0.7)
    chain(x).backward()
    assert x.grad == pytest.approx(first, rel=1e-12)
    p = Value(1.0)
    values, grads = chainrule.compile(lambda s: cut(s * p), [p]).value_and_grad(np.array([0.7]))
    one = torch.func.grad(lambda q: torch_chain(0.7 * q, 1))(torch.tensor(1.0, dtype=torch.float64)).item()
    assert values[0] == pytest.approx(torch_chain(t, 1).item(), rel=1e-13)
    assert grads[0] == pytest.approx(one, rel=1e-12)


def _peak(build) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        x = Value(0.3)
        build(x).backward()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_checkpointed_chain_keeps_a_small_part_of_the_graph() -> None:
    cut = func.checkpoint(piece)
    segments = 100  # 100 segments of 150 nodes: 15,000 nodes whole
    whole = _peak(lambda x: [x := piece(x) for _ in range(segments)][-1])
    kept = _peak(lambda x: [x := cut(x) for _ in range(segments)][-1])
    assert kept * 10 < whole, (kept, whole)
