"""Real OpenID providers and chainrule, each a process, for the single sign-on tests: npm's oidc-provider (a
certified OpenID provider, on Node; tests/oidc/provider.mjs) serving two issuers on 127.0.0.1 ("School" and
"Other", the second for the mix-up tests), and `chainrule serve` on localhost with both added by `chainrule sso
add`, and a third ("Down") whose address answers nothing.

oidc-provider is installed from npm by install_provider() (npm ci with tests/oidc/package-lock.json, into
tests/oidc/node_modules, once: the next runs find it there).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from filelock import FileLock
from joserfc.jwk import RSAKey

from chainrule.classes import open_class_store
from chainrule.progress.sso_store import SsoStore
from lti_world import REPO, Browser, cli, forms_of, free_port, start_process, stop_process

PROVIDER_DIR = REPO / "tests" / "oidc"
CLIENT_ID, SECRET = "chainrule-class", "a-client-secret-only-the-tests-know"
PEOPLE = {"ada-7f3": {"name": "Ada Lovelace", "email": "shared@school.example"},
          "bea-c21": {"name": "Bea Noether", "email": "shared@school.example"},
          "hopper-9a0": {"name": "Grace Hopper", "email": "hopper@school.example"},
          "dot-4e2": {"name": "Dorothy Vaughan", "email": "dorothy@school.example"},
          "kat-5d1": {"name": "Katherine Johnson", "email": "katherine@school.example"},
          # For a roster's seats: e-mails the provider verified, and one it did not.
          "lin-3c8": {"name": "Lin Park", "email": "Lin@School.example", "email_verified": True},
          "nia-2b7": {"name": "Nia Obi", "email": "nia@school.example", "email_verified": True},
          "max-6e0": {"name": "Max Moss", "email": "max@school.example", "email_verified": False}}
PASSWORD = "correct horse battery"


def install_provider() -> Path:
    """oidc-provider from npm, as tests/oidc/package-lock.json pins it (skips the test, saying why, without npm)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("the single sign-on tests need Node.js and npm (scripts/system-deps.sh installs them)")
    marker = PROVIDER_DIR / "node_modules" / "oidc-provider" / "package.json"
    wanted = json.loads((PROVIDER_DIR / "package.json").read_text())["dependencies"]["oidc-provider"]
    with FileLock(str(PROVIDER_DIR / ".install.lock")):
        if not marker.is_file() or json.loads(marker.read_text())["version"] != wanted:
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PROVIDER_DIR,
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"npm ci of oidc-provider failed:\n{done.stdout}\n{done.stderr}")
    return PROVIDER_DIR / "provider.mjs"


def start_providers(script: Path, root: Path, issuers: dict[str, tuple[int, str]], env: dict) -> subprocess.Popen:
    """oidc-provider (``script``, install_provider's) serving one issuer per entry of ``issuers`` (a name: its
    port and the redirect URI its one client, CLIENT_ID with SECRET, has registered), each knowing PEOPLE, all in
    one process; the process, once the last issuer listens."""
    providers = []
    for name, (port, redirect_uri) in issuers.items():
        key = RSAKey.generate_key(2048, parameters={"kid": f"{name.lower()}-key", "use": "sig", "alg": "RS256"})
        providers.append({"port": port, "jwks": {"keys": [key.as_dict(private=True)]}, "accounts": PEOPLE,
                          "clients": [{"client_id": CLIENT_ID, "client_secret": SECRET, "redirect_uris": [redirect_uri],
                                       "response_types": ["code"], "grant_types": ["authorization_code"]}]})
    config = root / "providers.json"
    config.write_text(json.dumps({"providers": providers}))
    process, _ = start_process(["node", str(script), str(config)], env, providers[-1]["port"])
    return process


