"""A class's address: where its learners open it, for the links `chainrule class` prints (issue 43, item 2).

One rule: the address given last wins. `chainrule class create NAME --url URL` (or `invite`, `teacher-link`,
`reset-link` with --url) remembers URL for the class; `chainrule serve --url URL` remembers URL for every
class it serves; a class with none remembered takes the address of the first `chainrule serve` that serves it
(its --host and --port). Until then the links are printed with the address `chainrule serve` has by default,
DEFAULT_ADDRESS.

An address is checked by one rule, check_address: http:// or https://, a host (a name, an IPv4 address or
an [IPv6] one) and a port if need be, and nothing else (no path, query, user or password): the links add
their own paths to it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from chainrule.errors import InputError

if TYPE_CHECKING:  # the stores load where an address is read or written: `chainrule class --help` needs neither
    from chainrule.progress.store import ProgressStore

__all__ = ["ADDRESS_FORM", "DEFAULT_ADDRESS", "DEFAULT_PORT", "check_address", "class_address", "remember_address",
           "served_at"]

DEFAULT_PORT = 8000  # `chainrule serve`'s port, on 127.0.0.1, unless told otherwise
DEFAULT_ADDRESS = f"http://127.0.0.1:{DEFAULT_PORT}"
ADDRESS_FORM = "http:// or https://, a host and an optional port, nothing after it: like https://class.example.org or http://127.0.0.1:8000"
_HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?",
                        re.IGNORECASE)


def check_address(url: str, option: str = "--url") -> str:
    """``url`` without a trailing slash, if it is an address learners can open; InputError saying what is
    allowed otherwise."""
    given = url.strip() if isinstance(url, str) else ""
    try:
        parts = urlsplit(given)
        port = parts.port  # the URL parser refuses a port out of range, or a bracketed host that is no address
    except ValueError:
        parts, port = urlsplit(""), -1
    host = parts.hostname or ""
    if (parts.scheme not in ("http", "https") or not _is_host(host, bracketed=parts.netloc.startswith("["))
            or port in (-1, 0) or parts.username is not None or parts.password is not None
            or parts.path not in ("", "/") or parts.query or parts.fragment or given.endswith(("?", "#"))):
        raise InputError(f"{option} must be an address like https://class.example.org, not {url!r}: give "
                         f"{ADDRESS_FORM}", field=option)
    return given.rstrip("/")


def _is_host(host: str, *, bracketed: bool) -> bool:
    if bracketed:
        try:
            return ipaddress.ip_address(host).version == 6
        except ValueError:
            return False
    return bool(_HOST_NAME.fullmatch(host))


def class_address(store: ProgressStore, class_id: int) -> str:
    """The address to print the class's links with."""
    from chainrule.progress.class_store import ClassStore

    return (ClassStore(store).url(class_id) or DEFAULT_ADDRESS).rstrip("/")


def remember_address(store: ProgressStore, class_id: int, url: str) -> None:
    """The teacher gave the class's address (`chainrule class ... --url URL`)."""
    from chainrule.progress.class_store import ClassStore

    ClassStore(store).set_url(check_address(url), class_id)


def served_at(store: ProgressStore, url: str, *, given: bool) -> None:
    """`chainrule serve` serves every class of the store at ``url``: given with --url, every class remembers it;
    else only the classes that remember none yet."""
    from chainrule.progress.class_store import ClassStore

    ClassStore(store).set_url(url.rstrip("/"), only_unset=not given)
