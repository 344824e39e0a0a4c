"""One training step of the moons demo: chainrule vs micrograd 0.1.0 vs PyTorch (0-d tensors and batched).

Run from the repository root:

    .venv/bin/python benchmarks/bench_train.py            # steps; whole demo for chainrule
    .venv/bin/python benchmarks/bench_train.py --full     # also the whole 100-step demo for all (~5 min)

Every contender trains the same model (MLP(2, [16, 16, 1]), ReLU hidden layers, starting from the
same weights) on the same 100 points (chainrule.datasets.moons(100, 0.1, seed=1)) with the same
step: forward over all points, max-margin loss + 1e-4 * sum of squared weights, zero the gradients,
backward, SGD with learning rate 1.0 - 0.9 k / 100. Times are medians of consecutive steps of one
training run, in one process; chainrule and micrograd are timed before torch is imported (see
BEFORE_TORCH), and chainrule once more after. The garbage collector stays on, as users run it. micrograd's
recursive topological sort needs a deeper recursion limit than Python's default 1000 for this
graph, so the script raises it (sys.setrecursionlimit(100_000)). PyTorch runs on one thread in
float64 (the other contenders compute in Python floats, i.e. float64 too).
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import sys
import time
from typing import Callable

SEED = 1
SIZES = [16, 16, 1]
ALPHA = 1e-4
STEPS = 100


def learning_rate(k: int) -> float:
    return 1.0 - 0.9 * k / STEPS


def initial_weights() -> list[tuple[list[list[float]], list[float]]]:
    """Per layer: weight rows and biases, from chainrule's seeded initialisation (shared by all)."""
    from chainrule.nn import MLP

    model = MLP(2, SIZES, rng=random.Random(SEED))
    return [([[w.data for w in n.w] for n in layer.neurons], [n.b.data for n in layer.neurons])
            for layer in model.layers]


# --- the contenders: each make_* returns (step(k) -> loss float) ------------------------------------


def make_chainrule(points, labels, weights) -> Callable[[int], float]:
    from chainrule.commands.train import DemoConfig, MoonsDemo

    demo = MoonsDemo(DemoConfig(seed=SEED, sizes=SIZES, steps=STEPS))
    for layer, (rows, biases) in zip(demo.model.layers, weights):
        for neuron, row, bias in zip(layer.neurons, rows, biases):
            for w, value in zip(neuron.w, row):
                w.data = value
            neuron.b.data = bias
    assert demo.points == points and demo.labels == labels
    return lambda k: demo.step(k).loss


def make_micrograd(points, labels, weights) -> Callable[[int], float]:
    from micrograd.engine import Value
    from micrograd.nn import MLP

    model = MLP(2, SIZES)
    for layer, (rows, biases) in zip(model.layers, weights):
        for neuron, row, bias in zip(layer.neurons, rows, biases):
            for w, value in zip(neuron.w, row):
                w.data = value
            neuron.b.data = bias

    def step(k: int) -> float:  # the demo notebook's loop body
        inputs = [list(map(Value, xrow)) for xrow in points]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(labels, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = ALPHA * sum((p * p for p in model.parameters()))
        total_loss = data_loss + reg_loss
        model.zero_grad()
        total_loss.backward()
        for p in model.parameters():
            p.data -= learning_rate(k) * p.grad
        return total_loss.data

    return step


def torch_sgd_step(total, params, lr: float) -> float:
    """One plain SGD step in PyTorch on the loss `total`, as micrograd's demo loop takes it: its value."""
    import torch

    for p in params:
        p.grad = None
    total.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    return total.item()


def make_torch_scalar(points, labels, weights) -> Callable[[int], float]:
    import torch

    layers = [([[torch.tensor(w, dtype=torch.float64, requires_grad=True) for w in row] for row in rows],
               [torch.tensor(b, dtype=torch.float64, requires_grad=True) for b in biases])
              for rows, biases in weights]
    params = [t for rows, biases in layers for row, b in zip(rows, biases) for t in (*row, b)]
    inputs = [[torch.tensor(v, dtype=torch.float64) for v in point] for point in points]

    def step(k: int) -> float:
        scores = []
        for x in inputs:
            for i, (rows, biases) in enumerate(layers):
                sums = [sum((w * xi for w, xi in zip(row, x)), b) for row, b in zip(rows, biases)]
                x = [s.relu() for s in sums] if i < len(layers) - 1 else sums
            scores.append(x[0])
        data_loss = sum((1 - y * s).relu() for y, s in zip(labels, scores)) * (1.0 / len(scores))
        total = data_loss + ALPHA * sum(p * p for p in params)
        return torch_sgd_step(total, params, learning_rate(k))

    return step


def make_torch_batched(points, labels, weights, activation: str = "relu") -> Callable[[int], float]:
    import torch

    hidden = {"relu": torch.relu, "tanh": torch.tanh}[activation]

    tensors = [(torch.tensor(rows, dtype=torch.float64, requires_grad=True),
                torch.tensor(biases, dtype=torch.float64, requires_grad=True)) for rows, biases in weights]
    params = [t for pair in tensors for t in pair]
    x = torch.tensor(points, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.float64)

    def step(k: int) -> float:
        h = x
        for i, (w, b) in enumerate(tensors):
            h = torch.addmm(b, h, w.T)
            if i < len(tensors) - 1:
                h = hidden(h)
        total = torch.relu(1 - y * h[:, 0]).mean() + ALPHA * sum((p * p).sum() for p in params)
        return torch_sgd_step(total, params, learning_rate(k))

    return step


CONTENDERS = {
    "chainrule": make_chainrule,
    "micrograd 0.1.0": make_micrograd,
    "chainrule, torch imported": make_chainrule,
    "chainrule, torch imported, gc.freeze()": make_chainrule,
    "PyTorch, 0-d tensors": make_torch_scalar,
    "PyTorch, batched": make_torch_batched,
}
# Timed before `import torch`: torch brings ~150,000 objects that every full collection of Python's
# cyclic garbage collector then walks, which slows any program that builds many objects. The row
# "chainrule, torch imported" shows that cost, and the next row how gc.freeze() (which moves every object
# alive at that moment out of the collector's sight) takes it away again. The pure-Python rows are timed
# as their users run them.
BEFORE_TORCH = ("chainrule", "micrograd 0.1.0")


def time_steps(step: Callable[[int], float], repeats: int) -> tuple[float, float, list[float]]:
    """Median wall-clock and CPU seconds per step over `repeats` consecutive steps, and the losses.

    CPU time (time.process_time) is reported too because it is steadier when other programs share
    the cores; both are medians of the same steps.
    """
    walls, cpus, losses = [], [], []
    for k in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        losses.append(step(k))
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls), statistics.median(cpus), losses


