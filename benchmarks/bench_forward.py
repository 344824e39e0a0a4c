"""Forward mode against reverse mode: which wins depends on the shape of the Jacobian.

Two functions, each differentiated completely (every output with respect to every input):
  few inputs, many outputs   x -> a shared trunk of DEPTH tanh layers -> WIDTH outputs (trunk * w_i).tanh()
                             forward: one `chainrule.jvp` sweep; reverse: one `chainrule.grad` per output
  many inputs, one output    WIDTH inputs -> a chain over their sum of products -> one output
                             forward: one `jvp` per input direction; reverse: one `grad` for all inputs
Each timing is the median CPU time (time.process_time) of --repeats runs, building the graph included,
collected before each run so each arm pays for its own garbage; torch is never imported.
Run: python benchmarks/bench_forward.py [--width 100] [--depth 100] [--repeats 7]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time
from typing import Callable

import chainrule
from chainrule import Value


def few_to_many(width: int, depth: int) -> Callable[[Value], list[Value]]:
    def f(x: Value) -> list[Value]:
        h = x
        for _ in range(depth):
            h = (h * 0.9 + 0.1).tanh()
        return [(h * (0.5 + k / width)).tanh() for k in range(width)]
    return f


def many_to_one(depth: int) -> Callable[..., Value]:
    def f(*xs: Value) -> Value:
        total = xs[0] * xs[-1]
        for a, b in zip(xs, xs[1:]):
            total = total + a * b
        for _ in range(depth):
            total = (total * 0.5).tanh()
        return total
    return f


def median_cpu(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def jacobian_forward(f, point: list[float], outputs: int) -> list[list[float]]:
    """Column by column: one jvp per input direction."""
    columns = []
    for i in range(len(point)):
        direction = [1.0 if j == i else 0.0 for j in range(len(point))]
        _, derivatives = chainrule.jvp(f, point, direction)
        columns.append(list(derivatives) if isinstance(derivatives, tuple) else [derivatives])
    return [[columns[i][k] for i in range(len(point))] for k in range(outputs)]


def jacobian_reverse(f, point: list[float]) -> list[list[float]]:
    """Row by row: one grad per output, over the one graph."""
    leaves = [Value(x) for x in point]
    result = f(*leaves)
    outputs = result if isinstance(result, list) else [result]
    return [[g.data for g in chainrule.grad(out, leaves)] for out in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    cases = [
        (f"1 input -> {args.width} outputs (trunk {args.depth} deep)", few_to_many(args.width, args.depth), [0.3]),
        (f"{args.width} inputs -> 1 output (chain {args.depth} deep)", many_to_one(args.depth),
         [math.sin(k) for k in range(args.width)]),
    ]
    print("| full Jacobian | forward mode (jvp) | reverse mode (grad) | reverse / forward |")
    print("|---|---|---|---|")
    for label, f, point in cases:
        rows = len(f(*[Value(x) for x in point])) if label.startswith("1 input") else 1
        forward = jacobian_forward(f, point, rows)
        reverse = jacobian_reverse(f, point)
        worst = max(abs(a - b) / max(abs(b), 1e-300) for ra, rb in zip(forward, reverse) for a, b in zip(ra, rb))
        assert worst < 1e-12, f"forward and reverse disagree by {worst:g}"
        t_forward = median_cpu(lambda: jacobian_forward(f, point, rows), args.repeats)
        t_reverse = median_cpu(lambda: jacobian_reverse(f, point), args.repeats)
        print(f"| {label} | {t_forward * 1e3:.1f} ms | {t_reverse * 1e3:.1f} ms | {t_reverse / t_forward:.2f} |")


if __name__ == "__main__":
    main()
