"""The server's end of a test's TCP connection, read from the kernel: which process holds it (the web processes of
`chainrule serve --workers N` share one port) and its options (read on a copy of the server's descriptor, through
Linux's pidfd_getfd, which needs the right to trace the server: a parent has it). Used by test_serve_processes and
test_answers_without_delay."""

from __future__ import annotations

import ctypes
import os
import re
import socket
from pathlib import Path

SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture (5.6 and later)


def children_of(pid: int) -> set[int]:
    return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def server_end(server_port: int, client_port: int, candidates: set[int]) -> tuple[int, int]:
    """(process, descriptor) among ``candidates`` holding the server's end of the connection from ``client_port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = (int(address.rsplit(":", 1)[1], 16) for address in fields[1:3])
            if (local, remote) == (server_port, client_port):
                inodes.add(fields[9])
    assert inodes, f"no server socket for the connection from port {client_port}"
    for pid in candidates:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                link = os.readlink(fd)
            except OSError:  # closed meanwhile
                continue
            if re.fullmatch(r"socket:\[(\d+)\]", link) and link[8:-1] in inodes:
                return pid, int(fd.name)
    raise AssertionError(f"no process of {sorted(candidates)} holds the connection from port {client_port}")


def no_delay_of(pid: int, descriptor: int) -> int:
    """TCP_NODELAY of another process's socket, read on a copy of its descriptor."""
    pidfd = os.pidfd_open(pid)
    try:
        copy = ctypes.CDLL(None, use_errno=True).syscall(SYS_PIDFD_GETFD, pidfd, descriptor, 0)
    finally:
        os.close(pidfd)
    if copy < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"pidfd_getfd of the server's socket: {os.strerror(error)}")
    with socket.socket(fileno=copy) as sock:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
