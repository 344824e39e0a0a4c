"""The house rules of the code's shape, checked on the source so that a change that breaks one fails here.

- the engine (engine.py, ops.py, kernels.py, modes.py, forward.py) imports nothing else of the project;
- grading knows nothing of lessons, the web or progress storage (it is a library of exercise folders);
- progress knows nothing of lessons;
- no import cycles among the project's modules (function-level imports included);
- SQL lives in progress/ only (no sqlite3 anywhere else, so none in web routes; no SQL text in any string, nor
  any SQL text imported from progress/), and only dialect.py turns it into one database's words;
- no function longer than 80 lines (a schema migration's DDL aside);
- no two modules share a name (commands/, named after the commands, and micrograd/'s copy aside);
- no module uses another module's private names (a shared rule lives, public, in a layer both may import);
- every name an `__all__` lists exists;
- importing a module does no lesson's work: it reads no lesson folder and registers no exercise (who
  serves lessons or grades calls chainrule.lessons.register_exercises()).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "chainrule"


@functools.cache
def parsed(source: str) -> ast.Module:
    """The syntax tree of a source, parsed once for the module: the rules below read the same 200 files (about a
    core-second a pass) and none changes a tree."""
    return ast.parse(source)


@functools.cache
def every_node(source: str) -> tuple[ast.AST, ...]:
    """ast.walk of the source's tree, in its order, walked once."""
    return tuple(ast.walk(parsed(source)))


def project_imports(path: Path) -> set[str]:
    """Every chainrule module a file imports, at any depth of the file (function-level too)."""
    found = set()
    for node in every_node(path.read_text(encoding="utf-8")):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("chainrule"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chainrule"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def python_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if not {"runtime", "data", "template"} & set(p.parts)]


ENGINE = ("engine", "ops", "kernels", "modes", "forward")


@pytest.mark.parametrize("name", ENGINE)
def test_the_engine_imports_nothing_else_of_the_project(name: str) -> None:
    # `from chainrule import ops` reads as the modules "chainrule" and "chainrule.ops": both fine.
    outside = {i for i in project_imports(PACKAGE / f"{name}.py")
               if i != "chainrule" and not i.startswith(tuple(f"chainrule.{m}" for m in ENGINE))}
    assert outside == set()


def test_sql_lives_in_progress_only() -> None:
    offenders = []
    for path in python_files(PACKAGE):
        if "progress" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        if "sqlite3" in text or ".execute(" in text:
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


# A string that reads as SQL: a statement's head, or a condition's words (WHERE, JOIN, "AND x IN", "AND x = ?").
SQL_TEXT = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|"
                      r"\bWHERE\b|\bJOIN\b|\b(?:AND|OR)\s+\w+\s+(?:NOT\s+)?(?:IN\b|LIKE\b|[=<>])|"
                      r"\b(?:CREATE|DROP|ALTER)\s+(?:TABLE|INDEX)\b")


def sql_texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string constant in the source that reads as SQL (f-strings' parts included)."""
    return [(node.lineno, node.value) for node in every_node(source)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.search(node.value)]


def imported_sql(source: str) -> list[str]:
    """Every name imported from chainrule.progress whose value is SQL text (a WHERE fragment passed along)."""
    import importlib

    found = []
    for node in every_node(source):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chainrule.progress"):
            module = importlib.import_module(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names
                      if isinstance(value := getattr(module, alias.name, None), str) and SQL_TEXT.search(value)]
    return found


def test_no_sql_text_outside_progress() -> None:
    """Found by what the text says, not by the method it is given to: a WHERE fragment built in classes/ and
    handed to the store is SQL outside the store as much as an execute() call is."""
    offenders = []
    for path in python_files(PACKAGE):
        if "progress" in path.relative_to(PACKAGE).parts:
            continue
        source = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(PACKAGE)}:{line}: {text[:60]!r}" for line, text in sql_texts(source)]
        offenders += [f"{path.relative_to(PACKAGE)} imports {name}" for name in imported_sql(source)]
    assert offenders == []


def test_the_sql_finder_finds_sql_in_any_string_and_leaves_prose_alone() -> None:
    source = (
        'learners = f"{CLASS} AND learner_id IN ({marks})"\n'
        'rows = run("SELECT a, b FROM t")\n'
        'UPDATE = "UPDATE accounts SET name = ?"\n'
        'help = "Select a lesson from the list; update your name where it says so, and join the class."\n'
        'from chainrule.progress.class_store import CLASS_LEARNERS\n'
    )
    assert sorted(line for line, _ in sql_texts(source)) == [1, 2, 3]
    assert imported_sql(source) == ["chainrule.progress.class_store.CLASS_LEARNERS"]


