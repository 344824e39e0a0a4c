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


class Refused(Exception):
    """Why a command does not start, and its exit code (2: the arguments; 1: the machine, the network or a
    database). A command raises it where it finds the cause and says it once, where it catches it (text());
    what was opened before closes on the way out (a `with` or an ExitStack), never by hand at each cause."""

    def __init__(self, message: str, code: int = 2, *, whole: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.whole = whole  # the message is whole already (a refusal another module wrote)

    def text(self, command: str) -> str:
        return str(self) if self.whole else f"chainrule {command}: {self}"
