"""Engine speed and memory: chainrule vs micrograd 0.1.0 vs PyTorch (0-d float64), and chainrule.micrograd (the
drop-in that keeps micrograd's closures) for what switching only the import gives.

Each measurement runs in a clean process of its own: one engine, one workload, nothing else imported (torch
only in PyTorch's processes, so no engine's garbage collector walks another library's objects). The garbage
collector stays on, and each timed run ends with `gc.collect()`, inside the timed region: an engine whose
graphs are reference cycles (micrograd's closures) pays for collecting them, one that frees its graph by
reference counting pays nothing more. Times are CPU time (`time.process_time`), medians of --repeats runs;
ratios are micrograd's (or PyTorch's) median over chainrule's.

Workloads (forward + backward each):
  chain   a chain of (x * w).tanh() N long (default 10^4)
  sum     a sum of M products x_i * w_i (default 10^5), summed left to right
  step    one training step of the moons demo (benchmarks/bench_train.py: 100 points, MLP(2, [16, 16, 1]),
          max-margin loss + L2, backward, SGD), steps 0, 1, 2 ... of one run
  memory  bytes per op node, measured with tracemalloc while a 10^5-node chain is alive
  deep    a 10^6-deep chain through chainrule alone (micrograd's recursive walk cannot do this)

micrograd's backward builds its topological order by recursion, so its processes raise the recursion
limit (the output says so); micrograd 0.1.0 has no tanh, so its processes add one in its own closure style.
With --gc-off every measuring process turns the collector off (and collects nothing in the timed region): what
each engine's own garbage costs it is the difference to a normal run.
With --runs N everything is measured N times over, and each cell shows the lowest and highest of the N medians,
with the machine's load average over the runs: the range a clean process reproduces.
Run: python benchmarks/bench_engine.py [--repeats 7] [--runs 3] [--quick] [--gc-off]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ENGINES = ("chainrule", "micrograd", "torch", "dropin")
TITLES = {"chainrule": "chainrule", "micrograd": "micrograd 0.1.0", "torch": "PyTorch 0-d",
          "dropin": "chainrule.micrograd (drop-in)"}


# --- inside a measuring process: one engine, one workload ---------------------------------------------


def value_maker(engine: str) -> Callable[[float], object]:
    if engine == "chainrule":
        from chainrule import Value
        return Value
    if engine == "dropin":
        from chainrule.micrograd.engine import Value
        return Value
    if engine == "micrograd":
        import micrograd.engine as mg

        _give_micrograd_tanh(mg)
        return mg.Value
    import torch

    torch.set_num_threads(1)
    return lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True)


def _give_micrograd_tanh(mg) -> None:
    """micrograd 0.1.0 ships relu but no tanh; add one in its own style (a closure per node)."""
    if hasattr(mg.Value, "tanh"):
        return

    def tanh(self):
        t = math.tanh(self.data)
        out = mg.Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    mg.Value.tanh = tanh


def chain(make, n: int) -> Callable[[], object]:
    def run():
        x, w = make(0.5), make(0.9)
        out = x
        for _ in range(n):
            out = (out * w).tanh()
        out.backward()
    return run


def sum_of_products(make, m: int) -> Callable[[], object]:
    xs = [0.001 * (i % 97) for i in range(m)]
    ws = [0.002 * (i % 89) - 0.05 for i in range(m)]

    def run():
        total = make(0.0)
        for x, w in zip(xs, ws):
            total = total + make(x) * make(w)
        total.backward()
    return run


def training_step(engine: str) -> Callable[[], object]:
    sys.path.insert(0, str(HERE))
    import bench_train

    from chainrule.datasets import moons

    points, labels = moons(100, 0.1, bench_train.SEED)
    make = {"chainrule": bench_train.make_chainrule, "micrograd": bench_train.make_micrograd,
            "torch": bench_train.make_torch_scalar}[engine]
    step = make(points, labels, bench_train.initial_weights())
    counter = iter(range(10**6))
    return lambda: step(next(counter))


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


def measure(engine: str, workload: str, size: int, repeats: int, collector: bool = True) -> dict:
    """Run in a fresh process: the engine's times for one workload (or its bytes per node)."""
    if not collector:
        gc.disable()
    if engine in ("micrograd", "dropin"):
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * size + 1000))
    if workload == "memory":
        return {"bytes": bytes_per_node(value_maker(engine))}
    if workload == "step":
        run = training_step(engine)
    else:
        run = {"chain": chain, "sum": sum_of_products}[workload](value_maker(engine), size)
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        if collector:
            gc.collect()  # this engine's own garbage, charged to it
        times.append(time.process_time() - start)
    return {"times": times, "modules": sorted(m for m in ("torch", "micrograd") if m in sys.modules)}


# --- the parent: one process per measurement, medians and ratios ----------------------------------------