def time_demo(make, points, labels, weights) -> float:
    """Seconds for the whole demo: set-up plus 100 steps."""
    start = time.perf_counter()
    step = make(points, labels, weights)
    for k in range(STEPS):
        step(k)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15, help="timed steps for the fast contenders")
    parser.add_argument("--slow-repeats", type=int, default=3, help="timed steps for micrograd")
    parser.add_argument("--demo-repeats", type=int, default=3, help="whole-demo runs for chainrule")
    parser.add_argument("--full", action="store_true", help="also time the whole demo for micrograd and PyTorch")
    args = parser.parse_args()

    sys.setrecursionlimit(100_000)  # micrograd's build_topo recurses once per node depth
    print("note: sys.setrecursionlimit(100_000) for micrograd's recursive topological sort")
    from chainrule.datasets import moons

    points, labels = moons(100, 0.1, SEED)
    weights = initial_weights()

    steps: dict[str, float] = {}
    cpu_steps: dict[str, float] = {}
    first_losses: dict[str, list[float]] = {}
    demos: dict[str, tuple[float, str]] = {}

    def measure(name: str) -> None:
        make = CONTENDERS[name]
        repeats = args.slow_repeats if name.startswith("micrograd") else args.repeats
        median, cpu, losses = time_steps(make(points, labels, weights), repeats)
        steps[name], cpu_steps[name] = median, cpu
        first_losses[name] = losses[:3]
        print(f"{name:40s} step median {median * 1000:9.2f} ms (CPU {cpu * 1000:9.2f} ms) over {repeats} steps",
              flush=True)

    def measure_demo(name: str) -> None:
        make = CONTENDERS[name]
        if name.startswith("chainrule"):
            runs = [time_demo(make, points, labels, weights) for _ in range(args.demo_repeats)]
            demos[name] = (statistics.median(runs), f"median of {len(runs)} runs")
        elif args.full or name == "PyTorch, batched":
            demos[name] = (time_demo(make, points, labels, weights), "1 run")
        else:
            demos[name] = (STEPS * steps[name], "estimated: 100 x median step")

    for name in BEFORE_TORCH:
        measure(name)
        measure_demo(name)
    import torch

    torch.set_num_threads(1)
    for name in CONTENDERS:
        if name not in BEFORE_TORCH:
            if "gc.freeze()" in name:
                gc.freeze()
            measure(name)
            measure_demo(name)
    gc.unfreeze()

    reference = first_losses["chainrule"]
    for name, losses in first_losses.items():  # same model, same data, same steps: same losses
        agree = all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(losses, reference))
        print(f"  losses of the first steps, {name}: {[round(v, 12) for v in losses]}"
              f"{'' if agree else '  <-- DIFFERS from chainrule'}")

    c, cc = steps["chainrule"], cpu_steps["chainrule"]
    print()
    print(f"Python {platform.python_version()}, torch {torch.__version__}, {platform.machine()}, "
          f"{args.repeats} steps per fast contender, {args.slow_repeats} for micrograd")
    print()
    print("| contender | median step (wall) | / chainrule's | median step (CPU) | / chainrule's | whole 100-step demo |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in CONTENDERS:
        seconds, how = demos[name]
        print(f"| {name} | {steps[name] * 1000:.2f} ms | {steps[name] / c:.3g}x | {cpu_steps[name] * 1000:.2f} ms "
              f"| {cpu_steps[name] / cc:.3g}x | {seconds:.2f} s ({how}) |")
    print()
    print(f"Wall clock: chainrule is {steps['micrograd 0.1.0'] / c:.1f}x faster than micrograd per step and "
          f"{steps['PyTorch, 0-d tensors'] / steps['chainrule, torch imported']:.1f}x faster than PyTorch with "
          f"0-d tensors (both with torch imported); batched PyTorch is "
          f"{steps['chainrule, torch imported'] / steps['PyTorch, batched']:.0f}x faster than chainrule.")


if __name__ == "__main__":
    main()
