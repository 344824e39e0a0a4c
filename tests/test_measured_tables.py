"""The check of docs tables measured on one machine (tests/measured_tables.py), on docs/engine.md's own tables:
a table names every class and each count stays within its stated bound, on the docs' numbers and on another
machine's; and the check fails on a mutated doc, on a count measured past its bound, on a class the table
does not name and on changed totals. The measuring tests (parity, forward mode, transforms, compiled
gradients) take minutes; these take none."""

from __future__ import annotations

from pathlib import Path

import pytest

import measured_tables
from measured_tables import doc_table, problems

DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"
TABLES = {  # the column titles of each measured table in docs/engine.md, and the test that measures it
    "test_parity_torch": ["class", "output values", "leaf gradients"],
    "test_forward_mode": ["class", "output values", "tangents"],
    "test_transforms_torch": ["class", "vjp", "jacrev", "jacfwd", "hessian"],
    "test_compile_gradient_order": ["gradients", "count"],
}
PER_TABLE = pytest.mark.parametrize("titles", TABLES.values(), ids=TABLES.keys())


def text() -> str:
    return DOCS.read_text(encoding="utf-8")


def as_measured(table: measured_tables.DocTable) -> dict[str, list[int]]:
    return {name: list(counts) for name, counts in table.rows.items()}


@PER_TABLE
def test_each_measured_table_states_a_bound_per_class_and_its_own_counts_keep_them(titles) -> None:
    table = doc_table(text(), titles)
    assert set(table.bounds) == set(table.rows) and table.totals
    assert problems(table, as_measured(table)) == []


@PER_TABLE
def test_another_machines_counts_within_the_bounds_pass(titles) -> None:
    # One result of each column moves from the largest class to the smallest: other kernels, the same code.
    table = doc_table(text(), titles)
    largest, smallest = max(table.rows, key=lambda n: sum(table.rows[n])), min(table.rows, key=lambda n: sum(table.rows[n]))
    measured = as_measured(table)
    measured[largest] = [count - 1 for count in measured[largest]]
    measured[smallest] = [count + 1 for count in measured[smallest]]
    assert measured != as_measured(table) and problems(table, measured) == []


@PER_TABLE
def test_a_count_measured_past_its_bound_fails_and_names_the_class(titles) -> None:
    table = doc_table(text(), titles)
    name = next(name for name, (kind, _) in table.bounds.items() if kind == "most")
    percent = table.bounds[name][1]
    measured = as_measured(table)
    moved = int(table.totals[0] * percent / 100) + 1  # from the first class, so that the total stays
    measured[name][0] += moved
    measured[next(iter(measured))][0] -= moved
    found = problems(table, measured)
    assert any(line.startswith(f"{name!r}, {table.columns[0]}: measured here ") and f"not at most {percent:g} %" in line
               for line in found), found


def in_table(titles: list[str], old: str, new: str) -> str:
    """docs/engine.md with the first `old` after the header of the table with these titles made `new`."""
    docs = text()
    start = docs.index("| " + " | ".join([*titles, "bound"]) + " |")
    return docs[:start] + docs[start:].replace(old, new, 1)


@PER_TABLE
def test_a_docs_table_without_a_class_measured_here_fails(titles) -> None:
    table = doc_table(text(), titles)
    name = list(table.rows)[1]
    mutated = in_table(titles, "\n| " + name + " |", "\n| something else |")
    assert f"does not name the class {name!r}" in " ".join(problems(doc_table(mutated, titles), as_measured(table)))


def test_a_docs_count_past_its_bound_fails() -> None:
    titles = TABLES["test_compile_gradient_order"]
    table = doc_table(text(), titles)
    mutated = in_table(titles, "| rounding | " + str(table.rows["rounding"][0]) + " |", "| rounding | 2000 |")
    found = problems(doc_table(mutated, titles), as_measured(table))
    assert any(line.startswith("'rounding', count: the docs show 2000 of") for line in found), found


def test_a_row_without_a_bound_is_refused() -> None:
    titles = TABLES["test_compile_gradient_order"]
    mutated = in_table(titles, " | at most 25 % |", " | about the same |")
    with pytest.raises(AssertionError, match="'rounding' of the table | gradients | states no bound"):
        doc_table(mutated, titles)


def test_several_classes_at_once_count_in_their_row_when_each_class_is_named() -> None:
    table = doc_table(text(), TABLES["test_parity_torch"])
    measured = as_measured(table)
    several = measured.pop(measured_tables.SEVERAL)
    assert problems(table, {**measured, "c / x & kernels": several}) == []
    found = problems(table, {**measured, "c / x & rounding luck": several})
    assert found == ["the table | class | does not name the class 'rounding luck', measured here"], found


def test_totals_that_are_not_the_docs_fail() -> None:
    table = doc_table(text(), TABLES["test_compile_gradient_order"])
    measured = as_measured(table)
    measured["the same number"][0] += 1
    assert any("the totals" in line for line in problems(table, measured))
