"""A class's own lessons: the folders `chainrule serve --lessons DIR` serves, the same in every process that
grades or counts for the class, told apart by their content hash (lessons/fingerprint.py).

    lessons = load_lessons(["class-lessons"])       # serve and worker: the folders added, checked; the hash
    before = record_lessons(store, lessons, folders) # serve: the class database says what it serves now
    use_served_lessons(store)                        # `chainrule class`: the same lessons as the server, or ClassError
                                                     # (the same files as the server checked: not checked again)
    mismatch(run_hash, worker_hash)                  # a worker's refusal of a run stamped with other lessons

One rule: a run is graded only with the lessons it was accepted with. The server stamps every queued run with
its hash (progress/run_jobs.py); a worker takes only the runs stamped with its own and says why it leaves the
others (they wait for a worker started with the server's folder, or end at their deadline as any run does).
"""

from __future__ import annotations

from pathlib import Path

from chainrule.classes.accounts import ClassError
from chainrule.progress.lessons_store import ServedLessons, record_served_lessons, served_lessons
from chainrule.progress.store import ProgressStore

__all__ = ["LessonsRefused", "load_lessons", "mismatch", "record_lessons", "served_elsewhere", "use_served_lessons"]


class LessonsRefused(Exception):
    """The lessons asked for cannot be used; str() says which file is wrong and what to do."""


def load_lessons(folders: list[str]) -> str:
    """Add the lesson folders of ``folders`` (each a lesson folder or a folder of them, as `chainrule lesson
    --lessons` takes them; one named as a built-in lesson takes its place), checked first; the hash of the
    lessons this process now has. LessonsRefused names the first problem."""
    from chainrule.lessons import LessonDataError
    from chainrule.lessons.fingerprint import lessons_hash
    from chainrule.lessons.validate import add_checked_lesson_dirs
    from chainrule.text_safety import terminal_text

    try:
        add_checked_lesson_dirs([Path(folder) for folder in folders])
    except LessonDataError as error:
        raise LessonsRefused(terminal_text(f"cannot use the lessons in --lessons: {error}. `chainrule lessons check "
                                           "DIR` lists every problem.")) from error
    return lessons_hash()


def record_lessons(store: ProgressStore, lessons_hash: str, folders: list[str]) -> ServedLessons | None:
    """The class database records what this server serves (absolute folders, so that `chainrule class` run
    from anywhere on this host finds them); what it recorded before."""
    return record_served_lessons(store, lessons_hash, [str(Path(folder).resolve()) for folder in folders])


def use_served_lessons(store: ProgressStore) -> str:
    """Load the lessons the class's server recorded (none recorded: the built-in ones), so that a `chainrule
    class` command counts and grades with the server's lessons; their hash. ClassError when this host cannot
    have them: a folder missing here, or changed since the server started."""
    served = served_lessons(store)
    folders = served.folders if served is not None else []
    missing = [folder for folder in folders if not Path(folder).exists()]
    if missing:
        raise ClassError(f"the class's lessons are in {missing[0]} (as `chainrule serve --lessons` gave them), which "
                         "this host does not have: run this command where the server runs, or copy the folder to "
                         "the same place here", kind="not-found")
    if served is not None and _added_unchecked(folders) == served.hash:
        return served.hash  # the very files the server checked before it recorded their hash: not checked again
    try:
        here = load_lessons(folders)
    except LessonsRefused as error:
        raise ClassError(str(error), kind="invalid") from error
    if served is not None and here != served.hash:
        raise ClassError(_changed(served, here), kind="conflict")
    return here


def _added_unchecked(folders: list[str]) -> str | None:
    """The hash of the lessons with ``folders`` added as they are, without the checks (which train the networks
    of a lesson's plot: seconds of CPU); None when a folder cannot even be added."""
    from chainrule.lessons import LessonDataError, add_lesson_dirs
    from chainrule.lessons.fingerprint import lessons_hash

    try:
        add_lesson_dirs([Path(folder) for folder in folders])
    except LessonDataError:
        return None
    return lessons_hash()


def _changed(served: ServedLessons, here: str) -> str:
    from chainrule.lessons.fingerprint import short_hash

    where = " ".join(served.folders) or "the built-in lessons"
    return (f"the class's lessons ({where}) have changed since `chainrule serve` started with them (it recorded "
            f"lessons {short_hash(served.hash)}; they are {short_hash(here)} now): restart `chainrule serve` "
            "(and every `chainrule worker`) with them, then run this again")


def served_elsewhere(store: ProgressStore, worker_hash: str, folders: list[str]) -> str | None:
    """A worker's words at its start when the class's server recorded other lessons than the worker's; None
    when they are the same (or no server has recorded any yet)."""
    served = served_lessons(store)
    if served is None or served.hash == worker_hash:
        return None
    return mismatch(served.hash, worker_hash, folders, waiting=False)


def mismatch(run_hash: str, worker_hash: str, folders: list[str], *, waiting: bool = True) -> str:
    """A worker's words for leaving a run that was accepted with other lessons than its own (waiting False:
    at its start, for the lessons the class's server recorded)."""
    from chainrule.lessons.fingerprint import short_hash

    mine = " ".join(folders) or "the built-in lessons"
    theirs = "a run waits to be graded with" if waiting else "the class's server serves"
    return (f"{theirs} lessons {short_hash(run_hash)}, and this worker has lessons {short_hash(worker_hash)} "
            f"({mine}): it leaves such runs for a worker with the server's lessons. Start "
            "this worker with the same lesson folder as `chainrule serve` (`chainrule worker --lessons DIR`, a "
            "copy of the server's DIR).")
