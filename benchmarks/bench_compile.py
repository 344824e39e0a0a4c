"""Compiled replay vs the eager engine vs micrograd 0.1.0 vs batched PyTorch: one training step of the moons MLP.

Run from the repository root:

    .venv/bin/python benchmarks/bench_compile.py               # both cases
    .venv/bin/python benchmarks/bench_compile.py --quick       # the small case only

Cases: the moons demo's MLP(2, [16, 16, 1]) on 100 points, and MLP(2, [64, 64, 1]) on 1,000 points (to show
how cost grows with width and batch). Every contender takes the same step from the same weights on the same
points (chainrule.datasets.moons(n, 0.1, seed=1)): forward over all points, max-margin loss + 1e-4 * sum of
squared weights, gradients, SGD with learning rate 1.0 - 0.9 k / 100. The script checks that all contenders
report the same losses.

- eager chainrule: `MoonsDemo.step`, the whole graph built and differentiated every step.
- compiled chainrule: `chainrule.compile` of the per-example loss (hinge / n + L2 / n), traced once;
  each step is `value_and_grad` over all points, then the SGD update written back into each parameter
  Value (`p.data -= lr * g`, micrograd's loop). Compile time is reported apart.
- micrograd 0.1.0: the demo notebook's step; small case only (the large graph would need about 6 GB).
- PyTorch: float64, batched (one matrix product per layer), one thread (torch.set_num_threads(1)); NumPy's
  BLAS on one thread too (OPENBLAS_NUM_THREADS=1, set by this script).

Medians over consecutive steps, in one process, garbage collector on. Each engine is charged for its own
garbage: `gc.collect()` runs before each contender, and the pure-Python contenders are timed before `import
torch` (torch's ~150,000 objects would otherwise slow every collection, see docs/performance.md); the compiled
replay is timed before and after it.
"""

from __future__ import annotations

import os

# One thread for NumPy's BLAS as for PyTorch (set before NumPy loads). On a shared machine OpenBLAS's own
# threads otherwise fight over the cores and a 64 x 64 product gets 30 times slower.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_train  # noqa: E402
from bench_train import make_micrograd, make_torch_batched  # noqa: E402  (the same steps as bench_train)

SEED = 1
ALPHA = 1e-4
STEPS = 100
CASES = {  # name: (layer sizes, points, eager steps timed)
    "moons MLP(2, [16, 16, 1]), 100 points": ([16, 16, 1], 100, 7),
    "MLP(2, [64, 64, 1]), 1,000 points": ([64, 64, 1], 1000, 1),
}


def learning_rate(k: int) -> float:
    return 1.0 - 0.9 * k / STEPS


def make_demo(sizes: list[int], samples: int, compiled: bool = False):
    from chainrule.commands.train import DemoConfig, MoonsDemo

    return MoonsDemo(DemoConfig(samples=samples, seed=SEED, sizes=sizes, steps=STEPS, compiled=compiled))


def weights_of(demo) -> list[tuple[list[list[float]], list[float]]]:
    return [([[w.data for w in n.w] for n in layer.neurons], [n.b.data for n in layer.neurons])
            for layer in demo.model.layers]


def make_eager(sizes: list[int], samples: int) -> Callable[[int], float]:
    demo = make_demo(sizes, samples)
    return lambda k: demo.step(k).loss


def make_compiled(sizes: list[int], samples: int) -> tuple[Callable[[int], float], float]:
    """The step a user writes around chainrule.compile; also the seconds compile() took."""
    import numpy as np

    import chainrule
    from chainrule.losses import l2_penalty

    demo = make_demo(sizes, samples)
    model, params = demo.model, demo.model.parameters()
    share = 1.0 / samples

    def example_loss(x, y, label):
        return (1.0 - label * model([x, y])[0]).relu() * share + l2_penalty(params, ALPHA) * share

    started = time.perf_counter()
    compiled = chainrule.compile(example_loss, params)
    compile_seconds = time.perf_counter() - started
    columns = (np.array([p[0] for p in demo.points]), np.array([p[1] for p in demo.points]),
               np.array(demo.labels, dtype=float))

    def step(k: int) -> float:
        values, grads = compiled.value_and_grad(*columns)
        lr = learning_rate(k)
        for p, g in zip(params, grads.tolist()):
            p.data -= lr * g
        return float(values.sum())

    return step, compile_seconds


def time_demo(sizes: list[int], samples: int) -> dict[str, float]:
    """The whole compiled demo: in this process (NumPy imported, compile included, steps with accuracy),
    and `chainrule train moons --compiled` as a new process (interpreter start and imports included)."""
    import numpy  # noqa: F401  (its import is not the demo's)

    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    demo = make_demo(sizes, samples, compiled=True)
    for k in range(STEPS):
        demo.step(k)
    in_process, in_process_cpu = time.perf_counter() - start, time.process_time() - cpu
    command = [sys.executable, "-m", "chainrule", "train", "moons", "--compiled"]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    cli = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cli_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return {"in process": in_process, "in process cpu": in_process_cpu, "command": cli, "command cpu": cli_cpu,
            "reported": done.stdout.strip().splitlines()[-1]}


