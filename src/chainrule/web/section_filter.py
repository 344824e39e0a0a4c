"""?section=...: a teacher's view narrowed to one section's learners. The one query parameter every such view
takes (the grid, the explanations, the gradebook, item analysis); classes/class_sections.py checks the name (an
unknown one is a 422 naming the class's sections)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from chainrule.classes.accounts import Account
from chainrule.web.app_state import app_state

__all__ = ["SectionFilter", "chosen_section", "section_learners"]

SectionFilter = Annotated[str | None, Query(max_length=200, description="one section's learners only")]


def chosen_section(request: Request, account: Account, section: str | None) -> str:
    """The section asked for ('' : the whole class)."""
    from chainrule.classes.class_sections import Sections

    return Sections(app_state(request).accounts).chosen(account.class_id, section)


def section_learners(request: Request, account: Account, section: str | None) -> set[int] | None:
    """The ids of the chosen section's learners, or None for the whole class."""
    from chainrule.classes.class_sections import Sections

    chosen = chosen_section(request, account, section)
    if not chosen:
        return None
    return {learner.id for learner in Sections(app_state(request).accounts).learners(account.class_id, chosen)}
