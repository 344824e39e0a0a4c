"""Who is in a class and what it is now, decided by its teachers: the invite shown again and rotated, a
learner renamed, a further teacher, a class closed (no one joins; its learners' work is read-only) or
archived (read-only for its teachers too), and anyone's own new password.

    people = People(accounts)
    people.rename(teacher, learner_id, "Ada L.")
    link_token = people.add_teacher(teacher, "Mr Brown")      # the new teacher's one-time link
    people.remove_teacher(teacher, brown_id)                  # not oneself, never the class's last teacher
    people.set_state(teacher, "closed")
    await people.change_password(account, "the old one", "a new long password")

Every rule asks for a teacher of that class: an account of another class (or a learner) finds no
learner (ClassError "not-found", as for an id that does not exist) or is refused. The class's state is
enforced for every request at the door (refused_change, called by web/class_gate.py).
"""

from __future__ import annotations

import re
from typing import Any

from chainrule.classes.accounts import (
    ASSISTANT,
    FAILURE_MEMORY,
    TEACHER,
    TEACHER_LINK_LIFETIME,
    Account,
    Accounts,
    ClassError,
    check_password,
    clean_name,
    in_thread,
    invite_token,
    staff_only,
    teacher_only,
    wait_after,
)
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.progress.audit_store import actor_of
from chainrule.progress.people_store import CLASS_STATES, LastTeacher, NotRemoved

OPEN, CLOSED, ARCHIVED = CLASS_STATES
STATE_SAYS = {
    OPEN: "open: learners join with the invite and work",
    CLOSED: "closed: no one joins, and learners can read their work but not change it",
    ARCHIVED: "archived: read-only for everyone, its teachers too, until a teacher opens it again",
}
# Requests still allowed in a class that is not open: signing out (a form), a new password, a teacher setting
# the class's state (to open it again), and the POSTs that compute without keeping anything (running a
# lesson's graph with other inputs, the playground): reading a lesson is not changing one's work.
ALWAYS_ALLOWED = ("/api/class/account/password", "/api/class/state", "/api/playground")
COMPUTES_ONLY = re.compile(r"/api/lessons/[^/]+/explore/[^/]+")


def _read_only(account: Account) -> bool:
    """Whether the account may only read in its class now: everyone in an archived class, learners in a closed one."""
    return account.class_state != OPEN and not (account.class_state == CLOSED and account.role == TEACHER)


def _read_only_text(account: Account) -> str:
    return (f"{account.class_name!r} is {account.class_state}: its work can be read but not changed"
            + (" (open it again on the class's page to change it)" if account.role == TEACHER
               else ". Ask your teacher if you need to change something."))


def refused_change(account: Account | None, path: str) -> str | None:
    """Why the signed-in account may not change anything in its class now, or None if it may."""
    if account is None or path in ALWAYS_ALLOWED or COMPUTES_ONLY.fullmatch(path) or not _read_only(account):
        return None
    return _read_only_text(account)


def state_banner(account: Account | None) -> str | None:
    """What every page says at its top while the account may only read in its class (the same words as a refused
    change, and what still works), or None."""
    if account is None or not _read_only(account):
        return None
    return (_read_only_text(account) + " You can still open every lesson and your own work, try the graphs and "
            "the playground, and sign out or change your password.")


