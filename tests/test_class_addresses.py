"""A class remembers its address (issue 43, item 2), so that the links `chainrule class` prints lead to where it
is served, not to http://localhost:8000: the address given last with --url (to `class create`, to a link command,
or to `chainrule serve`, for every class), else the first address a `chainrule serve` served it at, else serve's
own default, http://127.0.0.1:8000 (classes/addresses.py). tests/test_classroom_guide.py sees the same with a
real server."""

from __future__ import annotations

import re

from chainrule.classes import open_class_store
from chainrule.classes.addresses import DEFAULT_ADDRESS, served_at
from lti_world import cli


def links(env: dict, *argv: str) -> list[str]:
    code, printed, error = cli("class", *argv, env=env)
    assert code == 0, error
    return re.findall(r"https?://[^/\s]+", printed)


def serving(env: dict, url: str, *, given: bool) -> None:
    """What `chainrule serve` does at its start (commands/serve.py calls this with its --url, or its own address)."""
    store = open_class_store(env["CHAINRULE_DATA_DIR"])
    try:
        served_at(store, url, given=given)
    finally:
        store.close()


def test_the_links_follow_the_address_given_last_else_the_first_one_served(tmp_path):
    env = {"CHAINRULE_DATA_DIR": str(tmp_path)}
    assert DEFAULT_ADDRESS == "http://127.0.0.1:8000"
    assert links(env, "create", "Physics") == [DEFAULT_ADDRESS] * 2  # nothing served yet: serve's default
    assert links(env, "create", "Chemistry", "--url", "https://chem.example.org") == ["https://chem.example.org"] * 2
    serving(env, "http://127.0.0.1:8123", given=False)  # served without --url: only where none is remembered
    assert links(env, "invite", "Physics") == ["http://127.0.0.1:8123"]
    assert links(env, "invite", "Chemistry") == ["https://chem.example.org"]
    serving(env, "http://127.0.0.1:9000", given=False)  # the first address served stays
    assert links(env, "teacher-link", "Physics") == ["http://127.0.0.1:8123"]
    assert links(env, "invite", "Physics", "--url", "https://physics.example.org/") == ["https://physics.example.org"]
    assert links(env, "invite", "Physics") == ["https://physics.example.org"]  # remembered
    serving(env, "https://school.example.org", given=True)  # serve --url: every class is there now
    assert links(env, "invite", "Physics") == links(env, "invite", "Chemistry") == ["https://school.example.org"]
