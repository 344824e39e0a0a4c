"""Compiled replay vs the eager engine vs micrograd 0.1.0 vs batched PyTorch: one training step, six workloads.

Run from the repository root:

    .venv/bin/python benchmarks/bench_compile.py                 # every workload, one thread
    .venv/bin/python benchmarks/bench_compile.py --threads 2     # NumPy's BLAS and PyTorch on two threads
    .venv/bin/python benchmarks/bench_compile.py --quick         # the moons workload only
    .venv/bin/python benchmarks/bench_compile.py --no-eager --per-example   # and per_example_grads vs torch.func
    .venv/bin/python benchmarks/bench_compile.py --per-example-only --repeats 30   # that table alone
    .venv/bin/python benchmarks/bench_compile.py --alternate-only   # compiled and PyTorch steps alternated

Workloads (each step: forward over all points, loss, gradients, SGD with learning rate 1.0 - 0.9 k / 100):

- the moons demo's MLP(2, [16, 16, 1]) on 100 points, max-margin loss + 1e-4 * sum of squared weights;
- MLP(2, [64, 64, 1]) on 1,000 points (wide), the same loss;
- MLP(2, [8] * 8 + [1]) on 1,000 points (deep and narrow: eight hidden layers of eight), the same loss;
- an expression that is not an MLP, with shared subterms, on 10,000 points: u = a x + b y, v = tanh u,
  w = sigmoid(c u - y), s = v w + d v^2, loss (s - y)^2 + relu(w - v) + log(s^2 + 1), averaged;
- tanh MLP(2, [64, 64, 1]) on 1,000 points and tanh MLP(2, [32, 32, 1]) on 10,000 (wide layers; no eager row).

Every contender takes the same steps from the same weights on the same points (chainrule.datasets.moons(n, 0.1,
seed=1)) and the script checks that all report the same losses.

- eager chainrule: the whole graph built and differentiated every step (`MoonsDemo.step` for the MLPs).
- compiled chainrule: `chainrule.compile` of the per-example loss, traced once; each step is
  `value_and_grad(*columns, params=theta)` over all points, then `theta -= lr * grads` (the parameters kept in
  one array, as PyTorch keeps them in tensors). Compile time is reported apart.
- micrograd 0.1.0: the demo notebook's step; moons only (the larger graphs would need gigabytes).
- compiled, no order check: the same without the check that recomputes a sum in the written order when its
  order could change the result (what that check costs; not a mode chainrule offers).
- JAX (when installed; a benchmark dependency only): `jax.jit(jax.value_and_grad(loss))` over the batch, float64,
  XLA on one thread when --threads is 1.
- PyTorch: float64, batched (one matrix product per layer), on the same number of threads as NumPy's BLAS
  (`--threads`, default 1; set before NumPy loads). OpenBLAS spins when its thread count changes inside a
  process, so each thread setting is its own run of this script.

Medians over consecutive steps, in one process, garbage collector on. Each engine is charged for its own
garbage: `gc.collect()` runs before each contender, and the pure-Python contenders are timed before `import
torch` (torch's ~150,000 objects would otherwise slow every collection, see docs/performance.md); the compiled
replay is timed before and after it. The last column is the distance to the FLOP floor: the compiled step's
time over (the step's floating-point operations / the NumPy matrix-product peak measured on this machine with
the same threads, a 512 x 512 product).
"""

from __future__ import annotations

import os
import sys  # noqa: E402

# The same number of threads for NumPy's BLAS as for PyTorch, set before NumPy loads (one by default: on a
# shared machine OpenBLAS's own threads otherwise fight over the cores and a 64 x 64 product gets 30 times
# slower). Read from the command line here, before anything imports NumPy.
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv[:-1] else 1
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = str(THREADS)
if THREADS == 1:  # JAX (XLA's CPU backend) on one thread too, when it is installed
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from typing import Callable  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_train  # noqa: E402
from bench_train import make_micrograd, make_torch_batched, torch_sgd_step  # noqa: E402  (the same steps as bench_train)

