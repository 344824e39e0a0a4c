"""Turning lesson data into text: number formatting, `{{placeholders}}` and markdown with math.

Prose never types a number: it writes `{{section03.a.grad}}` (a node's value or gradient, computed by
the engine) or `{{lesson.tolerance}}` (a number from the lesson's data file), and `fill` puts the
number in. Math is written as `$...$` or `$$...$$` and left for KaTeX in the browser; markdown must
not touch it, so `render_markdown` sets math aside before rendering and puts it back afterwards.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from chainrule.folder_paths import OutsideFolderError, inside_folder
from chainrule.number_text import format_number, formula_text, operand_text  # the captions' writer too

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["LessonDataError", "format_number", "fill", "render_markdown", "render_inline"]


class LessonDataError(ValueError):
    """The lesson's data files are inconsistent (a typo in a placeholder, a missing file...)."""


def inside_lesson(folder: Path, relative: str) -> Path:
    """The file a lesson folder names, which must resolve inside that folder (no absolute path, no `..` out,
    no symbolic link out): otherwise a LessonDataError, since the lesson's data is what is wrong."""
    try:
        return inside_folder(folder, relative)
    except OutsideFolderError as error:
        raise LessonDataError(f"{folder}: {error}") from None


# `{{ path.to.number }}` or `{{ path.to.number | digits }}`; node labels may hold spaces and `*`.
PLACEHOLDER = re.compile(r"\{\{\s*(?P<path>[^{}|]+?)\s*(?:\|\s*(?P<digits>\d+)\s*)?\}\}")
# Display math first, so that `$$x$$` is not read as two empty inline spans.
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.DOTALL)


@functools.cache
def _markdown() -> MarkdownIt:
    """The one renderer, made on first use: a server's start renders no markdown (a lesson's text is rendered
    when it is first asked for), so it does not import markdown-it (about 15 ms of CPU)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False})


# Parentheses an author put around a placeholder, "({{b}})": the writer decides them (a negative number
# where an operator touches it), so they are dropped, unless they belong to a function call, "tanh({{x}})".
_AUTHOR_PARENS = re.compile(r"(?<![\w)\]])\(\s*(" + PLACEHOLDER.pattern + r")\s*\)")
# Code spans and math are left as written: `a * b` is code, and KaTeX has its own multiplication signs.
_CODE_OR_MATH = re.compile(r"`[^`\n]*`|" + MATH.pattern, re.DOTALL)


# A placeholder's resolver: ["graph", "label", "data"] (the parts of {{graph.label.data}}) -> its value.
Resolve = Callable[[list[str]], float | str]


def fill(template: str, resolve: Resolve, where: str = "") -> str:
    """Replace each `{{a.b.c}}` in `template` by `resolve(["a", "b", "c"])`, written by the one number and
    formula writer (chainrule.number_text): a number in the captions' format, a negative one in
    parentheses where an operator touches it ("{{b}} * {{upstream}}" reads "-3 × (-2)"), and a
    multiplication written with * in prose as × (not in `code` or $math$).

    `resolve` raises KeyError for an unknown path; that becomes a LessonDataError naming `where`.
    """
    unwrapped = _AUTHOR_PARENS.sub(lambda match: match.group(1), template)
    pieces: list[str] = []
    at = 0
    for match in PLACEHOLDER.finditer(unwrapped):
        pieces.append(unwrapped[at:match.start()])
        parts = match.group("path").split(".")
        try:
            value = resolve(parts)
        except KeyError:
            raise LessonDataError(
                f"{where or 'lesson text'}: unknown placeholder {match.group(0)!r}"
            ) from None
        if isinstance(value, str):
            pieces.append(value)
        else:
            digits = int(match.group("digits")) if match.group("digits") else 4
            pieces.append(operand_text(float(value), "".join(pieces[-1:]), unwrapped[match.end():], digits))
        at = match.end()
    pieces.append(unwrapped[at:])
    return _times_outside_code("".join(pieces))


def _times_outside_code(text: str) -> str:
    """`formula_text` on the prose, leaving code spans and math as they are."""
    out: list[str] = []
    at = 0
    for match in _CODE_OR_MATH.finditer(text):
        out.append(formula_text(text[at:match.start()]))
        out.append(match.group(0))
        at = match.end()
    out.append(formula_text(text[at:]))
    return "".join(out)


def _protect_math(text: str) -> tuple[str, list[str]]:
    spans: list[str] = []

    def stash(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"CHAINRULEMATH{len(spans) - 1}X"

    return MATH.sub(stash, text), spans


def _restore_math(rendered: str, spans: list[str]) -> str:
    # Quotes escaped too: a span may land inside an attribute (a link title, an image's alt text),
    # where a bare quote would end the attribute and start one the author wrote.
    def restore(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return html.escape(spans[index], quote=True) if index < len(spans) else match.group(0)

    return re.sub(r"CHAINRULEMATH(\d+)X", restore, rendered)


def render_markdown(text: str) -> str:
    """Markdown to HTML, with `$...$` and `$$...$$` passed through untouched (HTML-escaped) for KaTeX."""
    protected, spans = _protect_math(text)
    return _restore_math(_markdown().render(protected), spans)


def render_inline(text: str) -> str:
    """One line of markdown to HTML without the surrounding <p>."""
    protected, spans = _protect_math(text)
    return _restore_math(_markdown().renderInline(protected), spans)