def test_only_the_dialect_layer_rewrites_sql_text() -> None:
    """No `.replace("?", "%s")` (or any replace of SQL words) outside progress/dialect.py."""
    offenders = []
    for path in python_files(PACKAGE):
        if path.name == "dialect.py":
            continue
        for node in every_node(path.read_text(encoding="utf-8")):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and (node.args[0].value in ("?", "%s", "%") or SQL_TEXT.search(str(node.args[0].value))
                         or re.search(r"\b(REAL|INTEGER|AUTOINCREMENT|PRIMARY KEY)\b", str(node.args[0].value)))):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


# ------------------------------------------------------------------------------------- rows read by name

# The layers that read the store's rows: progress/ (where each row is read) and its callers.
ROW_LAYERS = ("progress", "classes", "web", "commands")
# A name that holds one row of a statement (or one column of PRAGMA table_info).
ONE_ROW = re.compile(r"(^|_)(row|record|column)$")
# Rows unpacked into this many names or more are read by position, whatever the names say: each row of a loop,
# or one answer (an answer of several values, a store's `(rows, count)`, is unpacked into fewer).
WIDE_ROWS, WIDE_ANSWER = 3, 4


def _index_is_a_number(node: ast.Subscript) -> bool:
    index = node.slice.operand if isinstance(node.slice, ast.UnaryOp) else node.slice
    return isinstance(index, ast.Constant) and type(index.value) is int


def positional_reads(source: str) -> list[tuple[int, str]]:
    """(line, text) of every row read by its column's position: `row[2]`, `rows[0][1]`, `fetchone()[0]`,
    `conn.one(...)[0]`."""
    found = []
    for node in every_node(source):
        if not (isinstance(node, ast.Subscript) and _index_is_a_number(node)):
            continue
        value = node.value
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("fetchone", "one")
                or isinstance(value, ast.Name) and ONE_ROW.search(value.id)
                or isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
                and value.value.id.endswith("rows")):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def _the_stores_answer(node: ast.expr, store_functions: set[str], kept: set[str]) -> bool:
    """Whether an expression is what the store answered: a call through a `tables` attribute (each service's
    store) or of a function imported from chainrule.progress, a key of one, or a name one was kept in."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in kept
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name):
        return node.func.id in store_functions
    return "tables" in ast.unparse(node.func).split(".")


def rows_unpacked_by_position(source: str) -> list[tuple[int, str]]:
    """(line, names) of every store's row unpacked by position outside progress/ (where the SELECT beside it
    names the columns): `for a, b, c in self.tables.x()`, or `a, b, c, d = connection_limits(raw)`."""
    store_functions = {alias.asname or alias.name for node in every_node(source) if isinstance(node, ast.ImportFrom)
                       and (node.module or "").startswith("chainrule.progress") for alias in node.names}
    kept = {node.targets[0].id for node in every_node(source) if isinstance(node, ast.Assign)
            and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and _the_stores_answer(node.value, store_functions, set())}
    found = set()
    for node in every_node(source):
        if isinstance(node, (ast.For, ast.comprehension)):
            target, value, wide = node.target, node.iter, WIDE_ROWS
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value, wide = node.targets[0], node.value, WIDE_ANSWER
        else:
            continue
        if isinstance(target, ast.Tuple) and len(target.elts) >= wide and _the_stores_answer(value, store_functions, kept):
            found.add((target.lineno, ast.unparse(target)))
    return sorted(found)


def test_rows_are_read_by_name() -> None:
    """A row is a record of the columns its SELECT names (progress/dialect.py): read as `row.due`, never by
    its position, so that a column added or moved in a SELECT cannot shift what a reader gets."""
    offenders = []
    for path in python_files(PACKAGE):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] not in ROW_LAYERS:
            continue
        source = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(PACKAGE)}:{line}: {text}" for line, text in positional_reads(source)]
        if parts[0] != "progress":
            offenders += [f"{path.relative_to(PACKAGE)}:{line}: {names}"
                          for line, names in rows_unpacked_by_position(source)]
    assert offenders == []


def test_the_row_finders_find_reads_by_position_and_leave_names_alone() -> None:
    source = (
        "from chainrule.progress.run_jobs import connection_limits\n"
        "mode = conn.execute('PRAGMA journal_mode').fetchone()[0]\n"
        "first = [row[0] for row in rows]\n"
        "header = rows[0][1]\n"
        "for a, b, c, d in self.tables.outbox(7):\n    pass\n"
        "found = lti.tables.outbox(None)\n"
        "for _, name, resource, sent in found:\n    pass\n"
        "most, kept, limit, now = connection_limits(raw)\n"
        "due = row.due\nfirst_line, cells = rows[0]\nfor learner, at in self.tables.times():\n    pass\n"
        "x, y, z, w = point\nrows, comments, counts = self.tables.runs(7)\n"
        "people = {id_: name for id_, name, _ in self.tables.teachers(7)}\n"
    )
    assert [line for line, _ in positional_reads(source)] == [2, 3, 4]
    assert [line for line, _ in rows_unpacked_by_position(source)] == [5, 8, 10, 17]


# ------------------------------------------------------------------------------------- found by grep

# Where a second module of one name is what its place says: commands/X.py is the `chainrule X` command (cli.py
# names each command's module after it), so it may share its name with what it drives (classes/lti.py); and
# micrograd/ keeps micrograd's own layout (engine.py, nn.py) to be read beside ours.
NAMED_BY_THEIR_PLACE = ("commands", "micrograd")


def modules_by_name(package: Path) -> dict[str, list[str]]:
    """{name: the modules and packages of that name}, those of NAMED_BY_THEIR_PLACE left out."""
    found: dict[str, list[str]] = {}
    for path in python_files(package):
        place = path.relative_to(package)
        if place.parts[0] in NAMED_BY_THEIR_PLACE:
            continue
        name = place.parent.name if path.name == "__init__.py" else path.stem
        if name:
            found.setdefault(name, []).append(str(place.parent if path.name == "__init__.py" else place))
    return found


def test_no_two_modules_share_a_name() -> None:
    """A module's name says what it is wherever it is read (an import, a traceback, a search for the file):
    `sections.py` holds a lesson's sections and `classes/class_sections.py` a class's."""
    assert {name: places for name, places in modules_by_name(PACKAGE).items() if len(places) > 1} == {}


def test_the_name_finder_finds_a_module_named_as_a_package(tmp_path) -> None:
    for name in ("grading/__init__.py", "grading/kinds.py", "classes/grading.py", "classes/errors.py", "errors.py",
                 "commands/lti.py", "classes/lti.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    shared = {name: sorted(places) for name, places in modules_by_name(tmp_path).items() if len(places) > 1}
    assert shared == {"grading": ["classes/grading.py", "grading"], "errors": ["classes/errors.py", "errors.py"]}


# ------------------------------------------------------------------------------------- functions read at once

LONGEST_FUNCTION = 80  # lines, its decorators and docstring included


def long_functions(source: str) -> list[tuple[int, str, int]]:
    """(line, name, lines) of every function longer than LONGEST_FUNCTION, a schema migration's aside (one
    migration's DDL, run once and never edited: progress/schema.py's _migration_N_...)."""
    return sorted((node.lineno, node.name, node.end_lineno - node.lineno + 1) for node in every_node(source)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION and not re.match(r"_migration_\d+_", node.name))


def test_every_function_is_short_enough_to_read_at_once() -> None:
    """ruff's complexity limit counts branches; this counts lines: a function a reader follows on one screen."""
    offenders = [f"{path.relative_to(PACKAGE)}:{line} {name} ({length} lines)" for path in python_files(PACKAGE)
                 for line, name, length in long_functions(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_length_rule_counts_lines_and_leaves_migrations_alone() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LONGEST_FUNCTION))
    source = f"def long():\n{body}\ndef _migration_6_school_systems(conn):\n{body}\ndef short():\n    pass\n"
    assert long_functions(source) == [(1, "long", LONGEST_FUNCTION + 1)]


