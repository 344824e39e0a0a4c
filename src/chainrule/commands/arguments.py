"""Argument types the commands share: a refusal says what was given and what is allowed."""

from __future__ import annotations

import argparse
from typing import Callable


def whole_number(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number >= minimum, else an error naming `what` and the bound."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number >= {minimum}, got {text!r}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number >= {minimum}, got {n}")
        return n

    return parse