@dataclass
class OidcWorld:
    root: Path
    env: dict
    tool_port: int
    ports: dict[str, int]
    invite: str = ""
    teacher_link: str = ""
    providers: subprocess.Popen | None = None
    tool: subprocess.Popen | None = None
    tool_lines: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)  # the providers' row ids
    callbacks: dict[str, str] = field(default_factory=dict)  # their redirect URIs, as `chainrule sso redirect-uri` says

    @property
    def tool_url(self) -> str:
        return f"http://localhost:{self.tool_port}"

    def issuer(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    @classmethod
    def start(cls, root: Path, *, database: str | None = None) -> "OidcWorld":
        script = install_provider()
        tool_port = free_port()
        ports = {"School": free_port(), "Other": free_port(), "Down": free_port()}
        env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(root / "data"))
        env.pop("CHAINRULE_DATABASE", None)
        if database:
            env["CHAINRULE_DATABASE"] = database
        world = cls(root, env, tool_port, ports)
        for name in ("School", "Other", "Down"):
            # The redirect URI is known before the provider gives a client ID (it is named after the provider).
            code, printed, error = cli("sso", "redirect-uri", name, "--url", world.tool_url, env=env)
            assert code == 0, error
            world.callbacks[name] = printed.strip()
        world.providers = start_providers(script, root, {name: (ports[name], world.callbacks[name])
                                                         for name in ("School", "Other")}, env)
        for name in ("School", "Other", "Down"):
            code, printed, error = cli("sso", "add", name, "--issuer", world.issuer(name), "--client-id", CLIENT_ID,
                                       "--url", world.tool_url, env=dict(env, CHAINRULE_SSO_SECRET=SECRET))
            assert code == 0, error
            assert printed.strip().endswith(f"Register this redirect URI at the provider: {world.callbacks[name]}")
        store = open_class_store(root / "data", database)
        try:
            world.ids = {provider.name: int(provider.id) for provider in SsoStore(store).providers()}
        finally:
            store.close()
        made = cli("class", "create", "Physics 2b", "--url", world.tool_url, env=env)[1]
        world.teacher_link, world.invite = [line.strip() for line in made.splitlines() if "://" in line]
        world.tool, world.tool_lines = start_process(
            [sys.executable, "-m", "chainrule", "serve", "--port", str(tool_port), "--url",
             world.tool_url, "--workers", "1"], env, tool_port)
        return world

    def stop(self) -> None:
        for process in (self.tool, self.providers):
            if process is not None:
                stop_process(process)

    def __enter__(self) -> "OidcWorld":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ a browser's side

    def start_sign_in(self, browser: Browser, page: str, provider: str, **fields: str):
        """Open one of our pages (sign-in, join, account) and press its button for the provider; the answer."""
        shown = browser.request("GET", self.tool_url + page)
        assert shown.status_code == 200, shown.text
        action, form = [f for f in forms_of(shown.text) if f[0] == f"/sso/start/{self.ids[provider]}"][0]
        return browser.request("POST", self.tool_url + action, data=dict(form, **fields),
                               headers={"origin": self.tool_url})

    def at_provider(self, browser: Browser, started, login: str) -> str:
        """Through the provider's own pages (its development login: any password; then consent) to the address
        it sends the browser back to; that address."""
        assert started.status_code == 200, started.text
        url = going_to(started.text)
        while True:
            answer = browser.request("GET", url)
            while answer.is_redirect:
                url = urljoin(url, answer.headers["location"])
                if url.startswith(self.tool_url):
                    return url
                answer = browser.request("GET", url)
            action, form = forms_of(answer.text)[0]
            if "login" in form:
                form.update(login=login, password="anything")
            answer = browser.request("POST", urljoin(url, action), data=form)
            while answer.is_redirect:
                url = urljoin(url, answer.headers["location"])
                if url.startswith(self.tool_url):
                    return url
                answer = browser.request("GET", url)

    def sign_in_with(self, browser: Browser, page: str, provider: str, login: str, **fields: str):
        back = self.at_provider(browser, self.start_sign_in(browser, page, provider, **fields), login)
        return browser.request("GET", back)

    def set_mode(self, provider: str, **mode) -> None:
        import local_http

        local_http.post(self.issuer(provider) + "/test/mode", json=mode, timeout=10).raise_for_status()


def going_to(text: str) -> str:
    """Where a page of ours that moves on by itself (sso_go.html) goes."""
    found = re.search(r'href="([^"]+)" id="sso-continue"', text)
    assert found, text
    return html.unescape(found.group(1))


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}

