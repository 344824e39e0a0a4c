"""The wheel a user installs: built from the files a fresh clone has, installed into a clean virtual
environment with its runtime dependencies only, then used as a learner would: `chainrule lesson --no-browser`
serves the page and every static file it refers to, and `chainrule check` grades a starter in the sandbox.
So a file missing from the package data, or a dependency missing from pyproject.toml, fails here.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

import local_http
from chainrule.web.static_files import StaticBundle
from reaper import spawn
from web_process import stop, wait_for_url

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "chainrule"
# Only what the test extra adds: none of these may come with a plain install.
TEST_ONLY = ("torch", "pytest", "playwright", "schemathesis", "micrograd", "hypothesis")

pytestmark = pytest.mark.timeout(900)


def tracked_files() -> list[str]:
    """The files of a fresh clone: git's list when this is a checkout, else everything but build output."""
    if shutil.which("git") and (ROOT / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]
    skip = {".venv", "build", "dist", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis", ".git"}
    return [
        str(path.relative_to(ROOT)) for path in ROOT.rglob("*")
        if path.is_file() and not skip & set(path.relative_to(ROOT).parts) and ".egg-info" not in str(path)
    ]


def run(command: list[str], **options) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **options)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the checkout's tracked files, so nothing untracked or built here can hide a gap."""
    target = tmp_path_factory.mktemp("clone") / "chainrule"
    for name in tracked_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def wheel(clone, tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", str(clone), "--no-deps", "--quiet", "-w", str(dist)])
    (built,) = dist.glob("chainrule-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A clean environment holding the wheel and what its metadata asks for, nothing else."""
    home = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", "--without-pip", str(home)])
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # --no-compile: pip would byte-compile every file of every dependency (more than half its CPU here); the
    # modules a command imports are compiled when it first imports them, as anywhere.
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile", str(wheel)])
    return home


def tool(venv: Path, name: str) -> str:
    return str(venv / ("Scripts" if os.name == "nt" else "bin") / name)


def test_the_wheel_holds_every_file_of_the_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    prefix = "src/chainrule/"
    shipped = [name for name in tracked_files() if name.startswith(prefix)]
    assert len(shipped) > 100
    missing = [name for name in shipped if "chainrule/" + name[len(prefix):] not in names]
    assert missing == [], f"package files left out of the wheel (see package-data in pyproject.toml): {missing}"


def test_a_plain_install_has_the_runtime_dependencies_only(venv):
    listing = run([tool(venv, "python"), "-c", (
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"
    )], cwd=venv)
    installed = set(json.loads(listing.stdout))
    assert "chainrule" in installed
    assert not installed & set(TEST_ONLY), installed & set(TEST_ONLY)
    if sys.platform == "linux":
        assert "pyseccomp" in installed, "the seccomp layer must come with a plain install on Linux"


STATIC_REFERENCE = re.compile(r"""(?:href|src)="(/static/[^"]+)\"""")
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+?)['"]?\s*\)""")
JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}/[^"']+)["']""")


def crawl_static(client: httpx.Client, page_html: str) -> dict[str, bytes]:
    """Every /static file the page refers to, then everything those files refer to (CSS url(), JS imports)."""
    pending = sorted(set(STATIC_REFERENCE.findall(page_html)))
    fetched: dict[str, bytes] = {}
    while pending:
        path = pending.pop()
        if path in fetched:
            continue
        response = client.get(path)
        assert response.status_code == 200, f"{path}: {response.status_code}"
        fetched[path] = response.content
        if path.endswith((".css", ".js", ".mjs")):
            text = response.text
            found = CSS_URL.findall(text) if path.endswith(".css") else JS_IMPORT.findall(text)
            for reference in found:
                if reference.startswith(("data:", "http:", "https:")):
                    continue
                pending.append(urlsplit(urljoin(path, reference)).path)
    return fetched


def test_lesson_serves_the_page_and_its_static_files(venv, tmp_path):
    process = spawn(
        [tool(venv, "chainrule"), "lesson", "--no-browser", "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )
    try:
        url = wait_for_url(process).group("url")
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        with local_http.client(base_url=origin, follow_redirects=True, timeout=30) as client:
            page = client.get(url)
            assert page.status_code == 200 and "<html" in page.text.lower()
            lesson = client.get("/api/lessons/backprop")
            assert lesson.status_code == 200 and lesson.json()["sections"], lesson.text[:300]
            lesson_page = client.get("/lessons/backprop")  # the printed link opens the path page
            assert lesson_page.status_code == 200, lesson_page.text[:300]
            fetched = crawl_static(client, page.text + lesson_page.text)
    finally:
        stop(process)
    # The pages link to fingerprinted names (web/static_files.py): lesson.3f2a9c1b0d.js is lesson.js.
    plain = {re.sub(r"\.[0-9a-f]{10}(\.[a-z0-9]+)$", r"\1", name): body for name, body in fetched.items()}
    names = sorted(plain)
    for expected in ("/static/vendor/codemirror.js", "/static/vendor/katex.js", "/static/vendor/katex.css",
                     "/static/css/lesson.css", "/static/js/lesson.js"):
        assert expected in plain, f"{expected} not reached from the page; reached {names}"
    fonts = [name for name in names if name.endswith(".woff2")]
    assert fonts, f"no font reached from the page's CSS; reached {names}"
    checkout = StaticBundle(PACKAGE / "web" / "static")
    for name, body in plain.items():
        # Served as the checkout's files make them (its references fingerprinted): the wheel's copy, not a stray file.
        assert body == checkout.files[name.removeprefix("/static/")].body, name


def grade_starter(venv: Path, tmp_path: Path, language: str) -> tuple[int, dict]:
    run([tool(venv, "chainrule"), "start", "neuron-grads", "--lang", language], cwd=tmp_path)
    (starter,) = tmp_path.glob("neuron-grads.*")
    result = subprocess.run([tool(venv, "chainrule"), "check", starter.name, "--json"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    return result.returncode, json.loads(result.stdout or "null") or {"stderr": result.stderr}


def dev_isolation() -> dict:
    from chainrule.grading import isolation_report

    return isolation_report()


@pytest.mark.skipif(sys.platform != "linux", reason="grading needs Linux namespaces")
def test_check_grades_a_python_starter_with_every_layer_this_machine_has(venv, tmp_path):
    code, result = grade_starter(venv, tmp_path, "python")
    assert code == 1, result
    assert result["status"] == "fail" and result["tests"], result
    assert all(t["status"] != "error" for t in result["tests"]), result["tests"]
    missing = {m["layer"] for m in result["isolation"]["missing"]}
    # Exactly as strong as this checkout's own environment; seccomp wherever libseccomp is present.
    assert missing == {m["layer"] for m in dev_isolation()["missing"]}, result["isolation"]
    if ctypes.util.find_library("seccomp"):
        assert "seccomp" not in missing, result["isolation"]


@pytest.mark.skipif(sys.platform != "linux", reason="grading needs Linux namespaces")
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (scripts/system-deps.sh)")
def test_check_grades_a_typescript_starter(venv, tmp_path):
    code, result = grade_starter(venv, tmp_path, "typescript")
    assert code == 1, result
    assert result["status"] == "fail" and result["tests"], result
