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


def test_the_engine_modules_are_checked_with_every_function_typed():
    """They left the NOT YET CHECKED list (issue 46 item 5); a block that stops checking them fails here."""
    engine = {"chainrule.engine", "chainrule.replay", "chainrule.forward", "chainrule.losses", "chainrule.nn",
              "chainrule.drawing", "chainrule.explanations", "chainrule.plot"}
    overrides = MYPY["overrides"]
    unchecked = {module for block in overrides if block.get("ignore_errors") for module in block["module"]}
    assert not engine & unchecked, f"back on the NOT YET CHECKED list: {sorted(engine & unchecked)}"
    typed = {module for block in overrides
             if all(block.get(flag) for flag in ("disallow_untyped_defs", "disallow_incomplete_defs",
                                                 "check_untyped_defs", "disallow_any_generics"))
             for module in block["module"]}
    assert engine <= typed, f"not checked with every function typed: {sorted(engine - typed)}"


def test_no_module_is_excused_from_mypy():
    """The NOT YET CHECKED list shrank to nothing (issue 46 item 5): mypy checks every module of the package."""
    excused = [block["module"] for block in MYPY["overrides"] if block.get("ignore_errors")]
    assert excused == [], f"modules excused from mypy (ignore_errors): {excused}"
