"""The lesson app (chainrule.web.create_app) in this process, for a test module's API calls: a TestClient that
sends the session token with every request. Used by test_web_playground and test_driven_plots."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from chainrule.web import create_app


@contextmanager
def lesson_app_client(data_dir: Path, token: str, port: int) -> Iterator[TestClient]:
    app = create_app(token, data_dir, port=port)
    test_client = TestClient(app, base_url=f"http://127.0.0.1:{port}")
    test_client.headers.update({"X-Chainrule-Token": token})
    try:
        with test_client:
            yield test_client
    finally:
        app.state.services.close()
