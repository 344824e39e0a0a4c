"""Gradient checkpointing's memory: the peak traced by tracemalloc while a chain of N ops is built and
differentiated, kept whole and cut into `func.checkpoint` segments of K ops.

    .venv/bin/python benchmarks/bench_checkpoint.py [--nodes 1000000] [--segment 1000]

Each op of the chain is one node (v * c, then sin: two per step); each way runs in a fresh process, so one
way's freed memory does not count for the other. Prints the gradient (the same up to rounding) and the peak.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import tracemalloc


def run(nodes: int, segment: int, checkpointed: bool) -> None:
    from chainrule import Value, func

    def piece(v):
        for _ in range(segment // 2):
            v = (v * 0.999999).sin()
        return v

    cut = func.checkpoint(piece, name="segment")
    x = Value(0.5)
    tracemalloc.start()
    started = time.process_time()
    v = x
    for _ in range(nodes // segment):
        v = cut(v) if checkpointed else piece(v)
    v.backward()
    seconds = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    way = f"checkpointed every {segment}" if checkpointed else "whole"
    print(f"{nodes} nodes, {way}: gradient {x.grad!r}, peak {peak / 2**20:.1f} MiB, {seconds:.1f} s CPU (traced)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--segment", type=int, default=1000)
    parser.add_argument("--one", choices=["whole", "checkpointed"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run(args.nodes, args.segment, args.one == "checkpointed")
        return
    for way in ("whole", "checkpointed"):
        subprocess.run([sys.executable, __file__, "--nodes", str(args.nodes), "--segment", str(args.segment),
                        "--one", way], check=True)


if __name__ == "__main__":
    main()