SEED = 1
ALPHA = 1e-4
STEPS = 100
MOONS = "moons MLP(2, [16, 16, 1]), 100 points"
EXPRESSION = "expression with shared subterms, 10,000 points"
CASES = {  # name: (layer sizes, or None for the expression; points; eager steps timed (0: none); activation)
    MOONS: ([16, 16, 1], 100, 7, "relu"),
    "MLP(2, [64, 64, 1]), 1,000 points": ([64, 64, 1], 1000, 1, "relu"),
    "MLP(2, [8] * 8 + [1]), 1,000 points": ([8] * 8 + [1], 1000, 1, "relu"),
    EXPRESSION: (None, 10_000, 1, "relu"),
    # Wide tanh layers (issue 45): the eager engine would take minutes and gigabytes a step here.
    "tanh MLP(2, [64, 64, 1]), 1,000 points": ([64, 64, 1], 1000, 0, "tanh"),
    "tanh MLP(2, [32, 32, 1]), 10,000 points": ([32, 32, 1], 10_000, 0, "tanh"),
}
EXPRESSION_START = [0.8, -0.6, 1.3, 0.4]  # a, b, c, d


def learning_rate(k: int) -> float:
    return 1.0 - 0.9 * k / STEPS


def make_demo(sizes: list[int], samples: int, compiled: bool = False, activation: str = "relu"):
    from chainrule.commands.train import DemoConfig, MoonsDemo

    return MoonsDemo(DemoConfig(samples=samples, seed=SEED, sizes=sizes, steps=STEPS, compiled=compiled,
                                activation=activation))


def weights_of(demo) -> list[tuple[list[list[float]], list[float]]]:
    return [([[w.data for w in n.w] for n in layer.neurons], [n.b.data for n in layer.neurons])
            for layer in demo.model.layers]


def make_eager(sizes: list[int], samples: int) -> Callable[[int], float]:
    demo = make_demo(sizes, samples)
    return lambda k: demo.step(k).loss


def expression(x, y, a, b, c, d, tanh, sigmoid, relu, log):
    """The non-MLP workload's loss for one point (or a batch: any number type and its functions)."""
    u = a * x + b * y
    v = tanh(u)
    w = sigmoid(c * u - y)
    s = v * w + d * v * v
    return (s - y) ** 2 + relu(w - v) + log(s * s + 1.0)


def points_of(samples: int) -> tuple[list[tuple[float, float]], list[int]]:
    from chainrule.datasets import moons

    return moons(samples, 0.1, seed=SEED)


def make_eager_expression(samples: int) -> Callable[[int], float]:
    from chainrule import Value

    points, _ = points_of(samples)
    params = [Value(v) for v in EXPRESSION_START]
    share = 1.0 / samples

    def step(k: int) -> float:
        total = Value(0.0)
        for x, y in points:
            total = total + expression(x, y, *params, Value.tanh, Value.sigmoid, Value.relu, Value.log) * share
        for p in params:
            p.grad = 0.0
        total.backward()
        for p in params:
            p.data -= learning_rate(k) * p.grad
        return total.data

    return step


def mlp_example_loss(sizes: list[int], samples: int, activation: str):
    """The demo's MLP loss of one point (max-margin + its share of the L2 penalty), its parameters and the
    columns (x, y, label) of the demo's points."""
    import numpy as np

    from chainrule.losses import l2_penalty

    demo = make_demo(sizes, samples, activation=activation)
    model, params = demo.model, demo.model.parameters()
    share = 1.0 / samples

    def example_loss(x, y, label):
        return (1.0 - label * model([x, y])[0]).relu() * share + l2_penalty(params, ALPHA) * share

    columns = (np.array([p[0] for p in demo.points]), np.array([p[1] for p in demo.points]),
               np.array(demo.labels, dtype=float))
    return example_loss, params, columns


