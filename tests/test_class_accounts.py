"""Accounts looked up by id in a real SQLite class store: the learner of a class (Accounts.learner, the one rule
the teacher's views, due dates and overrides ask), and an account removed meanwhile, which is "not-found",
never None (mypy holds classes/ to it: issue 46 item 5)."""

from __future__ import annotations

import pytest

from chainrule.classes import open_class_store
from chainrule.classes.accounts import Accounts, ClassError
from class_process import run_coroutine
from class_world import FAST_HASHER, PASSWORD, Clock


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    """Physics (its teacher, Ada) and Chemistry (Cyd), and the clock the store reads."""
    clock = Clock()
    store = open_class_store(tmp_path_factory.mktemp("accounts"), clock=clock)
    accounts = Accounts(store, hasher=FAST_HASHER)
    physics = accounts.create_class("Physics")
    chemistry = accounts.create_class("Chemistry")
    ada = run_coroutine(accounts.join, physics.invite_token, "Ada", PASSWORD)
    cyd = run_coroutine(accounts.join, chemistry.invite_token, "Cyd", PASSWORD)
    teacher_id = accounts.tables.teacher_id(physics.class_id)
    try:
        yield accounts, clock, physics, ada, cyd, accounts.written(teacher_id)
    finally:
        store.close()


def test_the_learner_of_a_class_is_found_and_anyone_else_is_not_found(classes):
    accounts, _, physics, ada, cyd, teacher = classes
    assert accounts.learner(physics.class_id, ada.id) == ada
    for someone in (cyd.id, teacher.id, 10**9):  # another class's learner, the teacher, no one
        with pytest.raises(ClassError) as refused:
            accounts.learner(physics.class_id, someone)
        assert refused.value.kind == "not-found"
        assert str(refused.value) == f"there is no learner {someone} in your class"


def test_an_account_removed_meanwhile_is_not_found_never_none(classes):
    accounts, clock, physics, _, _, teacher = classes
    bea = run_coroutine(accounts.join, accounts.new_invite("Physics"), "Bea", PASSWORD)
    assert accounts.created_at(bea.id) == clock.now  # made at the store's clock: the test's
    accounts.remove_learner(teacher, bea.id)
    for look_up in (accounts.written, accounts.created_at):
        with pytest.raises(ClassError) as gone:
            look_up(bea.id)
        assert gone.value.kind == "not-found"
        assert str(gone.value) == f"there is no account {bea.id} any more"
