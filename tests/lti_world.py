"""An LMS and chainrule, each a real process, for the LTI tests: tests/lti_platform.py (lti1p3platform) on
127.0.0.1 and `chainrule serve` on localhost (another site, as an LMS and a tool are), the LMS registered with
`chainrule lti register`.

    world = LtiWorld.start(tmp_path)
    journey = world.launch("ada", link)        # the HTTP exchanges a browser makes, cookies kept per host
    world.stop()
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

import local_http
from polling import until
from reaper import spawn

REPO = Path(__file__).resolve().parents[1]
CLIENT_ID, DEPLOYMENT = "chainrule-test-client", "deployment-1"
LEARNER, TEACHER = ["Learner"], ["Instructor"]
ASSISTANT_SUBROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
# The score sender's rounds (`serve --lms-interval`; 2 s by default): a score reaches the LMS soon after the work,
# and a test that waits for it waits less.
SENDER_INTERVAL = 0.25
COURSES = {
    "physics": {"title": "Physics 2b", "label": "PHY2B", "members": {
        "ada": {"name": "Ada Lovelace", "roles": LEARNER, "email": "shared@school.example"},
        "bea": {"name": "Bea Noether", "roles": LEARNER, "email": "shared@school.example"},
        "cyd": {"name": "Cyd Charisse", "roles": LEARNER},
        "mimic": {"name": "\u0410da Lovelace", "roles": LEARNER},  # a Cyrillic A: it looks like Ada's name
        "hopper": {"name": "Grace Hopper", "roles": TEACHER},
        "olly": {"name": "Olly Observer", "roles": ["Mentor"]}}},
    "chemistry": {"title": "Chemistry", "label": "CHEM", "members": {
        "ada": {"name": "Ada Lovelace", "roles": LEARNER}, "curie": {"name": "Marie Curie", "roles": TEACHER}}},
    "biology": {"title": "Biology", "label": "BIO", "members": {
        "ada": {"name": "Ada Lovelace", "roles": LEARNER}, "dina": {"name": "Dina Sanichar", "roles": LEARNER},
        "lamarck": {"name": "Jean Lamarck", "roles": TEACHER}}},
    # Teaching assistants, in the forms LMSs send: LIS v2's sub-role beside its principal role (as Canvas does),
    # the sub-role alone, a section's assistant, and LTI 1.1's URN.
    "art": {"title": "Art", "label": "ART", "members": {
        "kahlo": {"name": "Frida Kahlo", "roles": TEACHER}, "ada": {"name": "Ada Lovelace", "roles": LEARNER},
        "tam": {"name": "Tam Tran", "roles": ["Instructor", ASSISTANT_SUBROLE]},
        "uma": {"name": "Uma Ueda", "roles": [ASSISTANT_SUBROLE]},
        "vic": {"name": "Vic Vance", "roles": [ASSISTANT_SUBROLE + "Section"]},
        "wyn": {"name": "Wyn Wale", "roles": ["urn:lti:role:ims/lis/TeachingAssistant"]}}},
    "history": {"title": "History", "label": "HIST", "members": {
        "ada": {"name": "Ada Lovelace", "roles": LEARNER}, "hume": {"name": "David Hume", "roles": TEACHER}}},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen, lines: list[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the process ended:\n" + "".join(lines))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the process did not listen in time:\n" + "".join(lines))


def start_process(command: list[str], env: dict, port: int) -> tuple[subprocess.Popen, list[str]]:
    process = spawn(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True).start()
    wait_listening(port, process, lines)
    return process, lines


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def chainrule(*argv: str, env: dict, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "chainrule", *argv], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)
    assert not ok or done.returncode == 0, done.stderr
    return done


def cli(*argv: str, env: dict) -> tuple[int, str, str]:
    """`chainrule ARGV` in this process (a command's own start costs seconds on a loaded machine): its exit code,
    output and errors, with the CHAINRULE_ variables of ``env`` (the class's data folder and database)."""
    import contextlib
    import io

    from chainrule.cli import main

    names = {"CHAINRULE_DATA_DIR", "CHAINRULE_DATABASE"} | {name for name in env if name.startswith("CHAINRULE_")}
    saved = {name: os.environ.get(name) for name in names}
    out, err = io.StringIO(), io.StringIO()
    try:
        for name in names:
            os.environ.pop(name, None)
            if env.get(name):
                os.environ[name] = env[name]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exit:  # argparse refuses the arguments (code 2), or --help (0)
                code = exit.code if isinstance(exit.code, int) else 1
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value
    return code, out.getvalue(), err.getvalue()


class Forms(HTMLParser):
    """Every form of a page: (action, {field: value})."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = dict(attrs)
        if tag == "form":
            self.forms.append((values.get("action") or "", {}))
        elif tag == "input" and self.forms and values.get("name"):
            self.forms[-1][1][values["name"]] = values.get("value") or ""


def forms_of(text: str) -> list[tuple[str, dict[str, str]]]:
    parser = Forms()
    parser.feed(text)
    return parser.forms


class Browser:
    """The HTTP side of a browser: cookies per host (Secure ones too, as browsers keep them on localhost),
    redirects followed by hand so that every step can be looked at."""

    def __init__(self) -> None:
        self.http = local_http.client(timeout=30, follow_redirects=False)
        self.jar: dict[str, dict[str, str]] = {}

    def _keep(self, host: str, response: httpx.Response) -> None:
        for header in response.headers.get_list("set-cookie"):
            pair, *attributes = [part.strip() for part in header.split(";")]
            name, _, value = pair.partition("=")
            expired = any(a.lower() in ("max-age=0",) for a in attributes)
            if expired or not value:
                self.jar.get(host, {}).pop(name, None)
            else:
                self.jar.setdefault(host, {})[name] = value

    def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        host = urlsplit(url).netloc
        cookies = self.jar.get(host, {})
        headers = dict(kwargs.pop("headers", {}) or {})
        if cookies:
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        response = self.http.request(method, url, headers=headers, **kwargs)
        self._keep(host, response)
        return response

    def follow(self, url: str, stop_at: str | None = None) -> httpx.Response:
        """GET url and its redirects, until an answer that is not a redirect (or one whose URL starts with stop_at)."""
        response = self.request("GET", url)
        while response.is_redirect:
            url = urljoin(url, response.headers["location"])
            if stop_at and url.startswith(stop_at):
                break
            response = self.request("GET", url)
        return response

    def csrf(self, host: str) -> str:
        return self.jar.get(host, {}).get("chainrule_csrf", "")


@dataclass
class Journey:
    """One launch's exchanges: the authorization request the tool sent (state, nonce), the id_token the LMS
    signed, and the tool's answer to the launch."""

    auth: dict[str, str]
    form: dict[str, str]
    answer: httpx.Response
    state_cookie: tuple[str, str] = ("", "")
    details: dict = field(default_factory=dict)


@dataclass
class LtiWorld:
    root: Path
    env: dict
    platform_config: Path
    tool_port: int
    platform_port: int
    platform: subprocess.Popen | None = None
    tool: subprocess.Popen | None = None
    tool_lines: list[str] = field(default_factory=list)
    platform_lines: list[str] = field(default_factory=list)

    @property
    def tool_url(self) -> str:
        return f"http://localhost:{self.tool_port}"

    @property
    def lms_url(self) -> str:
        return f"http://127.0.0.1:{self.platform_port}"

    @classmethod
    def start(cls, root: Path, *, database: str | None = None, retry: float = 0.5) -> "LtiWorld":
        tool_port, platform_port = free_port(), free_port()
        env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(root / "data"))
        env.pop("CHAINRULE_DATABASE", None)
        if database:
            env["CHAINRULE_DATABASE"] = database
        tool = f"http://localhost:{tool_port}"
        config = {"port": platform_port, "state_dir": str(root / "lms"), "client_id": CLIENT_ID,
                  "deployment_id": DEPLOYMENT, "courses": COURSES,
                  "tool": {"login": f"{tool}/lti/login", "redirect": f"{tool}/lti/launch", "target": f"{tool}/",
                           "jwks": f"{tool}/lti/jwks.json"}}
        (root / "lms").mkdir(parents=True, exist_ok=True)
        path = root / "lms.json"
        path.write_text(json.dumps(config))
        world = cls(root, env, path, tool_port, platform_port)
        world.start_platform()
        world.register(CLIENT_ID, f"{world.lms_url}/jwks")
        world.start_tool(retry)
        return world

    def register(self, client_id: str, jwks_url: str) -> None:
        """`chainrule lti register` of this LMS for this tool under ``client_id`` (a second client ID, with a key
        set at an address of its own on the LMS, /jwks/NAME, is a registration of its own)."""
        lms = self.lms_url
        code, _, error = cli("lti", "register", "--url", self.tool_url, "--issuer", lms, "--client-id", client_id,
                             "--deployment-id", DEPLOYMENT, "--jwks-url", jwks_url, "--auth-url", f"{lms}/auth",
                             "--token-url", f"{lms}/token", "--name", "Test LMS", env=self.env)
        assert code == 0, error

    def start_platform(self) -> None:
        self.platform, self.platform_lines = start_process([sys.executable, str(REPO / "tests" / "lti_platform.py"),
                                          str(self.platform_config)], self.env, self.platform_port)

    def stop_platform(self) -> None:
        if self.platform is not None:
            stop_process(self.platform)

    def start_tool(self, retry: float = 0.5) -> None:
        self.tool, self.tool_lines = start_process(
            [sys.executable, "-m", "chainrule", "serve", "--port", str(self.tool_port), "--url", self.tool_url,
             "--lms-retry", str(retry), "--lms-interval", str(SENDER_INTERVAL), "--workers", "1"], self.env,
            self.tool_port)

    def stop(self) -> None:
        for process in (self.tool, self.platform):
            if process is not None:
                stop_process(process)

    def __enter__(self) -> "LtiWorld":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ the LMS's side

    def lms(self, method: str, path: str, **kwargs) -> httpx.Response:
        answer = local_http.request(method, self.lms_url + path, timeout=30, **kwargs)
        assert answer.status_code == 200, answer.text
        return answer

    def state(self) -> dict:
        return self.lms("GET", "/state").json()

    def add_link(self, course: str, lesson: str | None, *, line_item: bool = False, url: str = "") -> str:
        target = url or (f"{self.tool_url}/lessons/{lesson}" if lesson else f"{self.tool_url}/")
        body = {"course": course, "title": lesson or "path", "url": target, "line_item": line_item}
        return self.lms("POST", "/links", json=body).json()["link"]

    def platform_key(self) -> str:
        return json.loads((self.root / "lms" / "state.json").read_text())["private_key"]

    # ------------------------------------------------------------ a browser's side

    def begin(self, browser: Browser, user: str, link: str, window: int = 0) -> Journey:
        """The launch up to the id_token: the LMS's login initiation, the tool's login (its cookie), the LMS's
        answer (the form it would post to the tool)."""
        to_tool = browser.request("GET", f"{self.lms_url}/start/{link}?user={user}&window={window}")
        assert to_tool.status_code == 302, to_tool.text
        login = browser.request("GET", to_tool.headers["location"])
        assert login.status_code == 302, login.text
        auth_url = login.headers["location"]
        auth = {key: values[0] for key, values in parse_qs(urlsplit(auth_url).query).items()}
        page = browser.request("GET", auth_url)
        assert page.status_code == 200, page.text
        action, form = forms_of(page.text)[0]
        assert action == f"{self.tool_url}/lti/launch"
        cookie = next(((name, value) for name, value in browser.jar.get(f"localhost:{self.tool_port}", {}).items()
                       if name.startswith("chainrule_lti_")), ("", ""))
        return Journey(auth, form, None, cookie)  # type: ignore[arg-type]

    def post_launch(self, browser: Browser, form: dict, *, frame: bool = True) -> httpx.Response:
        return browser.request("POST", f"{self.tool_url}/lti/launch", data=form, headers={
            "origin": self.lms_url, "sec-fetch-dest": "iframe" if frame else "document"})

    def launch(self, browser: Browser, user: str, link: str, *, frame: bool = True) -> Journey:
        journey = self.begin(browser, user, link, window=0 if frame else 1)
        journey.answer = self.post_launch(browser, journey.form, frame=frame)
        return journey

    def tool_get(self, browser: Browser, path: str) -> httpx.Response:
        return browser.request("GET", self.tool_url + path)

    def tool_change(self, browser: Browser, method: str, path: str, body: dict) -> httpx.Response:
        host = f"localhost:{self.tool_port}"
        return browser.request(method, self.tool_url + path, json=body,
                               headers={"x-csrf-token": browser.csrf(host), "origin": self.tool_url})

    def wait(self, check, seconds: float = 60, what: str = "the LMS") -> object:
        """Wait until check() gives something true (polling the LMS's state), and give it."""
        try:
            return until(check, what, seconds, every=0.2)
        except AssertionError as error:
            raise AssertionError(f"{error}; the tool said:\n" + "".join(self.tool_lines[-40:])) from None


def refusal(answer: httpx.Response) -> str:
    """The cause a refused launch names (its header; the page says the same in words)."""
    cause = answer.headers.get("x-chainrule-lti-refusal", "")
    if cause:
        assert re.search(rf'data-cause="{re.escape(cause)}"', answer.text), answer.text
    return cause


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with LtiWorld.start(tmp_path_factory.mktemp("lti")) as started:
        yield started


@pytest.fixture(scope="module")
def backprop_link(world) -> str:
    return world.add_link("physics", "backprop")


def me(world: LtiWorld, browser: Browser) -> dict:
    answer = world.tool_get(browser, "/api/class/me")
    assert answer.status_code == 200, answer.text
    return answer.json()


def scores_for(world: LtiWorld, user: str, resource: str) -> list[dict]:
    state = world.state()
    columns = {url for url, item in state["line_items"].items() if item.get("resourceId") == resource
               and item["course"] == "physics"}
    return [post for post in state["score_posts"] if post["userId"] == user and post["line_item"] in columns]
