"""`chainrule train moons`: micrograd's demo, a small MLP learning two interleaving half moons.

The recipe (all defaults): 100 points with noise 0.1, an MLP(2, [16, 16, 1]) with ReLU hidden
layers, the max-margin loss plus 1e-4 times the sum of squared weights, and 100 steps of plain
gradient descent with learning rate lr_k = lr (1 - 0.9 k / steps) for k = 0 .. steps-1
(1.0 - 0.9 k / 100 with the defaults). Each step reports the loss and the accuracy of the forward
pass it differentiated (before its update); the final line evaluates the trained model.

With ``--compiled`` (``DemoConfig(compiled=True)``) each step replays one traced example over all the
points with `chainrule.compile` instead of building the whole graph: the same numbers, much faster.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from chainrule.commands.arguments import whole_number
from chainrule.datasets import moons
from chainrule.engine import Value
from chainrule.losses import l2_penalty, max_margin
from chainrule.nn import ACTIVATIONS, MLP
from chainrule.number_text import count_text, format_number, format_percent, with_number_texts
from chainrule.optim import SGD

#: The documented seed: with it the default demo reaches 100 % training accuracy.
DEFAULT_SEED = 1
PLOT_FORMATS = (".png", ".svg")


@dataclass
class DemoConfig:
    samples: int = 100
    noise: float = 0.1
    seed: int = DEFAULT_SEED
    sizes: list[int] = field(default_factory=lambda: [16, 16, 1])
    activation: str = "relu"
    steps: int = 100
    lr: float = 1.0
    alpha: float = 1e-4
    compiled: bool = False  # replay one traced example over the batch (chainrule.compile, needs NumPy)

    def learning_rate(self, k: int) -> float:
        """lr_k = lr (1 - 0.9 k / steps): from lr down to a tenth of it."""
        return self.lr * (1.0 - 0.9 * k / self.steps)


@dataclass
class StepRecord:
    step: int
    loss: float
    accuracy: float
    learning_rate: float


class MoonsDemo:
    """The data, the model and one `step()` of training, kept apart from any printing."""

    def __init__(self, config: DemoConfig) -> None:
        self.config = config
        self.points, self.labels = moons(config.samples, config.noise, config.seed)
        self.model = MLP(2, config.sizes, activation=config.activation, rng=random.Random(config.seed))
        self.optimizer = SGD(self.model.parameters(), lr=config.lr)
        # The inputs never change: make their Values once.
        self.inputs = [[Value(x), Value(y)] for x, y in self.points]
        if config.compiled:
            self._compile()

    def _compile(self) -> None:
        """The loss as a sum over points of hinge_i / n + L2 / n, traced once per example."""
        from chainrule.compiled import compile

        params = self.model.parameters()
        share = 1.0 / len(self.points)
        alpha = self.config.alpha

        def example_loss(x: Value, y: Value, label: Value) -> Value:
            score = self.model([x, y])[0]
            return (1.0 - label * score).relu() * share + l2_penalty(params, alpha) * share

        self.compiled_loss = compile(example_loss, params)
        self.compiled_score = compile(lambda x, y: self.model([x, y])[0], params)
        import numpy as np  # present: compile() checked, with a clear message if not

        self.columns = (np.array([x for x, _ in self.points]), np.array([y for _, y in self.points]),
                        np.array(self.labels, dtype=float))

    def compiled_loss_and_accuracy(self) -> tuple[float, float]:
        """`loss_and_accuracy` by compiled replay: the loss, and each parameter's .grad set to its slope."""
        values, grads = self.compiled_loss.value_and_grad(*self.columns)
        scores = self.compiled_score.values(*self.columns[:2])
        for p, g in zip(self.model.parameters(), grads.tolist()):
            p.grad = g
        correct = ((scores > 0.0) == (self.columns[2] > 0)).sum()
        return float(values.sum()), int(correct) / len(self.labels)

    def loss_and_accuracy(self) -> tuple[Value, float]:
        """max-margin loss + alpha * sum p^2 over all points, and the share classified right."""
        scores = [self.model(x)[0] for x in self.inputs]
        loss = max_margin(scores, self.labels) + l2_penalty(self.model.parameters(), self.config.alpha)
        correct = sum((s.data > 0.0) == (y > 0) for s, y in zip(scores, self.labels))
        return loss, correct / len(self.labels)

    def step(self, k: int) -> StepRecord:
        """Step k (from 0): forward, backward, one SGD update with the scheduled learning rate."""
        if self.config.compiled:
            loss, accuracy = self.compiled_loss_and_accuracy()
        else:
            graph, accuracy = self.loss_and_accuracy()
            self.optimizer.zero_grad()
            graph.backward()
            loss = graph.data
        self.optimizer.lr = self.config.learning_rate(k)
        self.optimizer.step()
        return StepRecord(k + 1, loss, accuracy, self.optimizer.lr)

    def scores(self, points: list[tuple[float, float]] | None = None) -> list[float]:
        """The model's score for each point (the training points by default), without a graph."""
        return [out[0] for out in self.model.predict(self.points if points is None else points)]

    def evaluate(self) -> dict:
        """Loss and accuracy of the current model on the training points."""
        scores = self.scores()
        margin = sum(max(0.0, 1.0 - y * s) for s, y in zip(scores, self.labels)) / len(scores)
        penalty = self.config.alpha * sum(p.data * p.data for p in self.model.parameters())
        correct = sum((s > 0.0) == (y > 0) for s, y in zip(scores, self.labels))
        return {
            "loss": margin + penalty, "accuracy": correct / len(scores),
            "correct": correct, "total": len(scores),
        }