def time_steps(step: Callable[[int], float], repeats: int) -> tuple[float, float, list[float]]:
    """bench_train's median wall and CPU seconds per step, and the losses, after collecting the garbage
    the previous contender left (each engine pays for its own). CPU time is steadier on a busy machine."""
    gc.collect()
    return bench_train.time_steps(step, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=200, help="timed steps for compiled and PyTorch")
    parser.add_argument("--quick", action="store_true", help="the small case only")
    args = parser.parse_args()
    sys.setrecursionlimit(100_000)  # micrograd's build_topo recurses once per node depth
    print("note: sys.setrecursionlimit(100_000) for micrograd's recursive topological sort")
    cases = dict(list(CASES.items())[:1]) if args.quick else CASES

    results: dict[str, dict[str, tuple[float, float, list[float], int]]] = {name: {} for name in cases}
    compile_times: dict[str, float] = {}
    demo_seconds: dict[str, float | str] = {}

    def record(case: str, contender: str, step: Callable[[int], float], repeats: int) -> None:
        median, cpu, losses = time_steps(step, repeats)
        results[case][contender] = (median, cpu, losses, repeats)
        print(f"{case:40s} {contender:30s} {median * 1e3:10.3f} ms/step (CPU {cpu * 1e3:10.3f} ms)", flush=True)

    for case, (sizes, samples, eager_repeats) in cases.items():
        record(case, "eager chainrule", make_eager(sizes, samples), eager_repeats)
        gc.collect()
        if sizes == [16, 16, 1] and samples == 100:
            demo = make_demo(sizes, samples)
            record(case, "micrograd 0.1.0", make_micrograd(demo.points, demo.labels, weights_of(demo)), 1)
            assert bench_train.SIZES == sizes
            demo_seconds.update(time_demo(sizes, samples))
        step, compile_times[case] = make_compiled(sizes, samples)
        record(case, "compiled chainrule", step, args.repeats)

    import torch

    torch.set_num_threads(1)
    for case, (sizes, samples, _) in cases.items():
        demo = make_demo(sizes, samples)
        record(case, "PyTorch batched (1 thread)", make_torch_batched(demo.points, demo.labels, weights_of(demo)),
               args.repeats)
        step, _ = make_compiled(sizes, samples)
        record(case, "compiled, torch imported", step, args.repeats)

    print()
    print(f"Python {platform.python_version()}, torch {torch.__version__}, numpy "
          f"{__import__('numpy').__version__}, {os.cpu_count()} cores")
    for case, rows in results.items():
        reference = rows["eager chainrule"][2]
        compiled, compiled_cpu = rows["compiled chainrule"][:2]
        print()
        print(f"### {case}")
        print()
        print("| contender | step, wall (median) | / compiled | step, CPU (median) | / compiled | steps timed "
              "| same losses |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for contender, (median, cpu, losses, repeats) in rows.items():
            agree = all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(losses, reference))
            print(f"| {contender} | {median * 1e3:.3f} ms | {median / compiled:.3g}x | {cpu * 1e3:.3f} ms "
                  f"| {cpu / compiled_cpu:.3g}x | {repeats} | {'yes' if agree else 'NO'} |")
        torch_wall, torch_cpu = rows["PyTorch batched (1 thread)"][:2]
        eager_wall, eager_cpu = rows["eager chainrule"][:2]
        imported_wall, imported_cpu = rows["compiled, torch imported"][:2]
        print()
        print(f"compile() took {compile_times[case] * 1e3:.0f} ms (once). Wall (CPU): compiled is "
              f"{eager_wall / compiled:.0f}x ({eager_cpu / compiled_cpu:.0f}x) faster than eager (goal >= 50x); "
              f"compiled / PyTorch batched = {compiled / torch_wall:.2f} ({compiled_cpu / torch_cpu:.2f}), "
              f"with torch imported {imported_wall / torch_wall:.2f} ({imported_cpu / torch_cpu:.2f}) (goal <= 2).")
        if "micrograd 0.1.0" in rows:
            print(f"micrograd / compiled = {rows['micrograd 0.1.0'][0] / compiled:.0f}x. The whole 100-step "
                  f"demo, compiled: {demo_seconds['in process']:.2f} s wall ({demo_seconds['in process cpu']:.2f} s "
                  f"CPU) in this process (MoonsDemo with compiled=True: compile, then steps with accuracy); "
                  f"`python -m chainrule train moons --compiled` took {demo_seconds['command']:.2f} s wall "
                  f"({demo_seconds['command cpu']:.2f} s CPU) as a new process, imports included, and printed "
                  f"\"{demo_seconds['reported']}\".")


if __name__ == "__main__":
    main()