def in_clean_process(engine: str, workload: str, size: int, repeats: int, collector: bool = True) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--measure", engine, workload, str(size), str(repeats)]
    if not collector:
        command.append("--gc-off")
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--runs", type=int, default=1, help="measure everything this many times; show the range")
    parser.add_argument("--gc-off", action="store_true", help="the garbage collector off in every measuring process")
    parser.add_argument("--measure", nargs=4, metavar=("ENGINE", "WORKLOAD", "SIZE", "REPEATS"),
                        help=argparse.SUPPRESS)  # used by the parent for each clean process
    args = parser.parse_args()
    if args.measure:
        engine, workload, size, repeats = args.measure
        print(json.dumps(measure(engine, workload, int(size), int(repeats), not args.gc_off)))
        return

    n_chain, m_sum, deep = (1_000, 10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    collector = "gc OFF in every process" if args.gc_off else "gc on and gc.collect() inside each timed run"
    print(f"note: each engine in a clean process of its own, {collector}; "
          "micrograd gets a closure-style tanh and a higher recursion limit")
    workloads = (
        (f"chain of (x*w).tanh(), n={n_chain:,}", "chain", n_chain, ENGINES),
        (f"sum of products, n={m_sum:,}", "sum", m_sum, ENGINES),
        ("moons training step (100 points, MLP(2, [16, 16, 1]))", "step", 0, ("chainrule", "micrograd", "torch")),
    )
    runs: list[dict[str, dict[str, float]]] = []  # per run: workload label -> engine -> median
    loads = [os.getloadavg()[0]]
    for run in range(args.runs):
        medians_of_run: dict[str, dict[str, float]] = {}
        for label, workload, size, engines in workloads:
            medians = {}
            for engine in engines:
                # The chain takes milliseconds: three times the runs, as its median moves most from run to run.
                repeats = {"chain": 3 * args.repeats, "sum": args.repeats if engine == "chainrule" else
                           max(3, args.repeats // 2)}.get(workload, args.repeats)
                found = in_clean_process(engine, workload, size, repeats, not args.gc_off)
                expected = {"micrograd": ["micrograd"], "torch": ["torch"]}.get(engine, [])
                assert found["modules"] == expected, f"{engine} process imported {found['modules']}"
                medians[engine] = statistics.median(found["times"])
                print(f"  run {run + 1}: {label:55s} {TITLES[engine]:32s} {medians[engine] * 1e3:10.1f} ms", flush=True)
            medians_of_run[label] = medians
        runs.append(medians_of_run)
        loads.append(os.getloadavg()[0])

    def spread(values: list[float], unit: str, scale: float = 1.0, digits: int = 1) -> str:
        low, high = min(values) * scale, max(values) * scale
        return f"{low:.{digits}f}{unit}" if f"{low:.{digits}f}" == f"{high:.{digits}f}" else \
            f"{low:.{digits}f}-{high:.{digits}f}{unit}"

    print()
    print(f"{args.runs} run(s); load average (1 minute) {min(loads):.1f} to {max(loads):.1f} "
          f"on {os.cpu_count()} cores. Each cell: the lowest and highest of the runs' medians.")
    print()
    print("| workload (forward + backward), CPU time | chainrule | micrograd 0.1.0 | PyTorch 0-d | vs micrograd "
          "| vs PyTorch | chainrule.micrograd (drop-in) |")
    print("|---|---|---|---|---|---|---|")
    for label, _, _, engines in workloads:
        per = {engine: [run[label][engine] for run in runs] for engine in engines}
        ratio = {engine: [run[label][engine] / run[label]["chainrule"] for run in runs] for engine in engines}
        dropin = spread(per["dropin"], " ms", 1e3) if "dropin" in per else "-"
        print(f"| {label} | {spread(per['chainrule'], ' ms', 1e3)} | {spread(per['micrograd'], ' ms', 1e3)} "
              f"| {spread(per['torch'], ' ms', 1e3)} | {spread(ratio['micrograd'], 'x')} faster "
              f"| {spread(ratio['torch'], 'x')} faster | {dropin} |")

    memory = {engine: in_clean_process(engine, "memory", 0, 1)["bytes"] for engine in ("chainrule", "micrograd", "dropin")}
    print()
    print("| memory per op node (tracemalloc, 10^5-step chain alive) | chainrule | micrograd 0.1.0 "
          "| chainrule.micrograd (drop-in) |")
    print("|---|---|---|---|")
    print(f"| bytes | {memory['chainrule']:.0f} | {memory['micrograd']:.0f} | {memory['dropin']:.0f} |")

    import chainrule

    start = time.process_time()
    x = chainrule.Value(0.5)
    out = x
    for _ in range(deep):
        out = out * 1.0000001
    out.backward()
    print(f"\nchainrule: a {deep:,}-deep chain, forward + backward, in {time.process_time() - start:.2f} s CPU "
          f"(d out / d x = {x.grad:.6f})")


if __name__ == "__main__":
    main()
