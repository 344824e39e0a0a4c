"""A learner's progress as a file, sent from a temporary file (the learner's own export, and their teacher's
copy before removing them): one consistent read, no copy held in the server's memory while it is sent."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from chainrule.web.app_state import app_state


def spooled_export(store: Any) -> Any:
    import io
    import json
    import tempfile

    spool = tempfile.TemporaryFile()  # no name: its space is freed when it is closed, however the answer ends
    # Encoded piece by piece into the file: one whole text and its bytes would be two more copies of a file
    # that may be 32 MB, which the allocator keeps after they are freed.
    text = io.TextIOWrapper(spool, encoding="utf-8")
    json.dump(store.export_data(), text)
    text.flush()
    text.detach()
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
    state = app_state(request)
    slot = state.file_slot
    if slot is None or slot[0] is not loop:
        slot = state.file_slot = (loop, asyncio.Lock())
    return slot[1]
