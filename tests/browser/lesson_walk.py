"""Every step and every gate of every lesson, walked in a real Chromium against the real server at one of SIZES:
ten test files each walk one fifth of the lessons at one size (test_lesson_states_desktop.py,
..._desktop_second.py, ..._desktop_third.py, ..._desktop_fourth.py and ..._desktop_last.py; the same for phone), so
the long walks run on as many workers as there are (--dist loadfile keeps a file on one worker).

Expected values come from the lesson's own spec and chainrule's prediction check, never read from the page.
"""

from __future__ import annotations

import re

from graph_checks import ASKED_IN_VIEW, OVERPRINTS, assert_asked_in_view
from lesson_pages import click, lesson, open_at
from path_walk import StateChecks

PLACEHOLDER = re.compile(r"\{\{\s*([^}]+?)\.(data|grad)\s*\}\}")


TOGETHER = """([holder, extra]) => {
    const root = document.getElementById(holder);
    const inside = (el, frame) => { const r = el.getBoundingClientRect(), f = frame.getBoundingClientRect();
      return r.top >= f.top - 1 && r.bottom <= f.bottom + 1 && r.left >= f.left - 1 && r.right <= f.right + 1; };
    const onScreen = (el) => { const r = el.getBoundingClientRect();
      return r.height > 0 && r.top >= -1 && r.bottom <= innerHeight + 1 && r.left >= -1 && r.right <= innerWidth + 1; };
    // At a prediction's gate the box to see is the one asked about (issue 32 item 1), else the step's.
    const box = root.querySelector('g.node.asked') || root.querySelector('g.node.active');
    const figure = root.querySelector('.graph-figure');
    const parts = {box: box && onScreen(box) && inside(box, figure), caption: onScreen(root.querySelector('.caption')),
                   controls: onScreen(root.querySelector('.player-controls button.next'))};
    if (extra) parts.extra = onScreen(document.querySelector(extra));
    return parts; }"""


# What the prediction player shows now, read in the same visit as the state's checks: the gate's key (None
# between gates), its position, whether Next can be pressed, and the parts' measurements (at a gate also the
# form's submit button on screen, the asked box in view, and no overprint in the player).
PREDICT_VIEW = f"""() => {{
    const player = document.getElementById('predict-player');
    const form = document.querySelector('form.prediction-form');
    return {{key: form ? form.dataset.key : null, position: player.dataset.position,
             nextEnabled: !player.querySelector('button.next').disabled,
             together: ({TOGETHER})(['predict-player', form ? 'form.prediction-form button[type=submit]' : null]),
             asked: form ? ({ASKED_IN_VIEW})('predict-player') : null,
             overprints: form ? ({OVERPRINTS})('#predict-player') : [],
             gradsShown: form ? Array.from(player.querySelectorAll('g.node')).filter(
                 (n) => n.querySelector('.node-grad').textContent !== '?').map((n) => n.dataset.label) : []}};
}}"""


def walk_predictions(page, lesson_id: str, checks: StateChecks) -> list[dict]:
    """Play section 04 with the Next buttons, answering each gate with the right value; at every step the
    box, caption and controls must be on screen together (at a gate the form too, and the asked box with
    the boxes it depends on: issue 32 item 1), and no number prints over a label (item 2). Returns, per
    gate, the key asked, the labels whose gradient the graph shows, and the reason given."""
    from chainrule.lessons import check_prediction, lesson_data

    spec = lesson_data(lesson_id)
    steps = {step["key"]: step for step in spec["predict"]["steps"]}
    graph = spec["graphs"][spec["predict"]["graph"]]

    def look() -> dict:
        [view] = checks.check("#section-04", lambda measured: (lesson_id, "gate", measured[0]["key"], "step",
                                                               measured[0]["position"]), (PREDICT_VIEW, None))
        if view["key"] or view["position"] != "0":
            assert all(view["together"].values()), (lesson_id, view["key"], view["position"], view["together"])
        return view

    gates = []
    view = look()
    for _ in range(200):
        if key := view["key"]:
            assert_asked_in_view(view["asked"], graph, steps[key]["node_label"], steps[key]["kind"], (lesson_id, key))
            assert view["overprints"] == [], (lesson_id, key)
            form = page.locator("form.prediction-form")
            form.locator("input").fill(repr(check_prediction(lesson_id, key, 0.0)["expected"]))
            click(page, "form.prediction-form button[type=submit]")
            reason = page.locator(f".prediction-feedback[data-key='{key}'] .reason").inner_text()
            gates.append({"key": key, "grads_shown": set(view["gradsShown"]), "reason": reason})
            checks.check("#section-04", (lesson_id, "answered", key))
            click(page, ".prediction-next")
        elif view["nextEnabled"]:
            click(page, "#predict-player button.next")
        else:
            return gates
        view = look()
    raise AssertionError("the prediction player never reached its end")


# The see-it-work player's parts on screen, no overprint in it and its position, and the plot's step and whether
# its Next can be pressed, read in the same visit as the state's checks.
SEE_IT_WORK_VIEW = f"""() => [({TOGETHER})(['see-it-work-player', null]), ({OVERPRINTS})('#see-it-work-player'),
    Number(document.getElementById('see-it-work-player').dataset.position)]"""
PLOT_VIEW = """() => { const plot = document.querySelector('#section-03 .fit-plot'), next = plot && plot.querySelector("button[data-action='next']");
    return {step: plot && plot.dataset.step, nextEnabled: Boolean(next && !next.disabled)}; }"""