# ------------------------------------------------------------------------------------- the import graph


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the chainrule modules it imports}, function-level imports included.

    `from chainrule.x import y` is an edge to chainrule.x.y when that is a module, else to chainrule.x.
    Importing a submodule runs its package's __init__ first, so a package counts as imported too.
    """
    files = {module_name(path): path for path in python_files(PACKAGE)}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges = set()
        for name in project_imports(path):
            target = name if name in files else name.rsplit(".", 1)[0]
            while target and target not in files:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target:
                edges.add(target)
        edges.discard(module)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None. A package's __init__ importing its own submodules
    is not a cycle by itself (Python finishes the package first), so edges from a package to its own
    submodules are left out."""
    state: dict[str, str] = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = "open"
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = "done"
                stack.pop()
                path.pop()
                continue
            if child.startswith(node + "."):
                continue
            if state.get(child) == "open":
                return path[path.index(child):] + [child]
            if child in graph and not state.get(child):
                state[child] = "open"
                path.append(child)
                stack.append((child, iter(sorted(graph[child]))))
    return None


def test_no_import_cycles_among_chainrule_modules() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"p": {"p.q"}, "p.q": {"p"}}) is None  # a package importing its own submodule


def _importers(folder: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(i for i in project_imports(path) if i.startswith(forbidden))
        for path in python_files(PACKAGE / folder)
    }
    return {k: v for k, v in offenders.items() if v}


def test_grading_imports_nothing_of_lessons_web_or_progress() -> None:
    assert _importers("grading", ("chainrule.lessons", "chainrule.web", "chainrule.progress")) == {}


def test_progress_imports_nothing_of_lessons() -> None:
    assert _importers("progress", ("chainrule.lessons",)) == {}


