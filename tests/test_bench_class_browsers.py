"""The browser-like class benchmark (docs/performance.md, "A class under load, learners as browsers"): its lean
HTTP client behaves as a browser's network stack does, and the documented command runs (a tiny curve)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from browser_http import Browser, Dropped  # noqa: E402


class Site:
    """A raw HTTP/1.1 server on loopback whose answers and closings a test scripts: ``answer(number)`` gives the
    bytes for the connection's ``number``-th request (None: close the connection without answering)."""

    def __init__(self, answer) -> None:
        self.answer, self.connections, self.requests = answer, 0, []

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"Content-Length: (\d+)", head)
                body = await reader.readexactly(int(length.group(1))) if length else b""
                self.requests.append((head.decode(), body))
                number += 1
                reply = self.answer(self.connections, number)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def run_async(coroutine):
    """asyncio.run in a thread of its own: a browser test before this one in the same worker may have left
    Playwright's event loop running in this thread."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=60)


def ok(body: bytes = b"hello", extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def test_a_request_on_a_kept_alive_connection_the_server_closed_goes_again_once_on_a_new_one() -> None:
    async def scenario():
        # The first connection answers once and is closed by the server before the second request reads.
        async with Site(lambda connection, number: ok() if number == 1 else None) as base:
            browser = Browser(base)
            first = await browser.request("GET", "/a")
            second = await browser.request("PUT", "/b", json={"value": 1})
            await browser.aclose()
            return first, second, browser.resent

    first, second, resent = run_async(scenario())
    assert (first.status_code, first.content, second.status_code, resent) == (200, b"hello", 200, 1)


def test_a_request_that_fails_on_a_new_connection_is_not_sent_again() -> None:
    async def scenario():
        site = Site(lambda connection, number: None)
        async with site as base:
            browser = Browser(base)
            with pytest.raises(Dropped):
                await browser.request("POST", "/grade", json={"source": "x"})
            return site, browser.resent

    site, resent = run_async(scenario())
    assert (len(site.requests), resent) == (1, 0)


def test_cookies_are_kept_sent_and_forgotten_as_the_server_says() -> None:
    replies = [ok(extra="Set-Cookie: session=abc; Path=/; HttpOnly\r\nSet-Cookie: csrf=\"t1\"; SameSite=Lax\r\n"),
               ok(),
               ok(extra="Set-Cookie: session=; Max-Age=0; Path=/\r\n"),
               ok()]

    async def scenario():
        site = Site(lambda connection, number: replies[number - 1])
        async with site as base:
            browser = Browser(base)
            for path in ("/sign-in", "/page", "/sign-out", "/page"):
                await browser.request("GET", path)
            return site.requests

    sent = [re.search(r"Cookie: ([^\r]*)", head) for head, _ in run_async(scenario())]
    assert [match.group(1) if match else None for match in sent] == [None, "session=abc; csrf=t1",
                                                                    "session=abc; csrf=t1", "csrf=t1"]


def test_chunked_and_compressed_bodies_are_read_and_decoded() -> None:
    import gzip

    packed = gzip.compress(b'{"state": "graded"}')
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
               + f"{5:x}\r\n".encode() + packed[:5] + b"\r\n"
               + f"{len(packed) - 5:x}\r\n".encode() + packed[5:] + b"\r\n0\r\n\r\n")

    async def scenario():
        async with Site(lambda connection, number: chunked) as base:
            browser = Browser(base)
            answers = [await browser.request("GET", "/api/jobs/1") for _ in range(2)]
            await browser.aclose()
            return answers

    answers = run_async(scenario())
    assert [answer.json() for answer in answers] == [{"state": "graded"}] * 2
    assert answers[0].num_bytes_downloaded == len(packed)


def test_a_browser_keeps_at_most_six_connections_to_a_site() -> None:
    async def scenario():
        site = Site(lambda connection, number: ok())
        async with site as base:
            browser = Browser(base)
            await asyncio.gather(*(browser.request("GET", f"/static/{index}") for index in range(20)))
            await browser.aclose()
            return site.connections

    assert run_async(scenario()) <= 6


# A bound that only catches a hang: on a busy machine one run may legitimately take minutes (a starved endless
# loop is given every hang-guard window: 127 s with two burners per core; the benchmark's ANSWER_BOUND).
BENCHMARK_HANG_SECONDS = 900


@pytest.mark.timeout(BENCHMARK_HANG_SECONDS + 60)
@pytest.mark.parametrize("where", [["--endless", "0"], ["--sqlite", "--generators", "1"]], ids=["postgresql", "sqlite"])
def test_the_documented_benchmark_runs_a_small_class_with_nothing_failed_or_lost(where: list[str]) -> None:
    """docs/performance.md's command, on 4 learners: it runs end to end and its figures say nothing failed.
    One learner runs an endless loop in the SQLite class (the default: at least one); in PostgreSQL none
    does (`--endless 0`): the loop takes its whole CPU limit, and longer on a busy machine, while the
    worker's queue is tested by the other runs and by tests/test_jobs.py."""
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_class_browsers.py"), "--curve", "4",
                          "--web", "2", "--workers", "1", "--think", "0.05", "--ramp", "0.5", "--exercises", "1", *where],
                         cwd=ROOT, capture_output=True, text=True, timeout=BENCHMARK_HANG_SECONDS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"4 learners .* requests:", run.stdout), run.stdout
    assert re.search(r"; failed 0 \(", run.stdout), run.stdout
    assert re.search(r"requests, 0 failed\)", run.stdout), run.stdout  # the learner in a process of its own
    if "--sqlite" in where:
        assert re.search(r"runs: \d+ graded, 0 answered busy, 0 refused", run.stdout), run.stdout
    else:
        assert re.search(r"lost 0, doubled 0", run.stdout), run.stdout


def test_the_benchmark_refuses_a_negative_number_of_endless_loops(capsys) -> None:
    import bench_class_browsers

    with pytest.raises(SystemExit) as refused:
        bench_class_browsers.main(["--curve", "4", "--endless", "-1"])
    assert refused.value.code == 2
    assert "--endless is a number of learners, 0 or more (got -1)" in capsys.readouterr().err


def test_the_clients_benchmark_runs_and_compares_both_clients() -> None:
    """docs/performance.md's `benchmarks/bench_http_clients.py`, on a few requests."""
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_http_clients.py"), "--requests", "40",
                          "--browsers", "4", "--rounds", "1"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"httpx +median [\d.]+ ms", run.stdout) and re.search(r"browser_http +median [\d.]+ ms", run.stdout)
    assert re.search(r"httpx / browser_http: [\d.]+x", run.stdout), run.stdout
