"""Static files against a real `chainrule serve --static-dir DIR` (issue 31, item 2): pages link to fingerprinted
names that a browser may keep for a year, each served gzip- or brotli-compressed as asked, the pages themselves
never cached, and the folder written for a proxy laid out as docs/classroom.md's Caddyfile reads it."""

from __future__ import annotations

import gzip
import hashlib
import posixpath
import re
from pathlib import Path

import brotli
import pytest

from class_process import ClassServer

REPO = Path(__file__).resolve().parents[1]
IMMUTABLE = "public, max-age=31536000, immutable"
LINKED = re.compile(r"""(?:href|src)="(/static/[^"]+)\"""")
IMPORTED = {".js": re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.\.?/[^"']+)["']"""),
            ".css": re.compile(r"""url\(\s*["']?([^)"']+)""")}
PAGES = ("/sign-in", "/", "/lessons/backprop", "/review", "/account")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("static")
    server = ClassServer.start(folder, serve_args=("--static-dir", str(folder / "out")))
    learner = server.join("Ada")
    learner.urls = linked_files(learner)
    yield server, folder / "out", learner
    learner.close()
    server.stop()


def linked_files(client) -> set[str]:
    """Every /static address a signed-in learner's pages link to, and what those files import, transitively."""
    todo = {url for page in PAGES for url in LINKED.findall(client.get(page).text)}
    seen: set[str] = set()
    while todo:
        url = todo.pop()
        seen.add(url)
        answer = client.get(url, headers={"accept-encoding": "identity"})
        assert answer.status_code == 200, url
        references = IMPORTED[posixpath.splitext(url)[1]].findall(answer.text) if url.endswith((".js", ".css")) else []
        for reference in references:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(url), reference))
            if target.startswith("/static/") and target not in seen:
                todo.add(target)
    return seen


def test_pages_link_fingerprinted_files_cached_for_a_year(served):
    server, _, client = served
    urls = client.urls
    assert any(url.endswith(".woff2") for url in urls) and any("/js/" in url for url in urls)
    for url in urls:
        answer = client.get(url, headers={"accept-encoding": "identity"})
        name = re.fullmatch(r"/static/.+\.([0-9a-f]{10})\.[a-z0-9]+", url)
        assert name, f"{url} is not fingerprinted"
        assert hashlib.sha256(answer.content).hexdigest()[:10] == name.group(1), url
        assert answer.headers["cache-control"] == IMMUTABLE, url
    page = client.get("/sign-in")
    assert page.headers["cache-control"] == "no-store"
    plain = client.get("/static/js/api.js")
    assert plain.status_code == 200 and plain.headers["cache-control"] == "no-cache"
    again = client.get("/static/js/api.js", headers={"if-none-match": plain.headers["etag"]})
    assert again.status_code == 304


def test_text_files_come_compressed_as_the_browser_accepts(served):
    server, _, client = served
    script = max((url for url in client.urls if url.endswith(".js")), key=len)
    plain = client.get(script, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    expected = plain.content
    for accept, encoding, decode in (("gzip, deflate, br, zstd", "br", brotli.decompress),
                                     ("gzip", "gzip", gzip.decompress),
                                     ("br;q=0, gzip;q=0.5", "gzip", gzip.decompress)):
        with client.stream("GET", script, headers={"accept-encoding": accept}) as answer:
            raw = b"".join(answer.iter_raw())
            assert answer.headers["content-encoding"] == encoding, accept
            assert answer.headers["vary"] == "Accept-Encoding"
            assert int(answer.headers["content-length"]) == len(raw) < len(expected)
        assert decode(raw) == expected


def caddy_rules() -> tuple[re.Pattern, str]:
    guide = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
    caddyfile = guide.split("# /etc/caddy/Caddyfile", 1)[1].split("```", 1)[0]
    pattern = re.search(r"@static path_regexp (\S+)", caddyfile).group(1)
    root = re.search(r"root \* (\S+)", caddyfile).group(1)
    assert "uri strip_prefix /static" in caddyfile and "precompressed br gzip" in caddyfile
    assert IMMUTABLE in caddyfile
    return re.compile(pattern), root


def test_the_folder_for_the_proxy_is_what_the_documented_caddyfile_serves(served):
    server, folder, client = served
    pattern, root = caddy_rules()
    guide = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
    assert f"--static-dir {root}" in guide  # the unit writes where Caddy reads
    for url in client.urls:
        assert pattern.search(url), f"Caddy would pass {url} to chainrule"
        kept = folder / url.removeprefix("/static/")  # uri strip_prefix /static, under root
        served_bytes = client.get(url, headers={"accept-encoding": "identity"}).content
        assert kept.read_bytes() == served_bytes, url
        if url.endswith((".js", ".css")):
            assert brotli.decompress(Path(f"{kept}.br").read_bytes()) == served_bytes
            assert gzip.decompress(Path(f"{kept}.gz").read_bytes()) == served_bytes
    assert not pattern.search("/static/js/api.js")  # plain names reach chainrule, which revalidates them
    for path in folder.rglob("*"):
        if path.is_file():
            relative = path.relative_to(folder).as_posix().removesuffix(".br").removesuffix(".gz")
            assert pattern.search("/static/" + relative), relative