# The layers of docs/architecture.md, each with the layers it may import ("lib" is the engine and the
# library around it: every top-level module but cli.py and __main__.py).
LAYERS_MAY_IMPORT = {
    "lib": {"lib"},
    "grading": {"lib", "grading"},
    "lessons": {"lib", "grading", "lessons"},
    "progress": {"lib", "progress"},
    "classes": {"lib", "grading", "lessons", "progress", "classes"},
    "web": {"lib", "grading", "lessons", "progress", "classes", "web"},
    "commands": {"lib", "grading", "lessons", "progress", "classes", "web", "commands"},
}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS_MAY_IMPORT:
        return parts[1]
    return "commands" if parts[-1] in ("cli", "__main__") else "lib"


def test_each_layer_imports_only_the_layers_below_it() -> None:
    offenders = []
    for path in python_files(PACKAGE):
        module = "chainrule." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for imported in project_imports(path):
            if imported != "chainrule" and _layer(imported) not in LAYERS_MAY_IMPORT[_layer(module)]:
                offenders.append(f"{module} ({_layer(module)}) imports {imported} ({_layer(imported)})")
    assert offenders == []


# ------------------------------------------------------------------------------------- boundaries


def private_names_used_across_modules(path: Path) -> list[str]:
    """`from chainrule.x import _y`, and `m._y` where m is a chainrule module this file imported."""
    tree = parsed(path.read_text(encoding="utf-8"))
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chainrule"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
                elif f"{node.module}.{alias.name}" in MODULES:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(alias.asname for alias in node.names if alias.asname and alias.name in MODULES)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


MODULES = {module_name(path) for path in python_files(PACKAGE)}


def test_no_module_uses_another_modules_private_names() -> None:
    offenders = {str(path.relative_to(PACKAGE)): found for path in python_files(PACKAGE)
                 if (found := private_names_used_across_modules(path))}
    assert offenders == {}


def test_the_private_name_finder_finds_both_forms(tmp_path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from chainrule.lessons.loader import _read_json, lesson_ids\n"
                      "from chainrule.grading import registry\n"
                      "registry._private()\nregistry.public()\n", encoding="utf-8")
    assert private_names_used_across_modules(sample) == [
        "line 1: from chainrule.lessons.loader import _read_json", "line 3: registry._private"]


IMPORT_EVERY_MODULE = """
import importlib, json, os, sys
lesson_data = sys.argv[1]
opened = []

def audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(args[0]))
        if path.startswith(lesson_data):
            opened.append(path)

sys.addaudithook(audit)
missing = []
for name in sys.argv[2:]:
    module = importlib.import_module(name)
    missing += [f"{name}.{listed}" for listed in getattr(module, "__all__", ()) if not hasattr(module, listed)]
from chainrule.grading import EXERCISES
print(json.dumps({"opened": sorted(set(opened)), "registered": list(EXERCISES), "missing": missing}))
"""


@pytest.fixture(scope="module")
def every_module_imported() -> dict:
    """What importing every chainrule module in a fresh process did: the lesson files it opened, the
    exercises it registered, and the names an __all__ lists that do not exist."""
    names = sorted(name for name in MODULES if not name.endswith("__main__"))
    done = subprocess.run([sys.executable, "-c", IMPORT_EVERY_MODULE, str(PACKAGE / "lessons" / "data"), *names],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_every_name_in_an_all_exists(every_module_imported) -> None:
    assert every_module_imported["missing"] == []


def test_importing_a_module_reads_no_lesson_and_registers_no_exercise(every_module_imported) -> None:
    assert every_module_imported["opened"] == []
    assert every_module_imported["registered"] == []


def _table_paths(markdown: str) -> list[str]:
    """The file and folder names in docs/architecture.md's "To change X, edit Y" table (backquoted, with a dot
    or a slash), each as written."""
    section = markdown.split("## To change X, edit Y", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("|---")][1:]
    names = [name for row in rows for name in re.findall(r"`([^`\s]+)`", row)]
    return [name for name in names if re.fullmatch(r"[\w./*-]+", name)
            and ("/" in name or name.endswith((".py", ".js", ".md"))) and not name.startswith("torch.")]


def test_every_file_the_change_table_names_exists() -> None:
    """Each row of docs/architecture.md's "To change X, edit Y" table names files that are there: a name is
    looked for in the package, the repository and tests/ (a * in it matches any file); a bare file name,
    anywhere in the package (the row says where: "its probe in `isolation.py`")."""
    root = Path(__file__).resolve().parent.parent
    package = root / "src" / "chainrule"
    names = _table_paths((root / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert len(names) > 40, names  # the table is read (it names about sixty files)
    missing = [name for name in names
               if not any(list(base.glob(name)) for base in (package, root, root / "tests"))
               and not ("/" not in name and any(package.rglob(name)))]
    assert missing == []
