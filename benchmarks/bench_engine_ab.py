"""The eager engine before and after a change, in one process: did the change slow it down?

Loads engine.py and ops.py as they are at a git revision (default: main) into a temporary package, then
times the same workloads on that engine and on the working tree's, alternating which goes first, and
reports the median CPU time of each and their ratio (CPU time, not wall time, so that other work on a
shared machine weighs less; both arms see the same machine). Workloads, forward + backward each:
  chain   (x * w).tanh() 10^4 long
  sum     a sum of 10^5 products of fresh leaves
  mixed   every op kind, with numbers on both sides of an operator (the operand-protocol paths)
With --instructions it counts instead the machine instructions each arm executes (valgrind's callgrind,
smaller sizes: chain 2,000, sum 20,000, mixed 2,000), minus those of the same process doing nothing:
a count that other work on the machine cannot disturb.
Run: python benchmarks/bench_engine_ab.py [--base REV] [--rounds 15] [--instructions]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chainrule.engine as current

ROOT = Path(__file__).resolve().parent.parent
XS = [0.001 * (i % 97) for i in range(100_000)]
WS = [0.002 * (i % 89) - 0.05 for i in range(100_000)]


ENGINE_MODULES = ("engine", "ops", "modes")  # the engine's own modules (modes.py since the split)


def engine_at(revision: str, folder: Path):
    """chainrule's engine as it was at `revision`, importable as `chainrule_base.engine`."""
    package = folder / "chainrule_base"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ENGINE_MODULES:
        found = subprocess.run(["git", "show", f"{revision}:src/chainrule/{name}.py"], cwd=ROOT,
                               capture_output=True, text=True)
        if found.returncode != 0:  # not in that revision (modes.py before the split)
            continue
        source = found.stdout
        for module in ENGINE_MODULES:
            source = source.replace(f"from chainrule import {module}", f"from chainrule_base import {module}")
            source = source.replace(f"from chainrule.{module} import", f"from chainrule_base.{module} import")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    return importlib.import_module("chainrule_base.engine")


def chain(Value, n: int = 10_000) -> None:
    x, w = Value(0.5), Value(0.9)
    out = x
    for _ in range(n):
        out = (out * w).tanh()
    out.backward()


def sum_of_products(Value, m: int = 100_000) -> None:
    total = Value(0.0)
    for x, w in zip(XS[:m], WS[:m]):
        total = total + Value(x) * Value(w)
    total.backward()


def mixed(Value, n: int = 20_000) -> None:
    x = Value(0.3)
    out = x
    for _ in range(n):
        out = (((out * 0.5 + 1.0) / 2.0 - x).relu() + (2.0 * out).sigmoid() * 0.1 + abs(-out) ** 2 * 0.01
               + (out * out + 1.0).log() * 0.01 + (1 - out).exp() * 0.001)
        out = out.tanh()
    out.backward()


SMALL = {"none": lambda Value: None, "chain": lambda Value: chain(Value, 2_000),
         "sum_of_products": lambda Value: sum_of_products(Value, 20_000), "mixed": lambda Value: mixed(Value, 2_000)}


def instructions(arm: str, workload: str, folder: str) -> int:
    """Instructions a fresh process executes to import both engines and run `workload` on `arm`."""
    # This checkout's src/ first: a copy of the repository (git archive of a commit) measures that commit's
    # engine, not the editable install's, which may be changing while the count runs.
    script = (f"import sys; sys.path[:0] = [{str(Path(__file__).parent)!r}, {folder!r}, {str(ROOT / 'src')!r}]\n"
              "import bench_engine_ab as ab, chainrule_base.engine as base, chainrule.engine as current\n"
              f"ab.SMALL[{workload!r}]({arm}.Value)\n")
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", script],
                         capture_output=True, text=True, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    for line in run.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split()[-1])
    raise RuntimeError(f"valgrind gave no count:\n{run.stderr[-2000:]}")


def count_instructions(revision: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine_at(revision, Path(folder))
        instructions("base", "none", folder)  # a first run writes the .pyc files: not part of any count
        idle = {arm: instructions(arm, "none", folder) for arm in ("base", "current")}
        print(f"| workload (forward + backward), instructions | {revision} | working tree | working tree / {revision} |")
        print("|---|---|---|---|")
        for workload in ("chain", "sum_of_products", "mixed"):
            before = instructions("base", workload, folder) - idle["base"]
            after = instructions("current", workload, folder) - idle["current"]
            print(f"| {workload} | {before / 1e6:.1f} M | {after / 1e6:.1f} M | {after / before:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="main", help="git revision to compare with (default: main)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--instructions", action="store_true", help="count instructions with valgrind instead")
    args = parser.parse_args()
    if args.instructions:
        count_instructions(args.base)
        return
    with tempfile.TemporaryDirectory() as folder:
        base = engine_at(args.base, Path(folder))
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            arms = [("base", base), ("current", current)]
            for workload in (chain, sum_of_products, mixed):
                for label, engine in arms if r % 2 else arms[::-1]:
                    gc.collect()
                    start = time.process_time()
                    workload(engine.Value)
                    times.setdefault((workload.__name__, label), []).append(time.process_time() - start)
    print(f"| workload (forward + backward) | {args.base} | working tree | working tree / {args.base} |")
    print("|---|---|---|---|")
    for workload in ("chain", "sum_of_products", "mixed"):
        before = statistics.median(times[(workload, "base")])
        after = statistics.median(times[(workload, "current")])
        print(f"| {workload} | {before * 1e3:.1f} ms | {after * 1e3:.1f} ms | {after / before:.3f} |")


if __name__ == "__main__":
    main()
