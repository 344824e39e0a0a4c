"""A sign-in provider's redirect URI is named after the provider (issue 43, item 2: the SSO steps went in a
circle, since the URI held a row id known only after `chainrule sso add`, which needs the client ID the provider
gives only once the URI is registered). The URI registered by row id before keeps working."""

from __future__ import annotations

import pytest

from chainrule.classes import open_class_store
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.sso import SignInRefused, Sso, callback_uri
from lti_world import cli

BASE = "https://class.example.org"


@pytest.fixture
def sso(tmp_path):
    store = open_class_store(tmp_path)
    yield Sso(store, Accounts(store), BASE)
    store.close()


def test_the_uri_is_known_before_the_provider_is_added_and_names_it_after(sso, tmp_path):
    code, printed, error = cli("sso", "redirect-uri", "School account", "--url", BASE,
                               env={"CHAINRULE_DATA_DIR": str(tmp_path)})
    assert (code, printed.strip()) == (0, f"{BASE}/sso/callback/school-account"), error
    provider = sso.add_provider("School account", "https://login.school.example", "client", "secret")
    assert sso.callback(provider) == printed.strip()
    assert sso.by_callback_key("school-account") == provider
    assert sso.by_callback_key(str(provider.id)) == provider  # a URI registered by row id before


def test_a_name_that_cannot_name_a_uri_or_would_share_one_is_refused(sso):
    sso.add_provider("School account", "https://login.school.example", "client", "secret")
    with pytest.raises(ClassError, match="same redirect URI"):
        sso.add_provider("school-account!", "https://other.example", "client", "secret")
    with pytest.raises(ClassError, match="needs a letter"):
        sso.add_provider("2024", "https://other.example", "client", "secret")
    with pytest.raises(ClassError, match="needs a letter"):
        callback_uri(BASE, "---")
    with pytest.raises(SignInRefused) as refused:
        sso.by_callback_key("nobody")
    assert refused.value.cause == "unknown-provider"