def make_compiled(sizes: list[int] | None, samples: int,
                  activation: str = "relu") -> tuple[Callable[[int], float], float, int]:
    """The step a user writes around chainrule.compile; also the seconds compile() took, and the number of
    floating-point operations of a step (for the FLOP floor)."""
    import numpy as np

    import chainrule
    from chainrule import Value

    if sizes is None:
        points, _ = points_of(samples)
        params = [Value(v) for v in EXPRESSION_START]
        share = 1.0 / samples

        def example_loss(x, y):
            return expression(x, y, *params, Value.tanh, Value.sigmoid, Value.relu, Value.log) * share

        columns = (np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    else:
        example_loss, params, columns = mlp_example_loss(sizes, samples, activation)
    started = time.perf_counter()
    compiled = chainrule.compile(example_loss, params)
    compile_seconds = time.perf_counter() - started
    theta = compiled.parameter_values()

    def step(k: int) -> float:
        values, grads = compiled.value_and_grad(*columns, params=theta)
        theta[:] -= learning_rate(k) * grads
        return float(values.sum())

    return step, compile_seconds, step_flops(sizes, samples, compiled.node_count)


def step_flops(sizes: list[int] | None, samples: int, traced_nodes: int) -> int:
    """Floating-point operations of one step: for an MLP, its matrix products (2 J K N forward; the same
    twice backward, for the weights and the inputs, except the first layer's inputs); for the expression,
    one operation per traced node and point forward and two backward."""
    if sizes is None:
        return 3 * traced_nodes * samples
    widths = [2, *sizes]
    flops = 0
    for i, (k, j) in enumerate(zip(widths, widths[1:])):
        flops += 2 * j * k * samples * (2 if i == 0 else 3)
    return flops


def make_torch_expression(samples: int) -> Callable[[int], float]:
    import torch

    points, _ = points_of(samples)
    x = torch.tensor([p[0] for p in points], dtype=torch.float64)
    y = torch.tensor([p[1] for p in points], dtype=torch.float64)
    params = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in EXPRESSION_START]

    def step(k: int) -> float:
        total = expression(x, y, *params, torch.tanh, torch.sigmoid, torch.relu, torch.log).mean()
        return torch_sgd_step(total, params, learning_rate(k))

    return step


def jax_available() -> bool:
    """JAX is a benchmark dependency only (`pip install "jax[cpu]"`): its rows appear when it is installed."""
    import importlib.util

    return importlib.util.find_spec("jax") is not None


def make_jax(sizes: list[int] | None, samples: int, activation: str = "relu") -> Callable[[int], float]:
    """The same step in JAX: float64, `jax.jit(jax.value_and_grad(loss))` over the whole batch (one matrix
    product per layer, as PyTorch batched), then SGD on the parameters outside the jitted function."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    if sizes is None:
        points, _ = points_of(samples)
        x = jnp.asarray([p[0] for p in points], dtype=jnp.float64)
        y = jnp.asarray([p[1] for p in points], dtype=jnp.float64)

        def loss(params):
            return jnp.mean(expression(x, y, *params, jnp.tanh, jax.nn.sigmoid, jax.nn.relu, jnp.log))

        params = [jnp.asarray(v, dtype=jnp.float64) for v in EXPRESSION_START]
    else:
        demo = make_demo(sizes, samples, activation=activation)
        hidden = {"relu": jax.nn.relu, "tanh": jnp.tanh}[activation]
        points = jnp.asarray(demo.points, dtype=jnp.float64)
        labels = jnp.asarray(demo.labels, dtype=jnp.float64)
        params = [jnp.asarray(part, dtype=jnp.float64) for rows, biases in weights_of(demo) for part in (rows, biases)]

        def loss(params):
            h = points
            layers = len(params) // 2
            for i in range(layers):
                h = h @ params[2 * i].T + params[2 * i + 1]
                if i < layers - 1:
                    h = hidden(h)
            penalty = ALPHA * sum(jnp.sum(p * p) for p in params)
            return jnp.mean(jax.nn.relu(1.0 - labels * h[:, 0])) + penalty

    value_and_grad = jax.jit(jax.value_and_grad(loss))
    state = {"params": params}

    def step(k: int) -> float:
        value, grads = value_and_grad(state["params"])
        lr = learning_rate(k)
        state["params"] = [p - lr * g for p, g in zip(state["params"], grads)]
        return float(value)

    value_and_grad(params)[0].block_until_ready()  # compile outside the timed steps, as chainrule's compile()
    return step


@contextlib.contextmanager
def order_check_off():
    """What the compiled replay's order check costs: the replay without it (not a mode chainrule offers;
    its results can then differ from eager in class, docs/engine.md "Compiled replay")."""
    from chainrule.replay import MatrixSum

    check = MatrixSum._eager_order
    MatrixSum._eager_order = lambda *args: None
    try:
        yield
    finally:
        MatrixSum._eager_order = check


def load_average() -> str:
    """The machine's load averages over 1, 5 and 15 minutes, as a run's header and footer print them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def vector_units() -> str:
    """The widest vector instructions NumPy's and PyTorch's math kernels dispatch to here. NumPy's float64 tanh
    is about four times faster with AVX-512 than with AVX2 (0.11 against 0.40 ms on 64 x 1,000), which moves
    the tanh workloads' ratio to PyTorch by more than anything in the replay (docs/performance.md)."""
    import torch
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    numpy_units = [unit for unit in __cpu_dispatch__ if __cpu_features__.get(unit)]
    return (f"NumPy's kernels {numpy_units[-1] if numpy_units else 'baseline'}, "
            f"PyTorch's {torch.backends.cpu.get_cpu_capability()}")