FIFTHS = 5  # the walk of each size is split in five test files


def fifth_of_the_lessons(fifth: int) -> list[str]:
    """The first (0) to the last (4) fifth of the lessons, in their order (the first fifths the larger by one when
    the lessons do not divide by five: the later lessons are the longer walks)."""
    from chainrule.lessons import lesson_ids

    lessons = list(lesson_ids())
    size, larger = divmod(len(lessons), FIFTHS)
    start = fifth * size + min(fifth, larger)
    return lessons[start:start + size + (fifth < larger)]


def walk_every_state(open_page, walk_server, audited_states, size: str, fifth: int) -> None:
    """The walk of test_every_step_and_gate_shows_its_boxes_caption_and_controls_and_no_number_overprints at one
    size through one fifth of the lessons (fifth_of_the_lessons), on the server the walks at this size share on
    this worker (conftest.walk_server: the fifths hold different lessons). Item 2: at every step
    and gate the active box, its caption and the controls are on screen at once (on a phone, 390x844, the graph
    scrolls in a frame to fit). Item 4: predictions come in the order the lesson lists them, and no prompt or
    reason uses a gradient not shown yet. Issue 32: at a gate the asked box and the boxes it depends on are in view
    and named (item 1), every lesson graph fits a desktop frame (item 1), and no text of a graph prints over
    another or out of its box at any step (item 2). Issue 42 item 10: every lesson of the path (the five fifths
    together), and at each state (opened, every step of the graph players and the plot, every gate and answer) axe-core and
    the overflow checks (path_walk.StateChecks). The page asks for reduced motion (a setting learners use): each
    state is checked as it ends, so the animations between states are frames nobody checks (the animated passes
    play with motion in test_path_lessons, path_six and the desktop keyboard walk); one file's walk took 39.4 s
    of CPU instead of 47.3 s."""
    import json

    from chainrule.lessons import lesson_data

    server = walk_server(size)
    context, page, log = open_at(open_page, server, size, bypass_csp=True, reduced_motion="reduce")
    checks = StateChecks(page, size, audited_states)
    for lesson_id in fifth_of_the_lessons(fifth):
        lesson(page, server, lesson_id)
        if size == "desktop":
            frames = page.locator(".graph-figure").evaluate_all(
                "fs => fs.map(f => [f.closest('[id]').id, f.scrollWidth, f.clientWidth])")
            assert all(scroll <= client for _, scroll, client in frames), (lesson_id, frames)
        # Issue 42 item 10: axe-core and the overflow checks as the lesson opens, at every step of its players
        # and plot and at every gate, not only at the end; the plot's table view open, as a screen reader user has
        # it (the graphs' table views are opened by the keyboard walk).
        closed = page.locator("#section-03 details.plot-table-view:not([open]) > summary")
        for _ in range(closed.count()):  # a section may hold more than one plot, each with its table view
            closed.first.click()
        [plot] = checks.check("#section-03", (lesson_id, "opened"), (PLOT_VIEW, None))
        player = page.locator("#see-it-work-player")
        for position in range(1, int(player.get_attribute("data-total")) + 1):
            click(page, "#see-it-work-player button.next")
            [[together, clashes, shown]] = checks.check("#section-03", (lesson_id, "see it work", position), (SEE_IT_WORK_VIEW, None))
            assert shown == position, (lesson_id, "see it work", position, shown)
            assert all(together.values()), (lesson_id, "see it work", position, together)
            assert clashes == [], (lesson_id, position, clashes)
        while plot["nextEnabled"]:
            click(page, "#section-03 .fit-plot button[data-action='next']")
            [plot] = checks.check("#section-03", lambda measured: (lesson_id, "plot", measured[0]["step"]), (PLOT_VIEW, None))
        steps = lesson_data(lesson_id)["predict"]["steps"]
        gates = walk_predictions(page, lesson_id, checks)
        assert [gate["key"] for gate in gates] == [step["key"] for step in steps], lesson_id
        for gate, step in zip(gates, steps):
            # A prompt may use a gradient already on the graph; its reason also the one just predicted.
            for text, allowed in ((step["prompt"], gate["grads_shown"]),
                                  (step["reason"], gate["grads_shown"] | {step["node_label"]})):
                for path, field in PLACEHOLDER.findall(text):
                    if field == "grad":
                        label = path.split(".", 1)[1]
                        assert label in allowed, (lesson_id, step["key"], label, json.dumps(sorted(allowed)))
            # No reason speaks of a gradient still to be predicted.
            later = [s["node_label"] for s in steps[steps.index(step) + 1:] if s["kind"] == "backward"]
            for label in later:
                assert f"d{label}" not in gate["reason"] and f"dL/d{label}" not in gate["reason"], (step["key"], label)
        assert "Both gradients" not in " ".join(g["reason"] for g in gates[:-1])
    assert not log.page_errors


def walk_test(size: str, fifth: int):
    """The test of one fifth of the lessons at one size, for the test file that walks it (each of the ten files is
    this test and its docstring)."""

    def test_every_step_and_gate_shows_its_boxes_caption_and_controls_and_no_number_overprints(
            open_page, walk_server, audited_states) -> None:
        walk_every_state(open_page, walk_server, audited_states, size, fifth)

    return test_every_step_and_gate_shows_its_boxes_caption_and_controls_and_no_number_overprints
