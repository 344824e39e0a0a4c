"""No failed request at the connection cap (issue 31, item 3), against a real `chainrule serve --max-connections 4`:
newcomers wait while every connection is busy instead of getting a 503, and once the cap fills up answers
close their connections (`Connection: close`) instead of leaving browsers holding ones that will be cut."""

from __future__ import annotations

import http.client
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from class_process import CLASS, PASSWORD, ClassServer, csrf_of

CAP = 4
# Sign-ins in flight together for one name are counted as failures until each password is checked (simultaneous
# guesses wait their turn after FREE_FAILURES): 12 at once are 4 for each of 3 learners, under that allowance.
LEARNERS = ("Ada", "Bea", "Cy")


@pytest.fixture(scope="module")
def small_server(tmp_path_factory):
    server = ClassServer.start(tmp_path_factory.mktemp("cap"), serve_args=("--max-connections", str(CAP)))
    for name in LEARNERS:
        server.join(name).close()
    yield server
    server.stop()


def test_requests_past_the_cap_wait_for_a_place_instead_of_failing(small_server):
    """12 sign-ins at once, each a password check, on 12 new connections: more than CAP are busy together."""
    forms = []
    for number in range(12):
        with small_server.client() as browser:
            csrf = csrf_of(browser.get("/sign-in").text)
            forms.append((dict(browser.cookies), csrf, LEARNERS[number % len(LEARNERS)]))

    def sign_in(form):
        cookies, csrf, name = form
        with small_server.client(cookies) as browser:
            return browser.post("/sign-in", data={"csrf": csrf, "class_name": CLASS, "name": name,
                                                  "password": PASSWORD})

    with ThreadPoolExecutor(len(forms)) as pool:
        answers = list(pool.map(sign_in, forms))
    assert [answer.status_code for answer in answers] == [303] * len(forms), \
        [(answer.status_code, answer.text[:120]) for answer in answers]


def test_answers_close_their_connection_once_the_cap_fills_up(small_server):
    port = urlsplit(small_server.base).port

    def get(connection: http.client.HTTPConnection):
        connection.request("GET", "/sign-in")
        answer = connection.getresponse()
        answer.read()
        return answer

    held = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(3)]
    try:
        first = get(held[0])  # alone: kept alive
        assert first.status == 200 and (first.getheader("connection") or "").lower() != "close"
        second = get(held[1])
        assert (second.getheader("connection") or "").lower() != "close"
        crowded = get(held[2])  # 3 of 4 places open: this answer closes its connection
        assert crowded.status == 200 and crowded.getheader("connection").lower() == "close"
        again = get(held[0])  # the earlier kept-alive connection still works
        assert again.status == 200
    finally:
        for connection in held:
            connection.close()
