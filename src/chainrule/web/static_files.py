"""The pages' scripts, styles and fonts, fingerprinted and precompressed, so a browser fetches each once.

    bundle = static_bundle()            # built once per process from web/static/
    bundle.url("js/lesson.js")          # "/static/js/lesson.3f2a9c1b0d.js", what the pages link to
    bundle.write(folder)                # the fingerprinted files with .gz and .br beside them, for a proxy

Each file's fingerprinted name carries the first FINGERPRINT_LENGTH hex digits of the SHA-256 of what is
served under it. The files refer to one another (a module's `import "./api.js"`, a style sheet's
`url(fonts/...)`): those references are rewritten to the fingerprinted names first, so a file's name
changes when anything it loads changes, and a fingerprinted name is served with
`Cache-Control: public, max-age=31536000, immutable`. The plain names still answer (an old page, a
script that asks for one) with `no-cache` and an ETag, so they are revalidated, never kept stale.

Text files are served gzip- or brotli-compressed when the request's Accept-Encoding allows it (brotli
when the `brotli` package is installed), with `Vary: Accept-Encoding`; each is compressed once, when
first asked for (or all at once by `precompress()`, which `chainrule serve --workers N` calls before it
starts its N web processes, so that they share the result).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import mimetypes
import os
import posixpath
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from starlette.types import Receive, Scope, Send

__all__ = ["FINGERPRINT_LENGTH", "IMMUTABLE", "STATIC_DIR", "StaticBundle", "StaticFile", "static_bundle",
           "fingerprinted_name", "StaticFilesApp"]

STATIC_DIR = Path(__file__).parent / "static"
FINGERPRINT_LENGTH = 10
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# brotli's quality 5 compresses all the files in about 0.1 s and within 12 % of quality 11 (which takes 7 s):
# cheap enough to do on a page's first request.
BROTLI_QUALITY = 5
COMPRESSIBLE = {".js", ".css", ".json", ".md", ".svg", ".txt", ".html", ".map"}
FINGERPRINTED = re.compile(r"^(?P<stem>.+)\.(?P<hash>[0-9a-f]{%d})(?P<suffix>\.[A-Za-z0-9]+)$" % FINGERPRINT_LENGTH)

# A module's static imports (`from "./x.js"`, `import "./x.js"`, `export ... from`) and dynamic ones
# (`import("./x.js")`): only relative specifiers are ours to rewrite.
_JS_REFERENCE = re.compile(r"""(?P<lead>\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(?P<quote>["'])(?P<target>\.\.?/[^"'\s]+)(?P=quote)""")
_CSS_REFERENCE = re.compile(r"""(?P<lead>url\(\s*)(?P<quote>["']?)(?P<target>[^)"'\s]+)(?P=quote)""")

try:  # brotli is optional: without it, gzip only
    import brotli as _brotli
except ImportError:  # pragma: no cover - the test extra installs it
    _brotli = None


def fingerprinted_name(path: str, digest: str) -> str:
    """``js/lesson.js`` with digest ``3f2a...`` as ``js/lesson.3f2a9c1b0d.js``."""
    stem, suffix = posixpath.splitext(path)
    return f"{stem}.{digest[:FINGERPRINT_LENGTH]}{suffix}"


@dataclass
class StaticFile:
    """One file as served: its bytes after rewriting, its fingerprinted path, its compressed forms."""

    path: str  # relative to the static folder, with "/"
    body: bytes
    fingerprinted: str
    content_type: str
    encodings: dict[str, bytes] = field(default_factory=dict)  # "br" / "gzip" -> body, filled on demand

    @property
    def compressible(self) -> bool:
        return posixpath.splitext(self.path)[1] in COMPRESSIBLE

    @property
    def etag(self) -> str:
        return '"' + self.fingerprinted.rsplit(".", 2)[-2] + '"'


def _content_type(path: str) -> str:
    suffix = posixpath.splitext(path)[1]
    known = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".woff2": "font/woff2",
             ".md": "text/markdown", ".json": "application/json", ".svg": "image/svg+xml"}
    kind = known.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
    return kind + "; charset=utf-8" if kind.startswith("text/") or kind == "application/json" else kind


class StaticBundle:
    """Every file under ``root``, fingerprinted, with the references between them rewritten."""

    def __init__(self, root: Path = STATIC_DIR) -> None:
        self.root = Path(root)
        sources = {p.relative_to(self.root).as_posix(): p for p in sorted(self.root.rglob("*")) if p.is_file()}
        self.files: dict[str, StaticFile] = {}
        for path in sources:
            self._build(path, sources, ())
        self.by_fingerprint = {entry.fingerprinted: entry for entry in self.files.values()}
        self._lock = threading.Lock()

    def _build(self, path: str, sources: dict[str, Path], chain: tuple[str, ...]) -> StaticFile:
        if path in self.files:
            return self.files[path]
        if path in chain:
            raise ValueError("the static files import each other in a circle, which fingerprints cannot "
                             "name: " + " -> ".join((*chain[chain.index(path):], path)))
        body = sources[path].read_bytes()
        suffix = posixpath.splitext(path)[1]
        pattern = _JS_REFERENCE if suffix in (".js", ".mjs") else _CSS_REFERENCE if suffix == ".css" else None
        if pattern is not None:
            text = body.decode("utf-8")
            folder = posixpath.dirname(path)

            def rewrite(match: re.Match) -> str:
                target = match["target"]
                resolved = posixpath.normpath(posixpath.join(folder, target.split("?")[0].split("#")[0]))
                if resolved not in sources or resolved == path:
                    return match[0]
                named = self._build(resolved, sources, (*chain, path)).fingerprinted
                relative = posixpath.relpath(named, folder or ".")
                if target.startswith("./") and not relative.startswith("."):
                    relative = "./" + relative
                return f"{match['lead']}{match['quote']}{relative}{match['quote']}"

            body = pattern.sub(rewrite, text).encode("utf-8")
        entry = StaticFile(path, body, fingerprinted_name(path, hashlib.sha256(body).hexdigest()), _content_type(path))
        self.files[path] = entry
        return entry

    def url(self, path: str) -> str:
        """The address a page links to for the static file ``path`` (e.g. "js/lesson.js")."""
        return "/static/" + self.files[path].fingerprinted

    def find(self, path: str) -> tuple[StaticFile, bool] | None:
        """The file served at /static/``path`` and whether the name is fingerprinted (None: no such file)."""
        if path in self.by_fingerprint:
            return self.by_fingerprint[path], True
        entry = self.files.get(path)
        return (entry, False) if entry is not None else None

    def encoded(self, entry: StaticFile, encoding: str) -> bytes:
        """``entry``'s body in ``encoding`` ("br", "gzip" or "identity"), compressed once."""
        if encoding == "identity":
            return entry.body
        if encoding not in entry.encodings:
            with self._lock:
                if encoding not in entry.encodings:
                    entry.encodings[encoding] = (_brotli.compress(entry.body, quality=BROTLI_QUALITY) if encoding == "br"
                                                 else gzip.compress(entry.body, compresslevel=9, mtime=0))
        return entry.encodings[encoding]

    def encodings(self) -> tuple[str, ...]:
        """The compressions this process can serve, best first."""
        return ("br", "gzip") if _brotli is not None else ("gzip",)

    def precompress(self) -> None:
        for entry in self.files.values():
            if entry.compressible:
                for encoding in self.encodings():
                    self.encoded(entry, encoding)

    def write(self, folder: str | os.PathLike) -> list[Path]:
        """Write every fingerprinted file (and its .br / .gz forms) under ``folder``, keeping what is there
        (an open page of an older version still finds its files); returns the paths written."""
        written = []
        for entry in self.files.values():
            forms = [("", entry.body)]
            if entry.compressible:
                forms += [({"br": ".br", "gzip": ".gz"}[name], self.encoded(entry, name)) for name in self.encodings()]
            for extension, data in forms:
                target = Path(folder, entry.fingerprinted + extension)
                target.parent.mkdir(parents=True, exist_ok=True)
                if not (target.is_file() and target.read_bytes() == data):
                    partial = target.with_name(target.name + f".{os.getpid()}.part")
                    partial.write_bytes(data)
                    os.replace(partial, target)  # a proxy reading it meanwhile sees the whole file or none
                written.append(target)
        return written


@functools.lru_cache(maxsize=1)
def static_bundle() -> StaticBundle:
    return StaticBundle(STATIC_DIR)


def _accepted(header: str, offered: tuple[str, ...]) -> str:
    """The first of ``offered`` that an Accept-Encoding header accepts (q > 0), else "identity"."""
    weights: dict[str, float] = {}
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if name.strip():
            weights[name.strip().lower()] = quality
    for encoding in offered:
        if weights.get(encoding, weights.get("*", 0.0)) > 0:
            return encoding
    return "identity"


class StaticFilesApp:
    """The ASGI app mounted at /static: fingerprinted names cached for a year, plain names revalidated."""

    def __init__(self, bundle: StaticBundle | None = None) -> None:
        self.bundle = bundle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bundle = self.bundle or static_bundle()
        path = scope.get("path", "")
        found = bundle.find(path.removeprefix(scope.get("root_path", "")).lstrip("/"))
        method = scope.get("method", "GET")
        if found is None or method not in ("GET", "HEAD"):
            status, text = (404, "There is no such static file.") if found is None else \
                (405, "Static files are only read (GET or HEAD).")
            body = ('{"detail": "%s"}' % text).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            if status == 405:
                headers.append((b"allow", b"GET, HEAD"))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        entry, immutable = found
        request_headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        headers = [(b"content-type", entry.content_type.encode()), (b"etag", entry.etag.encode()),
                   (b"cache-control", (IMMUTABLE if immutable else REVALIDATE).encode())]
        if entry.compressible:
            headers.append((b"vary", b"Accept-Encoding"))
        encoding = _accepted(request_headers.get("accept-encoding", ""), bundle.encodings()) \
            if entry.compressible else "identity"
        etag = entry.etag if encoding == "identity" else f'{entry.etag[:-1]}-{encoding}"'  # one per representation
        headers[1] = (b"etag", etag.encode())
        if etag in (tag.strip() for tag in request_headers.get("if-none-match", "").split(",")):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body = bundle.encoded(entry, encoding)
        if encoding != "identity":
            headers.append((b"content-encoding", encoding.encode()))
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
