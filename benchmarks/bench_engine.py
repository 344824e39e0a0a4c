"""Engine speed and memory, side by side in one process: chainrule vs micrograd 0.1.0 vs PyTorch (0-d float64),
and chainrule.micrograd (the drop-in that keeps micrograd's closures) for what switching only the import gives.

Workloads (forward + backward each):
  chain   a chain of (x * w).tanh() N long (default 10^4)
  sum     a sum of M products x_i * w_i (default 10^5), summed left to right
  memory  bytes per op node, measured with tracemalloc while a 10^5-node chain is alive
  deep    a 10^6-deep chain through chainrule alone (micrograd's recursive walk cannot do this)

micrograd's backward builds its topological order by recursion, so we raise the recursion limit for it
(and say so in the output). Its garbage collector is left on, as users run it. Each timing is the median
of --repeats runs. Run: python benchmarks/bench_engine.py [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from typing import Callable

import chainrule
import chainrule.micrograd.engine as dropin

try:
    import micrograd.engine as mg
except ImportError:  # pragma: no cover
    mg = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _give_micrograd_tanh() -> None:
    """micrograd 0.1.0 ships relu but no tanh; add one in its own style (a closure per node)."""
    if mg is None or hasattr(mg.Value, "tanh"):
        return
    import math

    def tanh(self):
        t = math.tanh(self.data)
        out = mg.Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    mg.Value.tanh = tanh


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def chain(make, n: int) -> Callable[[], object]:
    def run():
        x, w = make(0.5), make(0.9)
        out = x
        for _ in range(n):
            out = (out * w).tanh()
        out.backward()
        return out
    return run


def sum_of_products(make, m: int) -> Callable[[], object]:
    xs = [0.001 * (i % 97) for i in range(m)]
    ws = [0.002 * (i % 89) - 0.05 for i in range(m)]

    def run():
        total = make(0.0)
        for x, w in zip(xs, ws):
            total = total + make(x) * make(w)
        total.backward()
        return total
    return run


def torch_scalar(x: float):
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def torch_chain(n: int) -> Callable[[], object]:
    def run():
        x, w = torch_scalar(0.5), torch_scalar(0.9)
        out = x
        for _ in range(n):
            out = (out * w).tanh()
        out.backward()
        return out
    return run


def bytes_per_node(make, n: int = 100_000) -> float:
    """Memory held by a chain of n multiplications (2 interior nodes per step: mul and add)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    x, w = make(0.5), make(0.9)
    out = x
    for _ in range(n):
        out = out * w + x
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    keep = out  # noqa: F841  (alive while measured)
    return (after - before) / (2 * n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    n_chain, m_sum, deep = (1_000, 10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    if mg is not None:
        _give_micrograd_tanh()
        print("note: micrograd 0.1.0 has no tanh; this benchmark adds one written in micrograd's closure style")
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * max(n_chain, m_sum) + 1000))
        print(f"note: micrograd needs sys.setrecursionlimit({sys.getrecursionlimit()}) for its recursive walk")

    rows = []
    for name, factory, size in (("chain of (x*w).tanh()", chain, n_chain), ("sum of products", sum_of_products, m_sum)):
        ours = median_seconds(factory(chainrule.Value, size), args.repeats)
        drop_in = median_seconds(factory(dropin.Value, size), args.repeats)
        theirs = median_seconds(factory(mg.Value, size), args.repeats) if mg else float("nan")
        if torch is None:
            ref = float("nan")
        elif factory is chain:
            ref = median_seconds(torch_chain(size), args.repeats)
        else:
            ref = median_seconds(factory(torch_scalar, size), max(1, args.repeats // 2))
        rows.append((f"{name}, n={size:,}", ours, theirs, ref, drop_in))

    print()
    print("| workload (forward + backward) | chainrule | micrograd 0.1.0 | PyTorch 0-d | vs micrograd | vs PyTorch "
          "| chainrule.micrograd (drop-in) |")
    print("|---|---|---|---|---|---|---|")
    for label, ours, theirs, ref, drop_in in rows:
        print(f"| {label} | {ours * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | {ref * 1e3:.1f} ms "
              f"| {theirs / ours:.1f}x faster | {ref / ours:.1f}x faster | {drop_in * 1e3:.1f} ms |")

    ours_mem = bytes_per_node(chainrule.Value)
    theirs_mem = bytes_per_node(mg.Value) if mg else float("nan")
    drop_in_mem = bytes_per_node(dropin.Value)
    print()
    print("| memory per op node (tracemalloc, 10^5-step chain alive) | chainrule | micrograd 0.1.0 "
          "| chainrule.micrograd (drop-in) |")
    print("|---|---|---|---|")
    print(f"| bytes | {ours_mem:.0f} | {theirs_mem:.0f} | {drop_in_mem:.0f} |")

    start = time.perf_counter()
    x = chainrule.Value(0.5)
    out = x
    for _ in range(deep):
        out = out * 1.0000001
    out.backward()
    print(f"\nchainrule: a {deep:,}-deep chain, forward + backward, in {time.perf_counter() - start:.2f} s "
          f"(d out / d x = {x.grad:.6f})")


if __name__ == "__main__":
    main()