def matmul_peak() -> float:
    """NumPy's matrix-product peak on this machine, floating-point operations per second: the fastest of 20
    products of 512 x 512 matrices (a peak, so the fastest: other programs on the cores only slow it)."""
    import numpy as np

    a = np.random.default_rng(0).standard_normal((512, 512))
    times = []
    for _ in range(20):
        start = time.perf_counter()
        a @ a
        times.append(time.perf_counter() - start)
    return 2 * 512 ** 3 / min(times)


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


def per_example_pair(sizes: list[int], samples: int, activation: str):
    """chainrule's `per_example_grads` and torch.func.vmap(torch.func.grad(...)) of the same per-example
    loss (max-margin + L2 share), each a function of no arguments giving the (N, P) array."""
    import numpy as np
    import torch

    import chainrule

    example_loss, params, columns = mlp_example_loss(sizes, samples, activation)
    share = 1.0 / samples
    compiled = chainrule.compile(example_loss, params)
    theta = compiled.parameter_values()
    hidden = {"relu": torch.relu, "tanh": torch.tanh}[activation]
    widths = [2, *sizes]

    def torch_loss(flat, point, label):  # flat: per layer, per neuron, its weights then its bias
        h, start = point, 0
        for i, (k, j) in enumerate(zip(widths, widths[1:])):
            block = flat[start:start + j * (k + 1)].reshape(j, k + 1)
            start += j * (k + 1)
            h = block[:, :k] @ h + block[:, k]
            if i < len(sizes) - 1:
                h = hidden(h)
        return torch.relu(1.0 - label * h[0]) * share + ALPHA * (flat * flat).sum() * share

    per_example = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0, 0))
    flat = torch.tensor(theta)
    points = torch.tensor(np.stack(columns[:2], axis=1))
    labels = torch.tensor(columns[2])
    return (lambda: compiled.per_example_grads(*columns, params=theta),
            lambda: per_example(flat, points, labels).numpy())


def per_example_table(cases: dict, repeats: int) -> None:
    """Median CPU time of per-example gradients, chainrule against torch.func, and their largest difference."""
    import statistics

    import numpy as np

    print()
    print("| workload | per_example_grads, CPU | torch.func.vmap(grad), CPU | chainrule / torch.func "
          "| largest difference / largest gradient |")
    print("|---|---:|---:|---:|---:|")
    for case, (sizes, samples, _, activation) in cases.items():
        if sizes is None:
            continue
        ours, theirs = per_example_pair(sizes, samples, activation)
        runs = (("chainrule", ours), ("torch", theirs))
        for _, run in runs:
            run()  # first call: warms up (and plans the stores), outside the timing
        gc.collect()
        cpus: dict[str, list[float]] = {name: [] for name, _ in runs}
        for _ in range(repeats):  # the engines alternate, so that a change in the machine's load hits both
            for name, run in runs:
                start = time.process_time()
                run()
                cpus[name].append(time.process_time() - start)
        times = {name: statistics.median(values) for name, values in cpus.items()}
        a, b = ours(), theirs()
        difference = float(np.abs(a - b).max() / np.abs(b).max())
        print(f"| {case} | {times['chainrule'] * 1e3:.3f} ms | {times['torch'] * 1e3:.3f} ms "
              f"| {times['chainrule'] / times['torch']:.2f} | {difference:.1e} |", flush=True)


def make_torch(sizes: list[int] | None, samples: int, activation: str) -> Callable[[int], float]:
    """PyTorch's batched step of a workload (float64, one matrix product per layer)."""
    if sizes is None:
        return make_torch_expression(samples)
    demo = make_demo(sizes, samples, activation=activation)
    return make_torch_batched(demo.points, demo.labels, weights_of(demo), activation)


