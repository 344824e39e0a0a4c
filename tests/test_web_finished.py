""""Finished" is decided once, on the server (chainrule.progress.finished); the pages only show it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from chainrule.progress.finished import finished
from chainrule.web import create_app

SECTIONS = ["01", "02", "03", "04", "05", "06", "07", "08"]
TOTALS = {"predictions": 6, "exercises": 3, "quiz": 5}
NOTHING = {"predictions": 0, "exercises": 0, "quiz": 0, "explanation": False, "started": False}
EVERYTHING = {"predictions": 6, "exercises": 3, "quiz": 5, "explanation": True, "started": True}


@pytest.mark.parametrize(("done", "sections", "lesson"), [
    (NOTHING, [], False),
    (NOTHING | {"started": True}, ["01", "02", "03"], False),  # code saved: the reading before it is done
    (NOTHING | {"predictions": 6, "started": True}, ["01", "02", "03", "04"], False),
    (EVERYTHING | {"quiz": 4}, ["01", "02", "03", "04", "05", "07"], False),  # the recap waits for all work
    (EVERYTHING, SECTIONS, True),
])
def test_the_finished_rule(done, sections, lesson):
    assert finished(SECTIONS, TOTALS, done) == {"sections": sections, "lesson": lesson}


def test_progress_and_path_carry_the_servers_decision(tmp_path):
    app = create_app("t" * 20, tmp_path, port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765", headers={"X-Chainrule-Token": "t" * 20}) as client:
        assert client.get("/api/progress/backprop").json()["finished"] == {"sections": [], "lesson": False}
        client.put("/api/progress/backprop/predictions/n", json={"value": 1})
        assert client.get("/api/progress/backprop").json()["finished"]["sections"] == ["01", "02", "03"]
        entry = next(e for e in client.get("/api/path").json()["lessons"] if e["id"] == "backprop")
        assert entry["finished"] is False
