"""Progress and spaced review: everything a learner does, kept across restarts.

    from chainrule.progress import open_store, ProgressStore, StoreError
    store = open_store(data_dir=None, clock=None)            # creates the store if it is missing
    store = open_store(data_dir=None, create=False)          # read-only commands: StoreError if missing
    store = open_store(database="postgresql://...")           # a class's store in PostgreSQL
    learner = store.for_learner(account_id)                   # one learner's view of a class store

The store is one SQLite file (WAL mode) in the user's data directory, or a PostgreSQL database
(connection.py); migrations.py brings either to the current schema. Quiz questions become FSRS review
cards (py-fsrs). See docs/progress.md.
"""

from chainrule.progress.exchange import EXPORT_VERSION, FORMAT_NAME, validate_export
from chainrule.progress.scheduling import SCHEDULER_SETTINGS, interval_phrase, make_scheduler
from chainrule.progress.schema import SCHEMA_VERSION
from chainrule.progress.store import (
    DATABASE_NAME,
    ENV_DATA_DIR,
    NOT_FOUND,
    PERSONAL_LEARNER,
    ProgressStore,
    default_data_dir,
    open_store,
)
from chainrule.progress.store_errors import StoreError

__all__ = [
    "DATABASE_NAME",
    "ENV_DATA_DIR",
    "EXPORT_VERSION",
    "FORMAT_NAME",
    "NOT_FOUND",
    "PERSONAL_LEARNER",
    "SCHEDULER_SETTINGS",
    "SCHEMA_VERSION",
    "ProgressStore",
    "StoreError",
    "default_data_dir",
    "interval_phrase",
    "make_scheduler",
    "open_store",
    "validate_export",
]