# --- argument checking: each type says what was wrong and what is allowed (argparse exits 2) ---------


def _layer_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.replace(" ", "").split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of layer widths; give whole numbers separated by commas, like 16,16,1"
        ) from None
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(f"layer widths must be at least 1, got {text!r}")
    if sizes[-1] != 1:
        raise argparse.ArgumentTypeError(
            f"the last layer must have width 1 (one score per point), got {text!r}; e.g. 16,16,1"
        )
    return sizes


def _real(what: str, positive: bool) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if not math.isfinite(x) or x < 0.0 or (positive and x == 0.0):
            bound = "> 0" if positive else ">= 0"
            raise argparse.ArgumentTypeError(f"{what} must be a finite number {bound}, got {text!r}")
        return x

    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a small neural network on a toy data set (the moons demo)",
        description=(
            "Train an MLP with chainrule's engine. 'moons': two interleaving half circles, "
            "max-margin loss + alpha * L2, plain SGD with learning rate lr * (1 - 0.9 k / steps). "
            f"The defaults reach 100% training accuracy with seed {DEFAULT_SEED}."
        ),
    )
    parser.add_argument("dataset", choices=["moons"], help="the data set to learn")
    parser.add_argument("--steps", type=whole_number(0, "--steps"), default=100, help="training steps (default 100)")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed for the data and the weights (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--sizes", type=_layer_sizes, default=[16, 16, 1], metavar="W1,W2,...,1",
        help="layer widths after the 2 inputs, ending in 1 (default 16,16,1)",
    )
    parser.add_argument("--activation", choices=ACTIVATIONS, default="relu", help="hidden activation (default relu)")
    parser.add_argument("--lr", type=_real("--lr", True), default=1.0, help="initial learning rate (default 1.0)")
    parser.add_argument("--samples", type=whole_number(2, "--samples"), default=100, help="number of points (default 100)")
    parser.add_argument("--noise", type=_real("--noise", False), default=0.1, help="noise std (default 0.1)")
    parser.add_argument("--alpha", type=_real("--alpha", False), default=1e-4, help="L2 strength (default 1e-4)")
    parser.add_argument("--plot", metavar="FILE", help="write the decision boundary to FILE (.png or .svg)")
    parser.add_argument("--json", action="store_true", help="print the learning curve as JSON instead")
    parser.add_argument(
        "--compiled", action="store_true",
        help="trace one example and replay it over all points with NumPy (chainrule.compile): same curve, faster",
    )
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"chainrule train: error: {message}", file=sys.stderr)
    return 2


