"""Rules for the test suite itself, read from its source (AST, no test is run): a test file is named by
what it checks, not by the round of work that wrote it; and only the tests that compare with PyTorch need
PyTorch (the others run where it is not installed)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Modules whose objects, built from PyTorch when the module is imported, the engine branches are rewriting;
# until their torch objects are made lazy, the whole module skips without PyTorch (issue 28 item 8).
SKIPS_AS_A_WHOLE_FOR_NOW = {
    "test_engine_torch.py": "UNARY and the other tables of torch functions are built at import",
    "test_forward_mode.py": "parity_fuzz subclasses torch.autograd.Function at import",
}


def suite_files():
    return sorted(path for path in TESTS.rglob("test_*.py") if "vendor" not in path.parts)


def test_no_test_file_or_test_is_named_by_a_round_of_work() -> None:
    by_round = re.compile(r"round_?\d|issue_?\d|item_?\d")
    named = [str(path.relative_to(TESTS)) for path in suite_files() if by_round.search(path.stem)]
    for path in suite_files():
        named += [f"{path.name}::{test.name}" for test in collected_tests(parsed(path)) if by_round.search(test.name)]
    assert named == []


# ---------------------------------------------------------------- who needs PyTorch


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def names_in(node: ast.AST) -> frozenset[str]:
    """Every name a node reads, and `module.attribute` for an attribute of a name. Kept per node (the trees
    are parsed once and never changed): torch_users asks again for each definition at each pass, and again
    for each test module that imports the same helper."""
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
            found.add(f"{child.value.id}.{child.attr}")
    return frozenset(found)


def helper_modules(tree: ast.Module) -> dict[str, str]:
    """Modules of tests/ this one imports as a whole: {name it is bound to: module name}."""
    return {alias.asname or alias.name: alias.name for node in tree.body if isinstance(node, ast.Import)
            for alias in node.names if (TESTS / f"{alias.name}.py").exists()}


# Names of other packages that run PyTorch: py-fsrs's optimizer (installed without PyTorch, it is a stub that
# raises when made), as `fsrs.Optimizer`, or imported from `fsrs` or `fsrs.optimizer`.
PYTORCH_ELSEWHERE = {"fsrs": {"Optimizer", "optimizer"}, "fsrs.optimizer": {"Optimizer"}}


def torch_users(path: Path, seen: dict[Path, set[str]] | None = None) -> set[str]:
    """The module-level names of a test module (functions, classes, constants) that use PyTorch, directly
    or through another such name, a helper module's such name or one of PYTORCH_ELSEWHERE; `torch` itself
    included."""
    seen = {} if seen is None else seen
    if path in seen:
        return seen[path]
    seen[path] = users = {"torch", *(f"{module}.{name}" for module in PYTORCH_ELSEWHERE
                                     for name in PYTORCH_ELSEWHERE[module])}
    tree = parsed(path)
    for bound, module in helper_modules(tree).items():
        users |= {f"{bound}.{name}" for name in torch_users(TESTS / f"{module}.py", seen)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and (TESTS / f"{node.module}.py").exists():
            theirs = torch_users(TESTS / f"{node.module}.py", seen)
            users |= {alias.asname or alias.name for alias in node.names if alias.name in theirs}
        if isinstance(node, ast.ImportFrom) and node.module in PYTORCH_ELSEWHERE:
            theirs = PYTORCH_ELSEWHERE[node.module]
            users |= {alias.asname or alias.name for alias in node.names if alias.name in theirs}
    definitions = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    definitions[target.id] = node
    changed = True
    while changed:
        changed = False
        for name, node in definitions.items():
            if name not in users and names_in(node) & users:
                users.add(name)
                changed = True
    return users


@functools.cache
def skips_as_a_whole(path: Path) -> bool:
    """Whether the module skips (or fails) at import without PyTorch: a module-level importorskip of torch,
    an import of torch outside a try, a `pytestmark` of needs_torch, or a helper module that does so."""
    for node in parsed(path).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        text = ast.unparse(node)
        if isinstance(node, (ast.Expr, ast.Assign)) and re.search(r"importorskip\(['\"]torch", text):
            return True
        if isinstance(node, ast.Assign) and "pytestmark" in names_in(node) and "needs_torch" in names_in(node):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(module.split(".")[0] == "torch" for module in modules):
                return True
            if any((TESTS / f"{module}.py").exists() and skips_as_a_whole(TESTS / f"{module}.py") for module in modules):
                return True
    return False


def evaluated_at_import(node: ast.AST):
    """The parts of a module-level statement run when the module is imported: not the bodies of functions
    and lambdas, nor the branch of an `if` that asks whether torch is there."""
    if isinstance(node, (ast.FunctionDef, ast.Lambda)):
        yield from (decorator for decorator in getattr(node, "decorator_list", []))
        return
    if isinstance(node, (ast.If, ast.IfExp)) and "torch" in names_in(node.test):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from evaluated_at_import(child)


def builds_torch_objects_at_import(path: Path) -> bool:
    return any(isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "torch"
               for node in parsed(path).body for part in evaluated_at_import(node))


def collected_tests(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from (item for item in node.body if isinstance(item, ast.FunctionDef) and item.name.startswith("test_"))


def marked_needs_torch(test: ast.FunctionDef) -> bool:
    return any("needs_torch" in names_in(decorator) for decorator in test.decorator_list)


def skips_inside(test: ast.FunctionDef) -> bool:
    """The test itself skips without PyTorch (importorskip or `if torch is None: pytest.skip`)."""
    text = ast.unparse(test)
    return bool(re.search(r"importorskip\(['\"]torch|torch is None", text))


def torch_needs(path: Path) -> dict[str, list[str]]:
    """Per rule, the tests of one module that break it."""
    tree = parsed(path)
    users = torch_users(path) - {"needs_torch"}  # the mark is not a use
    fixtures = {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in users}
    whole = skips_as_a_whole(path)
    found = {"built from PyTorch at import, in a module that does not skip as a whole":
             [] if whole or not builds_torch_objects_at_import(path) else ["(module level)"],
             "skipped with the module but never use PyTorch": [], "use PyTorch but are not marked needs_torch": [],
             "marked needs_torch but never use PyTorch": []}
    for test in collected_tests(tree):
        uses = bool(names_in(test) & users) or any(arg.arg in fixtures for arg in test.args.args)
        if whole and not uses:
            found["skipped with the module but never use PyTorch"].append(test.name)
        if not whole and uses and not marked_needs_torch(test) and not skips_inside(test):
            found["use PyTorch but are not marked needs_torch"].append(test.name)
        if marked_needs_torch(test) and not uses:
            found["marked needs_torch but never use PyTorch"].append(test.name)
    return {rule: tests for rule, tests in found.items() if tests}


def test_only_the_comparisons_with_pytorch_need_pytorch() -> None:
    broken = {str(path.relative_to(TESTS)): problems for path in suite_files()
              if path.name not in SKIPS_AS_A_WHOLE_FOR_NOW and (problems := torch_needs(path))}
    assert broken == {}


def test_the_rule_sees_a_test_that_skips_with_its_module_for_nothing(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text('import pytest\ntorch = pytest.importorskip("torch")\n\n'
                     'def t(x):\n    return torch.tensor(x)\n\n'
                     'def test_compares():\n    assert t(1.0).item() == 1.0\n\n'
                     'def test_adds():\n    assert 1 + 1 == 2\n', encoding="utf-8")
    assert torch_needs(probe) == {"skipped with the module but never use PyTorch": ["test_adds"]}
    probe = tmp_path / "test_marked_probe.py"
    probe.write_text('from reference_torch import needs_torch, torch\n\n'
                     'def test_compares():\n    assert torch.tensor(1.0).item() == 1.0\n\n'
                     '@needs_torch\ndef test_adds():\n    assert 1 + 1 == 2\n', encoding="utf-8")
    assert torch_needs(probe) == {"use PyTorch but are not marked needs_torch": ["test_compares"],
                                  "marked needs_torch but never use PyTorch": ["test_adds"]}
    probe = tmp_path / "test_eager_probe.py"
    probe.write_text('from reference_torch import needs_torch, torch\n\nTANH = torch.tanh\n'
                     'LAZY = lambda: torch.exp\nF = None if torch is None else torch.nn.functional\n', encoding="utf-8")
    assert torch_needs(probe) == {"built from PyTorch at import, in a module that does not skip as a whole":
                                  ["(module level)"]}
    probe = tmp_path / "test_fsrs_probe.py"
    probe.write_text('import fsrs\nfrom fsrs import Optimizer, Rating\n\n'
                     'def test_fits():\n    assert Optimizer([]).review_logs == ()\n\n'
                     'def test_fits_too():\n    assert fsrs.Optimizer([]).review_logs == ()\n\n'
                     'def test_rates():\n    assert Rating(1) == Rating.Again\n', encoding="utf-8")
    assert torch_needs(probe) == {"use PyTorch but are not marked needs_torch": ["test_fits", "test_fits_too"]}


def test_the_modules_left_skipping_as_a_whole_still_do() -> None:
    # When one of them is made lazy, its entry above goes, so that the rule covers it again.
    assert all(skips_as_a_whole(TESTS / name) for name in SKIPS_AS_A_WHOLE_FOR_NOW)
