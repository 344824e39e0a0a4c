"""The learner sees one plain sentence about isolation, in the terminal and on the page, and no line
contradicts it; the layers are there on request (`--verbose`, `--json`, a closed <details>)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from chainrule.cli import main
from chainrule.grading import reference_source, sandbox
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(180)

BROWSER_FIXTURES = Path(__file__).resolve().parent / "browser" / "conftest.py"


@pytest.fixture
def layer_off(monkeypatch):
    """layer_off("SECCOMP") turns one layer off for the rest of the test (probing again)."""

    def turn_off(name: str) -> None:
        monkeypatch.setenv(f"CHAINRULE_SANDBOX_NO_{name}", "1")
        sandbox._probe_cached.cache_clear()

    yield turn_off
    monkeypatch.undo()
    sandbox._probe_cached.cache_clear()


def check_output(tmp_path: Path, capsys, *flags: str) -> str:
    path = tmp_path / "neuron-grads.py"
    path.write_text(reference_source("neuron-grads", "python"))
    assert main(["check", str(path), *flags]) == 0
    return capsys.readouterr().out


def test_check_prints_the_summary_as_its_one_isolation_line(tmp_path, capsys):
    report = sandbox.isolation_report()
    out = check_output(tmp_path, capsys)
    isolation = [line for line in out.splitlines() if "isolat" in line.lower() or "sandbox" in line.lower()]
    assert isolation == [f"isolation: {report['summary']}"]
    assert "missing" not in out and "not available" not in out


def test_check_verbose_adds_the_layers_under_that_line(tmp_path, capsys):
    report = sandbox.isolation_report()
    lines = check_output(tmp_path, capsys, "--verbose").splitlines()
    at = lines.index(f"isolation: {report['summary']}")
    on = [name for name, present in report["layers"].items() if present is True]
    assert lines[at + 1] == "  layers in use: " + ", ".join(on)
    for missing in report["missing"]:
        assert f"  not available: {missing['layer']}: {missing['error']}" in lines


def test_check_with_a_layer_off_says_partial_once_and_never_strong(tmp_path, capsys, layer_off):
    layer_off("SECCOMP")
    out = check_output(tmp_path, capsys, "--verbose")
    assert "isolation: Your code runs in a partial sandbox: this computer cannot give it the system-call filter." in out
    assert "strong" not in out
    assert "  not available: seccomp: disabled by CHAINRULE_SANDBOX_NO_SECCOMP" in out


def test_check_json_carries_the_summary_and_the_layers(tmp_path, capsys):
    result = json.loads(check_output(tmp_path, capsys, "--json"))
    assert result["isolation"] == sandbox.isolation_report()
    assert result["isolation"]["summary"].endswith(".")


# ------------------------------------------------------------------------------------- the page


def browser_fixtures():
    spec = importlib.util.spec_from_file_location("browser_fixtures", BROWSER_FIXTURES)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def graded_results(browser, data_dir: Path):
    """Start the real server, grade the starter of neuron-grads on the page, return (server, context, results)."""
    fixtures = browser_fixtures()
    server = fixtures.start_lesson_server(data_dir)
    context, page, _ = fixtures.new_page(browser, server)
    try:
        page.goto(f"{server.origin}/lessons/backprop")  # the printed link opens the path page
        block = page.locator("article[data-exercise='neuron-grads']")
        block.scroll_into_view_if_needed()
        with page.expect_response(lambda r: r.url.endswith("/api/grade"), timeout=120_000) as response:
            block.locator("button.run-tests").click()
        assert response.value.status == 200, response.value.text()
        page.wait_for_function(
            "() => { const r = document.querySelector(\"article[data-exercise='neuron-grads'] .results\");"
            " return r && !r.hasAttribute('aria-busy') && r.querySelector('p.isolation'); }", polling=PAGE_POLL_MS)
    except BaseException:  # no server left running when the page fails
        context.close()
        fixtures.stop_lesson_server(server.process)
        raise
    return fixtures, server, context, block.locator(".results")


@pytest.mark.parametrize("switch", [None, "SECCOMP"])
def test_the_page_shows_one_isolation_sentence_with_the_layers_folded_away(browser, tmp_path, monkeypatch, switch):
    if switch:
        monkeypatch.setenv(f"CHAINRULE_SANDBOX_NO_{switch}", "1")  # the server inherits it
    sandbox._probe_cached.cache_clear()
    report = sandbox.isolation_report()
    fixtures, server, context, results = graded_results(browser, tmp_path)
    try:
        assert results.locator("p.isolation").inner_text() == report["summary"]
        details = results.locator("details.isolation-details")
        assert details.get_attribute("open") is None  # folded away
        visible = results.inner_text()  # the text a reader sees: a closed <details> shows only its summary
        assert "Sandbox layers" in visible and "layers in use" not in visible and "not available" not in visible
        if report["level"] != "strong":
            assert "strong" not in visible
        details.locator("summary").click()
        opened = details.inner_text()
        assert f"Isolation: {report['level']}; layers in use:" in opened
        for missing in report["missing"]:
            assert f"not available: {missing['layer']}" in opened
    finally:
        context.close()
        fixtures.stop_lesson_server(server.process)
        sandbox._probe_cached.cache_clear()
