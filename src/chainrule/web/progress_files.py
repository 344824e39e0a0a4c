"""A learner's progress as a file, sent from a temporary file (the learner's own export, and their teacher's
copy before removing them): one consistent read, no copy held in the server's memory while it is sent."""

from __future__ import annotations

from typing import Any

from fastapi import Request

def spooled_export(store: Any) -> Any:
    import json
    import tempfile

    spool = tempfile.TemporaryFile()  # no name: its space is freed when it is closed, however the answer ends
    spool.write(json.dumps(store.export_data()).encode("utf-8"))
    spool.seek(0)
    return spool


def chunks(spool: Any, size: int = 64 * 1024) -> Any:
    with spool:
        while chunk := spool.read(size):
            yield chunk


def file_slot(request: Request) -> Any:
    """One progress file read or written at a time in this process: a file's tree takes many times its size."""
    import asyncio

    loop = asyncio.get_running_loop()
    slot = getattr(request.app.state, "file_slot", None)
    if slot is None or slot[0] is not loop:
        slot = request.app.state.file_slot = (loop, asyncio.Lock())
    return slot[1]
