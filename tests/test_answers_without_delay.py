"""Each answer of `chainrule lesson` and `chainrule serve` leaves as soon as it is written: every connection the
servers accept has Nagle's algorithm off (TCP_NODELAY; commands/serve_processes.answer_without_delay). With it
on, an answer's body, written after its head, waited for the client to acknowledge the head, which clients
delay: every request to these servers took about 40 ms more (measured 2026-12-08 at 44 ms against 0.3 ms, a
raw socket against `chainrule serve`, docs/performance.md).

The option is read from the server's own end of a connection (tests/server_sockets.py), not inferred from a
time; test_serve_processes reads it on each web process of `chainrule serve --workers 2`."""

from __future__ import annotations

import asyncio
import http.client
import socket
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from chainrule.commands.serve_processes import answer_without_delay
from server_sockets import no_delay_of, server_end
from web_process import start, stop, wait_for_url

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's sockets in /proc")]


def assert_every_connection_answers_without_delay(pid: int, port: int, path: str) -> None:
    """Two kept-alive connections, each answered once: the server's ends of both have TCP_NODELAY."""
    connections = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(2)]
    try:
        for connection in connections:
            connection.request("GET", path)
            answer = connection.getresponse()
            answer.read()  # the whole answer, the connection kept
            assert answer.version == 11, path
        ends = [server_end(port, connection.sock.getsockname()[1], {pid}) for connection in connections]
        assert [no_delay_of(*end) for end in ends] == [1] * len(connections), ends
    finally:
        for connection in connections:
            connection.close()


def test_every_connection_to_the_lesson_server_sends_its_answers_at_once(tmp_path):
    process = start(["--port", "0", "--data-dir", str(tmp_path / "data")])
    try:
        url = wait_for_url(process)  # printed before the server answers: the first connection may come early
        assert_every_connection_answers_without_delay(process.pid, int(url["port"]), "/static/css/lesson.css")
    finally:
        stop(process)


def test_a_listening_socket_made_with_proto_0_is_given_to_asyncio_as_tcp():
    """The rule itself, in this process: asyncio turns the algorithm off on accepted connections only for a
    listening socket whose proto is IPPROTO_TCP; answer_without_delay gives it one, and leaves other sockets."""

    async def accepted_no_delay(listening: socket.socket) -> int:
        accepted: asyncio.Future = asyncio.get_running_loop().create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        server = await asyncio.get_running_loop().create_server(Record, sock=listening)
        _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
        try:
            return await asyncio.wait_for(accepted, 30)
        finally:
            writer.close()
            server.close()

    def listening() -> socket.socket:
        made = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, as the commands make theirs
        made.bind(("127.0.0.1", 0))
        made.listen()
        return made

    def served(sock: socket.socket) -> int:
        # In a thread of its own: another test of this worker may have left an event loop running in this one.
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, accepted_no_delay(sock)).result()

    assert served(listening()) == 0  # the fault, as asyncio has it
    plain = listening()
    given = answer_without_delay(plain)
    assert given.proto == socket.IPPROTO_TCP and given.getsockname() == plain.getsockname()
    assert served(given) == 1
    plain.close()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as local:
        assert answer_without_delay(local) is local
