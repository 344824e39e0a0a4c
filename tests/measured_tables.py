"""Tables in the docs that count what a test measured (classes of differences from PyTorch or from eager, on
seeded random programs), checked for their shape and their bounds, never for one machine's numbers.

The counts depend on the machine as well as on the code: on the BLAS library and the order its kernels add
in, on the C library's and PyTorch's math kernels. So a table shows the counts of one run and, in its last
column, the bound each class keeps on any machine, as a share of its column's total ("at least 90 %", "at
most 2 %"). A test that measures such a table checks that
- the docs' table names every class it measured (a row of several classes at once, "A & B", is counted in
  the row "several classes at once", and each of A and B must be named);
- every count, the docs' own and the measured one, is within its class's bound;
- the totals are the docs' (they count the seeded programs' results, the same on every machine).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEVERAL = "several classes at once"
BOUND = re.compile(r"at (least|most) ([\d.]+) %")


@dataclass
class DocTable:
    header: str                       # the first column's title
    columns: list[str]                # the titles of the count columns
    rows: dict[str, list[int]]        # class -> its count per column
    bounds: dict[str, tuple[str, float]]  # class -> ("least" or "most", percent of the column's total)
    totals: list[int]


def doc_table(text: str, titles: list[str]) -> DocTable:
    """The markdown table of `text` whose columns are titled `titles` and then `bound`."""
    lines, header = text.splitlines(), "| " + " | ".join([*titles, "bound"]) + " |"
    start = next((i for i, line in enumerate(lines) if line.rstrip() == header), None)
    assert start is not None, f"no table {header} in the docs"
    cells = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    table = DocTable(titles[0], titles[1:], {}, {}, [])
    for row in cells[2:]:
        name, counts, bound = row[0], [int(c.replace(",", "")) for c in row[1:-1]], row[-1]
        if name == "total":
            table.totals = counts
            continue
        table.rows[name] = counts
        found = BOUND.fullmatch(bound)
        assert found, f"the row {name!r} of the table | {header} | states no bound ('at least N %' or 'at most N %')"
        table.bounds[name] = (found.group(1), float(found.group(2)))
    return table


def folded(table: DocTable, measured: dict[str, list[int]]) -> tuple[dict[str, list[int]], list[str]]:
    """The measured counts by the docs' rows (combinations of classes folded into SEVERAL), and the classes
    measured that the table does not name."""
    rows: dict[str, list[int]] = {name: [0] * len(table.columns) for name in table.rows}
    unnamed = []
    for name, counts in measured.items():
        parts = name.split(" & ")
        row = SEVERAL if len(parts) > 1 else name
        unnamed += [part for part in parts if part not in table.rows]
        if row not in rows:
            unnamed.append(row)
            continue
        rows[row] = [a + b for a, b in zip(rows[row], counts)]
    return rows, sorted(set(unnamed))


def within(bound: tuple[str, float], count: int, total: int) -> bool:
    kind, percent = bound
    share = 100 * count / total if total else 0.0
    return share >= percent if kind == "least" else share <= percent


def problems(table: DocTable, measured: dict[str, list[int]]) -> list[str]:
    """What is wrong with the docs' table against the measured counts (class -> count per column); none
    when the table names every class measured, and every count is within its bound."""
    rows, unnamed = folded(table, measured)
    found = [f"the table | {table.header} | does not name the class {name!r}, measured here" for name in unnamed]
    totals = [sum(counts[i] for counts in rows.values()) for i in range(len(table.columns))]
    if totals != table.totals:
        found.append(f"the totals {table.totals} are not the measured {totals} (the seeded programs changed?)")
    for source, counts_of in (("the docs show", table.rows), ("measured here", rows)):
        for name, counts in counts_of.items():
            for column, count, total in zip(table.columns, counts, totals):
                if not within(table.bounds[name], count, total):
                    kind, percent = table.bounds[name]
                    found.append(f"{name!r}, {column}: {source} {count} of {total}, {100 * count / total:.2f} %, "
                                 f"not at {kind} {percent:g} %")
    return found


def shown(table: DocTable, measured: dict[str, list[int]]) -> str:
    """The table as measured here, with the docs' bounds (for the message of a failing test)."""
    rows, _ = folded(table, measured)
    lines = [f"| {table.header} | " + " | ".join(table.columns) + " | bound |", "|---" * (len(table.columns) + 2) + "|"]
    for name, counts in rows.items():
        kind, percent = table.bounds[name]
        lines.append(f"| {name} | " + " | ".join(map(str, counts)) + f" | at {kind} {percent:g} % |")
    totals = [sum(counts[i] for counts in rows.values()) for i in range(len(table.columns))]
    return "\n".join(lines + ["| total | " + " | ".join(map(str, totals)) + " | |"])


def by_class(counts, kinds: list[str]) -> dict[str, list[int]]:
    """{class: [count per kind]} from a Counter of (class, kind)."""
    names = {name for name, _ in counts}
    return {name: [counts[(name, kind)] for kind in kinds] for name in names}


def check(text: str, titles: list[str], measured: dict[str, list[int]]) -> DocTable:
    """Fail unless the docs' table with these column titles has the shape and bounds `problems` asks for;
    the table, when it does."""
    table = doc_table(text, titles)
    found = problems(table, measured)
    assert found == [], "\n".join(found) + "\n\nmeasured here:\n" + shown(table, measured)
    return table
