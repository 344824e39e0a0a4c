"""A class's address: where its learners open it, for the links `chainrule class` prints (issue 43, item 2).

One rule: the address given last wins. `chainrule class create NAME --url URL` (or `invite`, `teacher-link`,
`reset-link` with --url) remembers URL for the class; `chainrule serve --url URL` remembers URL for every
class it serves; a class with none remembered takes the address of the first `chainrule serve` that serves it
(its --host and --port). Until then the links are printed with the address `chainrule serve` has by default,
DEFAULT_ADDRESS.
"""

from __future__ import annotations

from chainrule.progress.class_store import ClassStore
from chainrule.progress.store import ProgressStore

__all__ = ["DEFAULT_ADDRESS", "DEFAULT_PORT", "class_address", "remember_address", "served_at"]

DEFAULT_PORT = 8000  # `chainrule serve`'s port, on 127.0.0.1, unless told otherwise
DEFAULT_ADDRESS = f"http://127.0.0.1:{DEFAULT_PORT}"


def class_address(store: ProgressStore, class_id: int) -> str:
    """The address to print the class's links with."""
    return (ClassStore(store).url(class_id) or DEFAULT_ADDRESS).rstrip("/")


def remember_address(store: ProgressStore, class_id: int, url: str) -> None:
    """The teacher gave the class's address (`chainrule class ... --url URL`)."""
    ClassStore(store).set_url(url.rstrip("/"), class_id)


def served_at(store: ProgressStore, url: str, *, given: bool) -> None:
    """`chainrule serve` serves every class of the store at ``url``: given with --url, every class remembers it;
    else only the classes that remember none yet."""
    ClassStore(store).set_url(url.rstrip("/"), only_unset=not given)