def _plot_problem(path: str) -> str | None:
    """Why `path` cannot take the plot, or None if it looks writable (checked before training)."""
    if os.path.isdir(path):
        return f"--plot {path!r} is a directory; give a file name ending in .png or .svg"
    if os.path.splitext(path)[1].lower() not in PLOT_FORMATS:
        return f"--plot {path!r}: the file name must end in .png or .svg"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"--plot {path!r}: the directory {directory} does not exist"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"--plot {path!r}: the file is not writable"
    if not os.path.exists(path) and not os.access(directory, os.W_OK):
        return f"--plot {path!r}: cannot create files in {directory}"
    return None


def run(args: argparse.Namespace) -> int:
    if args.plot is not None:
        problem = _plot_problem(args.plot)
        if problem:
            return _error(problem)
    config = DemoConfig(
        samples=args.samples, noise=args.noise, seed=args.seed, sizes=args.sizes,
        activation=args.activation, steps=args.steps, lr=args.lr, alpha=args.alpha, compiled=args.compiled,
    )
    try:
        demo = MoonsDemo(config)
    except ImportError as error:  # --compiled without NumPy
        return _error(str(error))
    started = time.perf_counter()
    if args.json:
        curve = [demo.step(k) for k in range(config.steps)]
    else:
        curve = _train_with_progress(demo)
    seconds = time.perf_counter() - started
    final = demo.evaluate()
    final["seconds"] = seconds
    if args.plot is not None:
        from chainrule.plot import write_decision_boundary

        try:
            write_decision_boundary(args.plot, demo.scores, demo.points, demo.labels)
        except OSError as error:
            return _error(f"could not write --plot {args.plot!r}: {error.strerror or error}")
    if args.json:
        print(json_document(demo, curve, final, args.plot))
        return 0
    print(
        f"done in {seconds:.1f} s: loss {format_number(final['loss'])}, training accuracy "
        f"{format_percent(final['accuracy'])} ({final['correct']}/{final['total']})"
    )
    if args.plot is not None:
        print(f"decision boundary written to {args.plot}")
    return 0


def json_document(demo: MoonsDemo, curve: list[StepRecord], final: dict, plot: str | None) -> str:
    """What `--json` prints: the run's settings, its whole learning curve and the final evaluation. Strict
    JSON: a run that diverges has a nan loss, sent as null with "loss_text" saying which."""
    return json.dumps(with_number_texts({
        "dataset": "moons", "config": asdict(demo.config),
        "parameters": demo.model.num_parameters(),
        "curve": [asdict(record) for record in curve], "final": final,
        "plot": plot,
    }, every=False), indent=2, allow_nan=False)


def _header(demo: MoonsDemo) -> str:
    c = demo.config
    return (
        f"moons: {count_text(c.samples, 'point')} (noise {format_number(c.noise)}, seed {c.seed}); "
        f"MLP(2, {c.sizes}) with {c.activation}, {demo.model.num_parameters()} parameters; "
        f"{count_text(c.steps, 'step')} of SGD" + (
            f", lr {format_number(c.lr)} decaying linearly to {format_number(c.learning_rate(c.steps - 1))}"
            if c.steps else ""
        )
    )


def _line(record: StepRecord, steps: int) -> str:
    width = len(str(steps))
    return (
        f"step {record.step:>{width}}/{steps}  loss {format_number(record.loss)}  "
        f"accuracy {format_percent(record.accuracy):>5}  lr {format_number(record.learning_rate)}"
    )


def _train_with_progress(demo: MoonsDemo) -> list[StepRecord]:
    """Train, showing a rich progress bar on a terminal and a line every tenth of the way otherwise."""
    from rich.console import Console

    steps = demo.config.steps
    console = Console()
    print(_header(demo))
    curve: list[StepRecord] = []
    if not console.is_terminal:
        every = max(1, steps // 10)
        for k in range(steps):
            record = demo.step(k)
            curve.append(record)
            if record.step % every == 0 or record.step in (1, steps):
                print(_line(record, steps), flush=True)
        return curve

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("training"), BarColumn(), MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}  accuracy {task.fields[accuracy]}"), TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task("train", total=steps, loss="-", accuracy="-")
        for k in range(steps):
            record = demo.step(k)
            curve.append(record)
            progress.update(task, advance=1, loss=format_number(record.loss), accuracy=format_percent(record.accuracy))
    return curve
