"""The app's access to the progress store (opened on first use, retried after a failure) and to graded
runs (classes/graded_runs.py's seam), so that the routes stay thin and free of SQL. (What the grader offers
comes from chainrule.lessons.)"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from chainrule.classes.graded_runs import GradedRuns

__all__ = ["StoreUnavailable", "StoreAccess", "review_text"]


class StoreUnavailable(Exception):
    """The progress store cannot be used; str() is the StoreError text (what is wrong, what to do)."""


def review_text(store_text: str) -> str:
    """The store's "again in 2 days" as the page says it: "comes back in review in 2 days"."""
    text = store_text.strip()
    if text.startswith("again "):
        return "comes back in review " + text[len("again "):]
    return f"comes back in review: {text}"


class StoreAccess:
    """The app's connection to the progress store.

    The store is opened on first use; if that fails, the error text is kept and the next request tries
    again (so fixing a locked or read-only directory does not need a restart).
    """

    def __init__(self, data_dir: str | os.PathLike | None, clock: Callable | None = None, store: Any = None,
                 runs: "GradedRuns | None" = None) -> None:
        from chainrule.classes.graded_runs import InProcessRuns

        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.clock = clock
        self._store = store
        # Graded runs (classes/graded_runs.py): graded here and kept in this store, unless class mode gives its own.
        self.runs: GradedRuns = runs if runs is not None else InProcessRuns(lambda learner: self.store())
        self._lock = threading.Lock()
        self.last_store_error: str | None = None

    def store(self, request: Any = None) -> Any:
        """The open ProgressStore, or StoreUnavailable with the StoreError text. (``request``: class mode
        hands each request the signed-in account's own view; the personal store is everyone's.)"""
        if self._store is not None:
            return self._store
        with self._lock:
            if self._store is None:
                try:
                    from chainrule.progress import StoreError, open_store
                except ImportError as error:
                    raise StoreUnavailable(f"the progress store is not available in this build: {error}") from error
                try:
                    self._store = open_store(self.data_dir, clock=self.clock)
                    self.last_store_error = None
                except StoreError as error:
                    self.last_store_error = str(error)
                    raise StoreUnavailable(str(error)) from error
        return self._store

    def try_store(self, request: Any = None) -> tuple[Any, str | None]:
        try:
            return self.store(request), None
        except StoreUnavailable as error:
            return None, str(error)

    def close(self) -> None:
        with self._lock:
            if self._store is not None and hasattr(self._store, "close"):
                self._store.close()
            self._store = None
