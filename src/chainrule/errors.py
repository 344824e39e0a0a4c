"""Errors every layer may raise and the web and the CLI turn into messages for the learner."""

from __future__ import annotations

from typing import Any

__all__ = ["InputError"]


class InputError(ValueError):
    """What a learner or a client sent cannot be used (a 4xx, not a bug); str() says what was wrong and what
    is allowed. field: the input it is about ("h", an input's label), so a page can say it at that field.
    problems: each problem at its own field ({"field", "message", "column", "length"}) when there are
    several, or they have a place in a text. The web answers every InputError, and only it, with 422
    (web/error_answers.py)."""

    def __init__(self, message: str, *, field: str | None = None,
                 problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.problems = problems or []