class People:
    """The people and the state of a class, for its teachers (and each account's own password)."""

    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.tables = accounts.people

    # ---------------------------------------------------------------- the invite and the class's state

    def state(self, class_id: int) -> str:
        return self.tables.class_state(class_id)[0]

    def current_invite(self, teacher: Account) -> str | None:
        """The class's invite token while it is open (None when closed, or made before it could be shown)."""
        state, salt = self.tables.class_state(staff_only(teacher).class_id)
        return invite_token(self.accounts.secret(), salt) if state == OPEN and salt else None

    def rotate_invite(self, teacher: Account) -> str:
        """A new invite; the previous one stops working. An open class only (a closed one takes no one)."""
        class_id = teacher_only(teacher).class_id
        if self.state(class_id) != OPEN:
            raise ClassError("the class is closed: open it again before making a new invite", kind="refused")
        return self.accounts.rotate_invite(class_id)

    def set_state(self, teacher: Account, state: Any) -> str:
        teacher_only(teacher)
        if not isinstance(state, str) or state not in CLASS_STATES:
            raise InputError(f"a class's state is one of {', '.join(CLASS_STATES)}; got {state!r}", field="state")
        self.tables.set_state(teacher.class_id, state)
        return state

    # ---------------------------------------------------------------- people

    def rename(self, teacher: Account, learner_id: int, name: Any) -> Account:
        """The learner's new display name, unique in the class as a joining name is (no look-alikes)."""
        learner = self.accounts.learner_in_class(teacher_only(teacher), learner_id)
        name = clean_name(name, "name")

        def taken(names: list[str]) -> None:  # checked inside the write: a join at the same moment
            self.accounts.refuse_look_alike(teacher.class_name, name, names)

        self.tables.rename(learner.id, teacher.class_id, name, taken)
        return self.accounts.written(learner.id)

    def teachers(self, reader: Account, role: str = TEACHER) -> list[dict[str, Any]]:
        """The class's teachers (or, with ``role`` ASSISTANT, its teaching assistants), for its staff."""
        return [{"id": int(person.id), "name": person.name, "signed_up": bool(person.signed_up),
                 "you": person.id == reader.id}
                for person in self.tables.teachers(staff_only(reader).class_id, role)]

    def add_teacher(self, teacher: Account, name: Any, role: str = TEACHER) -> tuple[Account, str]:
        """A further teacher (or, with ``role`` ASSISTANT, a teaching assistant) of the class and their one-time
        link (to set a password and sign in)."""
        teacher_only(teacher)
        name = clean_name(name, "teacher's name" if role == TEACHER else "assistant's name", "name")

        def taken(names: list[str]) -> None:
            self.accounts.refuse_look_alike(teacher.class_name, name, names)

        link, link_hash, expires = self.accounts.new_link(TEACHER_LINK_LIFETIME)
        account_id = self.tables.add_teacher(teacher.class_id, name, self.accounts.store.now().isoformat(), taken,
                                             link_hash, expires, role)
        return self.accounts.written(account_id), link

    def remove_teacher(self, teacher: Account, teacher_id: int) -> dict[str, Any]:
        """Remove another teacher of the class and everything of their account (comments they wrote stay, from
        "a removed account"); every session of theirs ends. Never oneself, never the class's last teacher (so a
        class always has someone who can open it, rotate its invite and see its work)."""
        teacher_only(teacher)
        if int(teacher_id) == teacher.id:
            raise ClassError("you cannot remove yourself: another teacher of the class can remove you",
                             kind="refused")
        found = {int(person.id): person.name for person in self.tables.teachers(teacher.class_id)}
        try:
            removed = self.tables.remove_teacher(teacher_id, teacher.class_id, actor_of(teacher))
        except LastTeacher:
            raise ClassError("a class keeps at least one teacher: this is its last one", kind="refused") from None
        if not removed:
            raise ClassError(f"there is no teacher {teacher_id} in your class", kind="not-found")
        return {"id": int(teacher_id), "name": found.get(int(teacher_id), "")}

    def remove_assistant(self, teacher: Account, assistant_id: int) -> dict[str, Any]:
        """Remove a teaching assistant of the class (a teacher's choice): their account and sessions end; comments
        they wrote stay, from "a removed account"."""
        teacher_only(teacher)
        found = {int(person.id): person.name for person in self.tables.teachers(teacher.class_id, ASSISTANT)}
        if int(assistant_id) not in found or not self.tables.remove_teacher(assistant_id, teacher.class_id,
                                                                            actor_of(teacher), ASSISTANT):
            raise ClassError(f"there is no teaching assistant {assistant_id} in your class", kind="not-found")
        return {"id": int(assistant_id), "name": found[int(assistant_id)]}

    def approve_many(self, teacher: Account, learner_ids: list[int]) -> list[Account]:
        """Let several waiting learners in at once, in one transaction: every id is checked first (one not of the
        class: nothing is done), and one removed meanwhile lets no one in."""
        learners = self._learners(teacher, learner_ids)
        if not self.accounts.tables.approve_learners([learner.id for learner in learners], teacher.class_id):
            raise ClassError("one of the chosen learners is no longer in your class: no one was let in",
                             kind="not-found")
        return [self.accounts.written(learner.id) for learner in learners]

    def remove_many(self, teacher: Account, learner_ids: list[int]) -> list[Account]:
        """Remove several learners at once, each as Accounts.remove_learner does, all in ONE transaction: every id
        is checked first, so a wrong one removes no one, and one that is gone by the time of the write (another
        teacher removed it) rolls the whole removal back."""
        learners = self._learners(teacher, learner_ids)
        try:
            self.accounts.tables.remove_learners([learner.id for learner in learners], teacher.class_id,
                                                 actor_of(teacher))
        except NotRemoved as gone:
            raise ClassError(f"there is no learner {gone.args[0]} in your class (any more): no one was removed",
                             kind="not-found") from None
        return learners

    def _learners(self, teacher: Account, learner_ids: list[int]) -> list[Account]:
        teacher_only(teacher)
        if not learner_ids:
            raise InputError("choose at least one learner", field="ids")
        return [self.accounts.learner_in_class(teacher, learner_id) for learner_id in dict.fromkeys(learner_ids)]

    # ---------------------------------------------------------------- one's own account

    async def change_password(self, account: Account, current: Any, new: Any) -> Account:
        """A new password, given the current one: every session of the account ends (the caller gives this
        browser a new one). Wrong guesses are counted as sign-in failures are (a stolen session cannot try
        passwords at leisure)."""
        if not isinstance(current, str):
            raise InputError("the current password must be text", field="current")
        check_password(new)
        tables = self.accounts.tables
        now = self.accounts.store.now().timestamp()
        reservation, wait = await in_thread(tables.reserve_attempt, f"password:{account.id}", now,
                                             now - FAILURE_MEMORY.total_seconds(), wait_after)
        if reservation is None:
            raise ClassError(f"too many wrong passwords: try again in {count_text(max(1, int(wait + 0.999)), 'second')}",
                             kind="rate-limited", retry_after=wait)
        stored = await in_thread(self.tables.password_hash, account.id)
        if stored is None or not await self.accounts.passwords.verify(stored, current):
            raise ClassError("the current password is not right: nothing was changed", kind="refused")
        await in_thread(tables.release_attempt, reservation)
        await in_thread(self.tables.set_password, account.id, await self.accounts.passwords.hash(new))
        return await in_thread(self.accounts.written, account.id)

