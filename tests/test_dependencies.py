"""What chainrule imports is what pyproject.toml declares, and the one internal API it extends is pinned.

- every third-party module that src/chainrule imports comes from a distribution pyproject.toml names: in the
  runtime dependencies, or in an extra when every import of it is deferred (inside a function or a try: the
  feature says what to install when it is missing; or for the type checker alone, under TYPE_CHECKING);
- every runtime dependency is imported by chainrule (nothing declared for nothing);
- one HTTP client, in the package and in its tests;
- no exact pin in the runtime dependencies (a library's users must be able to take a bug-fix release);
- uvicorn, whose h11 protocol class web/connections.py extends (not a public API), is pinned to one minor
  version, and what GuardedH11Protocol overrides and reads of it is still there.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import inspect
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
HTTP_CLIENTS = {"requests", "httpx", "aiohttp", "urllib3", "pycurl"}
# Declared though chainrule never imports them by name: another package's feature that chainrule uses needs them.
USED_THROUGH = {"jinja2": "fastapi.templating"}  # web/routes_pages.py's Jinja2Templates


def distribution_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def imports(folder: Path) -> dict[str, list[tuple[str, bool]]]:
    """Top-level module -> [(file:line, deferred)], deferred: inside a function, a try block or an
    `if TYPE_CHECKING:` block (read by the type checker, never run)."""
    found: dict[str, list[tuple[str, bool]]] = {}

    def visit(node: ast.AST, path: Path, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Try)) or (
                isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING")
            names = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module]
            for name in names:
                found.setdefault(name.split(".")[0], []).append((f"{path.relative_to(ROOT)}:{child.lineno}", deferred))
            visit(child, path, inner)

    for path in sorted(folder.rglob("*.py")):
        visit(ast.parse(path.read_text(), str(path)), path, False)
    return found


def third_party(found: dict) -> dict:
    return {module: where for module, where in found.items()
            if module not in sys.stdlib_module_names and module not in {"chainrule", "__future__"}}


@functools.cache
def made_by() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()  # reads every installed distribution: once


def providers(module: str) -> set[str]:
    return {name.lower().replace("_", "-") for name in made_by().get(module, [])}


RUNTIME = {distribution_name(requirement) for requirement in PROJECT["dependencies"]}
EXTRAS = {distribution_name(requirement) for requirements in PROJECT["optional-dependencies"].values()
          for requirement in requirements if not requirement.startswith("chainrule")}
IMPORT_LINE = re.compile(r"^[ \t]*(?:import[ \t]+([\w., \t]+)$|from[ \t]+(\w+)[\w.]*[ \t]+import\b)", re.M)


def named_on_import_lines(folder: Path) -> set[str]:
    """The top-level modules that lines beginning with `import` or `from ... import` name, read without parsing:
    the parameters below. Every xdist worker collects this module, and parsing the package at collection cost
    each of them about 2 s of CPU; test_the_parameters_are_every_module_the_package_imports checks that the
    parse finds the same modules."""
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for plain, source in IMPORT_LINE.findall(path.read_text()):
            names |= {source} if source else {part.split()[0].split(".")[0] for part in plain.split(",")}
    return names


@functools.cache
def package_imports() -> dict[str, list[tuple[str, bool]]]:
    return third_party(imports(ROOT / "src" / "chainrule"))  # parsed once, by the worker that runs these tests


PARAMETERS = sorted(third_party(dict.fromkeys(named_on_import_lines(ROOT / "src" / "chainrule"))))


def test_the_parameters_are_every_module_the_package_imports():
    assert PARAMETERS == sorted(package_imports())


@pytest.mark.parametrize("module", PARAMETERS)
def test_every_import_of_the_package_is_declared(module):
    found = package_imports()
    made_by_these = providers(module)
    assert made_by_these, f"{module} is imported ({found[module][0][0]}) but no installed distribution provides it"
    if made_by_these & RUNTIME:
        return
    eager = [where for where, deferred in found[module] if not deferred]
    assert made_by_these & EXTRAS, (f"{module} (from {sorted(made_by_these)}) is imported at {found[module][0][0]} but "
                              "pyproject.toml declares it nowhere: add it to [project] dependencies")
    assert not eager, (f"{module} is declared only in an extra but imported when the module loads, at {eager}: "
                       "import it where the feature needs it, or make it a runtime dependency")


def test_every_runtime_dependency_is_imported():
    found = package_imports()
    imported = set().union(*(providers(module) for module in found))
    source = "\n".join(path.read_text() for path in (ROOT / "src" / "chainrule").rglob("*.py"))
    for distribution, module in USED_THROUGH.items():
        assert module in source, f"{distribution} is declared for {module}, which chainrule no longer uses"
    unused = sorted(RUNTIME - imported - set(USED_THROUGH))
    assert not unused, f"pyproject.toml declares {unused} but src/chainrule never imports them"


def test_one_http_client_in_the_package_and_its_tests():
    used = {module for module in [*package_imports(), *third_party(imports(ROOT / "tests"))] if module in HTTP_CLIENTS}
    assert used == {"httpx"}, f"HTTP clients imported: {sorted(used)}; chainrule uses httpx alone"


def test_no_exact_pin_among_runtime_dependencies():
    pinned = [requirement for requirement in PROJECT["dependencies"] if "==" in requirement.split(";")[0]]
    assert not pinned, f"runtime dependencies pinned to one release: {pinned}; give a range a user can upgrade in"


def parameters(function) -> list[tuple[str, object]]:
    return [(parameter.name, parameter.kind) for parameter in inspect.signature(function).parameters.values()]


def test_uvicorn_is_pinned_to_the_minor_version_whose_internals_we_extend():
    from uvicorn.protocols.http import h11_impl

    from chainrule.web.connections import GuardedH11Protocol

    spec = next(requirement for requirement in PROJECT["dependencies"] if distribution_name(requirement) == "uvicorn")
    low, high = re.fullmatch(r"uvicorn>=(\d+\.\d+),<(\d+\.\d+)", spec.split("#")[0].strip()).groups()
    major, minor = map(int, low.split("."))
    assert high == f"{major}.{minor + 1}", f"{spec!r} admits more than one minor version of uvicorn"
    installed = importlib.metadata.version("uvicorn")
    assert installed.startswith(f"{low}."), f"uvicorn {installed} is installed, pyproject.toml pins {spec!r}"
    base = h11_impl.H11Protocol
    for name, method in vars(GuardedH11Protocol).items():
        if callable(method) and not name.startswith("_") and hasattr(base, name):
            assert parameters(getattr(base, name)) == parameters(method), \
                f"uvicorn's H11Protocol.{name} takes other parameters now"
    overridden = [name for name, method in vars(GuardedH11Protocol).items()
                  if inspect.isfunction(method) and "super()." in inspect.getsource(method)]
    assert {"connection_made", "connection_lost", "handle_events"} <= set(overridden)
    assert all(hasattr(base, name) for name in overridden), "a method GuardedH11Protocol extends left H11Protocol"
    protocol_source, cycle_source = inspect.getsource(base), inspect.getsource(h11_impl.RequestResponseCycle)
    for attribute in ("connections", "server_state", "loop", "app", "transport", "cycle", "conn", "flow"):
        assert f"self.{attribute} =" in protocol_source, f"H11Protocol no longer sets self.{attribute}"
    for attribute in ("response_complete", "default_headers", "waiting_for_100_continue"):
        assert f"self.{attribute} =" in cycle_source, f"RequestResponseCycle no longer sets self.{attribute}"
    # The request deadline's clock stops and starts with uvicorn's read flow control (web/connections.py).
    from uvicorn.protocols.http.flow_control import FlowControl
    assert "self.flow.pause_reading()" in protocol_source and "self.flow.resume_reading()" in cycle_source
    assert parameters(FlowControl.pause_reading) == parameters(FlowControl.resume_reading) == [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
