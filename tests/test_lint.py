"""`make test` lints first, and the type checker's strict blocks are strict where they say and nowhere else.

`make lint` itself (ruff, then mypy) is the check on the code; these tests guard its configuration, which
fails silently when it goes wrong: a strict block written `strict = true` makes mypy strict on every module
(mypy issue 11401), and a `make test` that no longer runs the linter passes whatever the code.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MYPY = PYPROJECT["tool"]["mypy"]
# What mypy's --strict stands for, in the options a per-module block can set (`mypy --help`, "--strict").
STRICT_FLAGS = {
    "disallow_any_generics": True, "disallow_subclassing_any": True, "disallow_untyped_calls": True,
    "disallow_untyped_defs": True, "disallow_incomplete_defs": True, "check_untyped_defs": True,
    "disallow_untyped_decorators": True, "warn_return_any": True, "implicit_reexport": False,
    "strict_equality": True, "extra_checks": True,
}


def make_rule(target: str) -> tuple[list[str], list[str]]:
    """The prerequisites and the recipe lines of one Makefile target."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"{re.escape(target)}:(?!=)", line))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return lines[start].split(":", 1)[1].split(), recipe


def test_make_test_runs_the_linter_and_the_type_checker_before_the_tests():
    prerequisites, _ = make_rule("test")
    assert "lint" in prerequisites
    _, recipe = make_rule("lint")
    assert any(re.search(r"-m ruff check \.$", line) for line in recipe), recipe
    assert any(re.search(r"-m mypy\b", line) and "--cache-dir $(VENV)/" in line for line in recipe), recipe


def test_the_tools_are_pinned_in_the_test_extra_and_mypy_checks_the_package():
    pins = {re.split(r"==", requirement)[0]: requirement for requirement in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert re.fullmatch(r"ruff==[\d.]+", pins["ruff"]) and re.fullmatch(r"mypy==[\d.]+", pins["mypy"])
    assert MYPY["files"] == ["src/chainrule"]
    assert "strict" not in MYPY, "strict for the whole package is not the rule: strict modules have their block"


def test_no_mypy_block_says_strict_each_spells_out_the_flags():
    overrides = MYPY.get("overrides", [])
    assert overrides, "pyproject.toml has no [[tool.mypy.overrides]] block: the grader is no longer strict"
    for block in overrides:
        assert "strict" not in block, (
            f"the block for {block['module']} says `strict`: mypy then checks every module strictly (mypy issue "
            f"11401); list the flags instead: {STRICT_FLAGS}")
    strict_modules = [module for block in overrides
                      if all(block.get(flag) == value for flag, value in STRICT_FLAGS.items())
                      for module in block["module"]]
    assert "chainrule.grading.*" in strict_modules


def blocks_with(flags: dict[str, bool]) -> list[str]:
    """The module patterns of every mypy block that sets all of `flags`."""
    return [module for block in MYPY["overrides"] if all(block.get(flag) == value for flag, value in flags.items())
            for module in block["module"]]


def covered(module: str, patterns: list[str]) -> bool:
    return any(module == pattern or (pattern.endswith(".*") and module.startswith(pattern[:-1]))
               for pattern in patterns)


def test_the_engine_modules_are_strict():
    """The engine, its pictures and texts, and the small modules beside them: every --strict flag (issue 46
    item 5); a block that loosens them fails here."""
    engine = ["chainrule.engine", "chainrule.replay", "chainrule.forward", "chainrule.losses", "chainrule.nn",
              "chainrule.drawing", "chainrule.explanations", "chainrule.plot", "chainrule.expr",
              "chainrule.number_text", "chainrule.micrograd.engine"]
    strict = blocks_with(STRICT_FLAGS)
    assert [module for module in engine if not covered(module, strict)] == []


def test_every_module_has_every_function_typed_and_checked():
    """A new module of the package lands in a block that types its functions, or this fails."""
    package = ROOT / "src" / "chainrule"
    modules = sorted(".".join(("chainrule", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
                     for path in package.rglob("*.py") if "data" not in path.relative_to(package).parts)
    typed = blocks_with({"disallow_untyped_defs": True, "check_untyped_defs": True})
    assert len(modules) > 150 and [module for module in modules if not covered(module, typed)] == []


def test_no_module_is_excused_from_mypy():
    """The NOT YET CHECKED list shrank to nothing (issue 46 item 5): mypy checks every module of the package."""
    excused = [block["module"] for block in MYPY["overrides"] if block.get("ignore_errors")]
    assert excused == [], f"modules excused from mypy (ignore_errors): {excused}"
