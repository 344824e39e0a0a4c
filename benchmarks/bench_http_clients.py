"""What a load generator's HTTP client costs it: httpx.AsyncClient against browser_http.Browser, side by side.

    .venv/bin/python benchmarks/bench_http_clients.py [--requests 3000] [--browsers 40] [--rounds 5]

One `chainrule serve` (the personal app, in a throwaway data folder) and, in this one process, the two clients
in turn each round: --browsers clients of each kind (at most 6 connections each, as a browser keeps) GET the
sign-in page --requests times in all. Printed: the CPU this process spent per request (time.process_time, so
each client is charged its own garbage collection), the median over the rounds, and the ratio. The server's
CPU is not counted: this is what the class benchmark's load generator spends on the same cores as the servers.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import httpx  # noqa: E402
from bench_class import free_port, start, stop  # noqa: E402
from browser_http import Browser  # noqa: E402


def make_httpx(base: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base, limits=httpx.Limits(max_connections=6, max_keepalive_connections=6))


async def load(make, base: str, requests: int, browsers: int) -> float:
    """CPU milliseconds of this process per request, for ``requests`` GETs spread over ``browsers`` clients."""
    clients = [make(base) for _ in range(browsers)]

    async def one(client, count: int) -> None:
        for _ in range(count):
            answer = await client.request("GET", f"{base}/sign-in")
            if answer.status_code != 200:
                raise SystemExit(f"the server answered {answer.status_code}")

    gc.collect()
    before = time.process_time()
    await asyncio.gather(*(one(client, requests // browsers) for client in clients))
    spent = time.process_time() - before
    await asyncio.gather(*(client.aclose() for client in clients))
    return spent / (requests // browsers * browsers) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--browsers", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, CHAINRULE_DATA_DIR=tempfile.mkdtemp(prefix="chainrule-bench-"), PYTHONUNBUFFERED="1")
    env.pop("CHAINRULE_DATABASE", None)
    server = start(["serve", "--port", str(port), "--workers", "1"], env, "http://")
    try:
        figures: dict[str, list[float]] = {"httpx": [], "browser_http": []}
        for _ in range(args.rounds):
            for name, make in (("httpx", make_httpx), ("browser_http", Browser)):
                figures[name].append(asyncio.run(load(make, base, args.requests, args.browsers)))
    finally:
        stop(server)
    medians = {name: statistics.median(values) for name, values in figures.items()}
    print(f"{args.requests} GETs over {args.browsers} clients, {args.rounds} rounds; CPU of the load generator a request:")
    for name, values in figures.items():
        print(f"  {name:13} median {medians[name]:.2f} ms  (rounds: {', '.join(f'{v:.2f}' for v in values)})")
    print(f"  httpx / browser_http: {medians['httpx'] / medians['browser_http']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
