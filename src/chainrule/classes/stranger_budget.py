"""What a stranger may store: the one budget of every route a request without a session reaches and that keeps
a row (issue 41, item 6). Today those are the logins in progress: an LMS's ``POST /lti/login`` (classes/lti.py)
and a sign-in button's ``POST /sso/start/ID`` (classes/sso.py); each keeps a row until its browser comes back.

    client = client_key(request.client.host)            # "203.0.113.7", or an IPv6 address's /64
    lti.login(params, client=client)                    # OverBudget (status, cause) when it does not fit
    tables.add_login(..., client=client, now=now, budget=BUDGET)   # the store checks the row and asks BUDGET.admit

The rule, checked by the store in the transaction that adds the row (progress/lti_store.add_stranger_row):
- every stored field (a JSON column's fields one by one) is at most FIELD_CHARACTERS characters, and a row's
  fields together at most ROW_CHARACTERS, else the request is refused (413, naming the field and the limit):
  nothing is cut, so what is kept is what was sent;
- a client address has at most PER_CLIENT logins in progress (not yet used) at once, and the server at most
  TOTAL, else 429 with Retry-After (nothing is evicted: a login a person is in the middle of keeps working);
- a row is deleted KEEP seconds after it was made (used or not; a replay later than that is refused as an
  unknown state instead of by name), at every new login.
An honest login is used within seconds, so a school's shared address meets PER_CLIENT only if that many logins
are left unfinished within LOGIN_LIFETIME. The worst a stranger can store is TOTAL rows of at most
ROW_CHARACTERS each.

A route reachable without a session must charge this budget (marked ``@charged``), or be listed in PROVEN with
the proof a stranger lacks before it writes, or in READS_ONLY; tests/test_class_strangers.py lists the app's
routes and fails on one that is none of these.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from chainrule.classes.federation import LOGIN_LIFETIME
from chainrule.number_text import count_text

FIELD_CHARACTERS = 2048  # an LMS's lti_message_hint (Canvas: a signed JWT) is well under this
FIELDS_PER_ROW = 16  # a row's fields, those inside its JSON columns counted one by one
ROW_CHARACTERS = 8192  # the characters of a row's fields together
PER_CLIENT = 50  # logins in progress from one address (an IPv6 address counts by its /64)
TOTAL = 2000  # logins in progress on the server
KEEP = LOGIN_LIFETIME + 300  # seconds a login's row is kept (used or not)
RETRY_AFTER = 60  # seconds a refused stranger is told to wait

# Routes a request without a session reaches that write, and why they need no budget: the proof a stranger lacks.
PROVEN: dict[str, str] = {
    "/lti/launch": "writes only after the LMS's signed id_token checks out (classes/id_tokens.py)",
    "/lti/pick": "needs a teacher's session (signed_in) and the picker's sealed settings",
    "/sso/callback/{key}": "writes only after the provider's code is exchanged and its id_token checks out",
    "/sso/choose": "needs a sealed ticket of a finished sign-in, bound to the browser's cookie",
    "/sign-in": "a wrong password is counted under its account's name, or for a name with no account under one of "
                "UNKNOWN_SCOPES shared counters, each slowed as a name is (classes/accounts.py): the rows stay "
                "bounded by the accounts, not by the names a stranger tries",
    "/join/{invite}": "needs the class's invite (classes/accounts.py: seats and approval bound what it admits)",
    "/set-password/{token}": "needs a teacher's one-time link",
    "/sign-out": "deletes, never adds",
}

# The other routes a request without a session reaches: they read, and keep nothing.
READS_ONLY: dict[str, str] = {
    "GET /sign-in": "the sign-in page", "GET /join/{invite}": "the join page",
    "GET /set-password/{token}": "the page of a teacher's one-time link", "GET /lti/jwks.json": "the tool's public keys",
}

CAUSES: dict[str, tuple[int, str]] = {
    "field-too-long": (413, f"Each field of a login is at most {FIELD_CHARACTERS} characters: start again from "
                            "the LMS or the sign-in page; if it keeps failing, tell the administrator."),
    "too-many-logins": (429, f"Too many sign-ins were started from your network and not finished: wait a minute "
                             f"(logins expire after {count_text(LOGIN_LIFETIME // 60, 'minute')}) and start again."),
}


class OverBudget(Exception):
    """A stranger's row refused: ``cause`` (a key of CAUSES) and the sentence of what happened."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause
        self.status = CAUSES[cause][0]


def client_key(host: str | None) -> str:
    """What counts as one client: its address; an IPv6 address by its /64 (one household or host gets a whole
    /64, so the address alone would be a new client at every request)."""
    try:
        address = ipaddress.ip_address((host or "").split("%", 1)[0])
    except ValueError:
        return (host or "")[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def charged(endpoint: Callable) -> Callable:
    """Mark a route as one that charges this budget (the route test reads the mark)."""
    endpoint.stranger_budget = True  # type: ignore[attr-defined]
    return endpoint


@dataclass(frozen=True)
class StrangerBudget:
    field_characters: int = FIELD_CHARACTERS
    per_client: int = PER_CLIENT
    total: int = TOTAL
    keep: float = KEEP

    def check_fields(self, row: Mapping[str, Any]) -> None:
        """OverBudget("field-too-long") if a field of the row (a dict's fields one by one: what becomes a JSON
        column) is longer than the limit, or the row has too many fields or characters."""
        fields = [(f"{name}.{inner}", value) for name, outer in row.items() if isinstance(outer, Mapping)
                  for inner, value in outer.items()] + [(name, value) for name, value in row.items()
                                                       if not isinstance(value, Mapping)]
        if len(fields) > FIELDS_PER_ROW:
            raise OverBudget("field-too-long", f"a login keeps at most {FIELDS_PER_ROW} fields, not {len(fields)}")
        for name, value in fields:
            if len(str(value)) > self.field_characters:
                raise OverBudget("field-too-long", f"the field {name} has {count_text(len(str(value)), 'character')}; at most "
                                 f"{self.field_characters} are kept")
        if sum(len(str(value)) for _, value in fields) > ROW_CHARACTERS:
            raise OverBudget("field-too-long", f"a login's fields together are at most {ROW_CHARACTERS} characters")

    def admit(self, client_rows: int, all_rows: int) -> None:
        """OverBudget("too-many-logins") when the client or the server holds as many logins in progress as
        allowed (the counts are taken in the transaction that would add one more)."""
        if client_rows >= self.per_client:
            raise OverBudget("too-many-logins", f"{client_rows} logins from this address are in progress (at most "
                             f"{self.per_client})")
        if all_rows >= self.total:
            raise OverBudget("too-many-logins", f"{all_rows} logins are in progress on this server (at most "
                             f"{self.total})")


BUDGET = StrangerBudget()
