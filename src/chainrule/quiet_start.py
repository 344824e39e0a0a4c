"""A server's start without Python's cyclic garbage collector: `chainrule lesson`, `serve` and `worker`.

    starting("lesson")   # cli.main, before the command's module is imported: collection off
    ...                  # imports (FastAPI, pydantic's schemas and validators), the app and its routes
    started()            # when it is about to serve: serve_on, the supervisor of `serve --workers` before it
                         # forks, a worker before it takes runs, the supervisor of `worker --concurrency N`
    ended()              # cli.main, when the command returns: collection on again, if started() never came

The collector runs a pass over the youngest objects every 700 new ones, and every tenth and hundredth pass
one over older objects. A server's start makes several hundred thousand objects that live as long as the
process (modules, classes, the schemas and validators of the API's models, the routes), so the collector
walks the same live objects again and again (176 passes in one `chainrule lesson` start) and frees next to
nothing; and the last collection, as the process exits, walks them all once more.

started() freezes what the start made (gc.freeze: those objects are left out of every later collection, the
one at exit included; the processes `serve --workers` forks also keep sharing their pages, which a collection
would otherwise write to) and turns collection back on, for the requests. A command that ends without
serving (refused arguments) gets collection back from ended(), with nothing frozen. Only the commands in
SERVER_COMMANDS are affected; no other command, nor a program that calls chainrule's functions itself,
starts with the collector off. The CPU it saves: docs/performance.md, "A server's start without the garbage
collector".
"""

from __future__ import annotations

import gc

__all__ = ["SERVER_COMMANDS", "ended", "started", "starting"]

SERVER_COMMANDS = frozenset({"lesson", "serve", "worker"})

_quiet = False  # collection is off because starting() turned it off (not because another program did)


def starting(command: str | None) -> None:
    """Collection off while ``command`` starts, if it is a server (SERVER_COMMANDS) and collection is on."""
    global _quiet
    if command in SERVER_COMMANDS and gc.isenabled():
        gc.disable()
        _quiet = True


def started() -> None:
    """The start is over: what it made is frozen, and collection is on again. Nothing if starting() did not
    turn it off."""
    global _quiet
    if _quiet:
        gc.freeze()
        gc.enable()
        _quiet = False


def ended() -> None:
    """The command returns: collection on again if the start never reached started() (nothing frozen)."""
    global _quiet
    if _quiet:
        gc.enable()
        _quiet = False