def alternate_table(cases: dict, repeats: int) -> None:
    """The training steps with the contenders alternated call by call in one process (compiled, PyTorch
    batched, compiled without its order check; step k of each, then step k + 1), so that a change in the
    machine's load hits all three: median CPU time of each and their ratios."""
    import statistics

    print()
    print("| workload | compiled, CPU | PyTorch batched, CPU | compiled / PyTorch | no order check / PyTorch "
          "| same losses |")
    print("|---|---:|---:|---:|---:|---|")
    for case, (sizes, samples, _, activation) in cases.items():
        compiled, _, _ = make_compiled(sizes, samples, activation)
        unchecked_step, _, _ = make_compiled(sizes, samples, activation)

        def unchecked(k: int, step: Callable[[int], float] = unchecked_step) -> float:
            with order_check_off():
                return step(k)

        runs = (("compiled", compiled), ("torch", make_torch(sizes, samples, activation)), ("unchecked", unchecked))
        gc.collect()
        cpus: dict[str, list[float]] = {name: [] for name, _ in runs}
        losses: dict[str, list[float]] = {name: [] for name, _ in runs}
        for k in range(repeats):
            for name, run in runs:
                start = time.process_time()
                losses[name].append(run(k))
                cpus[name].append(time.process_time() - start)
        times = {name: statistics.median(values) for name, values in cpus.items()}
        agree = all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(losses["compiled"], losses["torch"]))
        print(f"| {case} | {times['compiled'] * 1e3:.3f} ms | {times['torch'] * 1e3:.3f} ms "
              f"| {times['compiled'] / times['torch']:.2f} | {times['unchecked'] / times['torch']:.2f} "
              f"| {'yes' if agree else 'NO'} |", flush=True)


