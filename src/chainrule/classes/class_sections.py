"""Sections of a class: a learner's section (from the roster they joined with, or set by a teacher), and the
teacher's views narrowed to one section (the grid, the gradebook, the explanations: classes/report.py).

    sections = Sections(accounts)
    sections.names(class_id)                           # ["Monday", "Tuesday"]
    sections.chosen(class_id, "Monday")                # the filter, checked ("" or None: the whole class)
    sections.set_section(teacher, learner_id, "Tuesday")

A filter that names no section of the class is refused (an InputError naming the sections there are), never
read as "no one": a typo must not look like an empty section.
"""

from __future__ import annotations

from typing import Any

from chainrule.classes.accounts import Account, Accounts, teacher_only
from chainrule.classes.roster import check_section
from chainrule.errors import InputError
from chainrule.progress.roster_store import RosterStore

NO_SECTION = ""  # what the filter means by "the whole class"


class Sections:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.tables = RosterStore(accounts.store)

    def names(self, class_id: int) -> list[str]:
        return self.tables.sections(class_id)

    def chosen(self, class_id: int, section: Any) -> str:
        """The section a view is narrowed to ('' : the whole class), or an InputError for one the class lacks."""
        if section is None or (isinstance(section, str) and not section.strip()):
            return NO_SECTION
        wanted = check_section(section)
        names = self.names(class_id)
        if wanted not in names:
            there = ", ".join(repr(name) for name in names) if names else "none yet (import a roster, or set a " \
                "learner's section)"
            raise InputError(f"there is no section {wanted!r} in this class: its sections are {there}",
                             field="section")
        return wanted

    def learners(self, class_id: int, section: str) -> list[Account]:
        """The class's learners (of ``section`` only, unless it is '')."""
        return [learner for learner in self.accounts.learners(class_id)
                if section == NO_SECTION or learner.section == section]

    def set_section(self, teacher: Account, learner_id: int, section: Any) -> Account:
        """A learner's section ('' : none), by a teacher of their class."""
        learner = self.accounts.learner(teacher_only(teacher).class_id, learner_id)
        self.tables.set_section(teacher.class_id, learner.id, check_section(section))
        return self.accounts.written(learner.id)