def chosen_cases(args: argparse.Namespace) -> dict:
    """The workloads --quick or --only name (all by default)."""
    if args.only:
        return {name: CASES[name] for name in args.only}
    return {MOONS: CASES[MOONS]} if args.quick else CASES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=STEPS,
                        help="timed steps for compiled and PyTorch (at most 100: the learning rate turns negative after)")
    parser.add_argument("--quick", action="store_true", help="the moons workload only")
    parser.add_argument("--threads", type=int, default=1, help="threads for NumPy's BLAS and for PyTorch")
    parser.add_argument("--no-eager", action="store_true", help="skip the eager engine and micrograd")
    parser.add_argument("--only", choices=sorted(CASES), metavar="WORKLOAD", action="append",
                        help="run this workload only (may be repeated); names as in the table")
    parser.add_argument("--per-example", action="store_true",
                        help="also time per_example_grads against torch.func.vmap(torch.func.grad(...))")
    parser.add_argument("--per-example-only", action="store_true",
                        help="time per_example_grads against torch.func.vmap(torch.func.grad(...)) only")
    parser.add_argument("--alternate", action="store_true",
                        help="also time the compiled and PyTorch training steps alternated, call by call")
    parser.add_argument("--alternate-only", action="store_true",
                        help="time the compiled and PyTorch training steps alternated, call by call, only")
    args = parser.parse_args()
    sys.setrecursionlimit(100_000)  # micrograd's build_topo recurses once per node depth
    print("note: sys.setrecursionlimit(100_000) for micrograd's recursive topological sort")
    cases = chosen_cases(args)
    if args.per_example_only or args.alternate_only:
        import torch

        torch.set_num_threads(args.threads)
        print(f"{vector_units()}; load average {load_average()}")
        (per_example_table if args.per_example_only else alternate_table)(cases, args.repeats)
        print(f"load average {load_average()}")
        return

    results: dict[str, dict[str, tuple[float, float, list[float], int]]] = {name: {} for name in cases}
    compile_times: dict[str, float] = {}
    flops: dict[str, int] = {}
    demo_seconds: dict[str, float | str] = {}

    def record(case: str, contender: str, step: Callable[[int], float], repeats: int) -> None:
        median, cpu, losses = time_steps(step, repeats)
        results[case][contender] = (median, cpu, losses, repeats)
        print(f"{case:48s} {contender:30s} {median * 1e3:10.3f} ms/step (CPU {cpu * 1e3:10.3f} ms)", flush=True)

    for case, (sizes, samples, eager_repeats, activation) in cases.items():
        if eager_repeats and not args.no_eager:
            eager = make_eager_expression(samples) if sizes is None else make_eager(sizes, samples)
            record(case, "eager chainrule", eager, eager_repeats)
            del eager
            gc.collect()
        if case == MOONS and not args.no_eager:
            demo = make_demo(sizes, samples)
            record(case, "micrograd 0.1.0", make_micrograd(demo.points, demo.labels, weights_of(demo)), 1)
            assert bench_train.SIZES == sizes
            demo_seconds.update(time_demo(sizes, samples))
        step, compile_times[case], flops[case] = make_compiled(sizes, samples, activation)
        record(case, "compiled chainrule", step, args.repeats)

    import torch

    torch.set_num_threads(args.threads)
    for case, (sizes, samples, _, activation) in cases.items():
        torch_step = make_torch(sizes, samples, activation)
        record(case, f"PyTorch batched ({args.threads} thread{'s' if args.threads > 1 else ''})", torch_step,
               args.repeats)
        step, _, _ = make_compiled(sizes, samples, activation)
        record(case, "compiled, torch imported", step, args.repeats)
        with order_check_off():
            step, _, _ = make_compiled(sizes, samples, activation)
            record(case, "compiled, no order check", step, args.repeats)
    with_jax = jax_available()
    for case, (sizes, samples, _, activation) in cases.items() if with_jax else ():
        record(case, "JAX jit", make_jax(sizes, samples, activation), args.repeats)
    peak = matmul_peak()

    print()
    print(f"Python {platform.python_version()}, torch {torch.__version__}, numpy "
          f"{__import__('numpy').__version__}, {os.cpu_count()} cores, {args.threads} thread(s) for BLAS and "
          f"PyTorch; {vector_units()}; NumPy matrix-product peak {peak / 1e9:.1f} GFLOP/s; load average "
          f"{load_average()}")
    summary = []
    for case, rows in results.items():
        compiled, compiled_cpu = rows["compiled chainrule"][:2]
        reference = rows["compiled chainrule"][2]
        floor = flops[case] / peak
        print()
        print(f"### {case}")
        print()
        print("| contender | step, wall (median) | / compiled | step, CPU (median) | / compiled | steps timed "
              "| same losses | / FLOP floor |")
        print("|---|---:|---:|---:|---:|---:|---|---:|")
        for contender, (median, cpu, losses, repeats) in rows.items():
            agree = all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(losses, reference))
            print(f"| {contender} | {median * 1e3:.3f} ms | {median / compiled:.3g}x | {cpu * 1e3:.3f} ms "
                  f"| {cpu / compiled_cpu:.3g}x | {repeats} | {'yes' if agree else 'NO'} | {median / floor:.3g}x |")
        torch_wall, torch_cpu = next(v[:2] for k, v in rows.items() if k.startswith("PyTorch"))
        imported_wall, imported_cpu = rows["compiled, torch imported"][:2]
        print()
        print(f"{flops[case] / 1e6:.1f} MFLOP a step: FLOP floor {floor * 1e3:.3f} ms. compile() took "
              f"{compile_times[case] * 1e3:.0f} ms (once). Compiled / PyTorch batched, wall (CPU): "
              f"{compiled / torch_wall:.2f} ({compiled_cpu / torch_cpu:.2f}); with torch imported "
              f"{imported_wall / torch_wall:.2f} ({imported_cpu / torch_cpu:.2f}) (goal <= 1).")
        if "eager chainrule" in rows:
            eager_wall, eager_cpu = rows["eager chainrule"][:2]
            print(f"Compiled is {eager_wall / compiled:.0f}x ({eager_cpu / compiled_cpu:.0f}x) faster than eager.")
        if "micrograd 0.1.0" in rows:
            print(f"micrograd / compiled = {rows['micrograd 0.1.0'][0] / compiled:.0f}x. The whole 100-step "
                  f"demo, compiled: {demo_seconds['in process']:.2f} s wall ({demo_seconds['in process cpu']:.2f} s "
                  f"CPU) in this process (MoonsDemo with compiled=True: compile, then steps with accuracy); "
                  f"`python -m chainrule train moons --compiled` took {demo_seconds['command']:.2f} s wall "
                  f"({demo_seconds['command cpu']:.2f} s CPU) as a new process, imports included, and printed "
                  f"\"{demo_seconds['reported']}\".")
        unchecked_cpu = rows["compiled, no order check"][1]
        jax_cpu = rows["JAX jit"][1] if "JAX jit" in rows else float("nan")
        summary.append((case, compiled / torch_wall, compiled_cpu / torch_cpu, imported_wall / torch_wall,
                        imported_cpu / torch_cpu, unchecked_cpu / torch_cpu, compiled_cpu / jax_cpu,
                        compiled / floor))
    print()
    print("| workload | compiled / PyTorch, wall | CPU | torch imported, wall | CPU | no order check, CPU "
          "| compiled / JAX jit, CPU | compiled / FLOP floor |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, *ratios, to_floor in summary:
        print(f"| {case} | " + " | ".join(f"{r:.2f}" for r in ratios) + f" | {to_floor:.3g}x |")
    if args.alternate:
        alternate_table(cases, args.repeats)
    if args.per_example:
        per_example_table(cases, args.repeats)


if __name__ == "__main__":
    main()
