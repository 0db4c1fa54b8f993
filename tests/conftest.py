"""Shared fixtures: a real MkDocs build of a KB, served on loopback, and a real browser.

``kb_copy`` makes a throw-away KB from the project's own mkdocs.yml, site_src
and templates with the entries a test chooses; ``built_site`` is one strict
build of the real entries/ for the whole run; ``site_server`` serves it;
``page`` is Debian's chromium driven by Playwright.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def run_kb(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "errorkb.cli", *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


def mkdocs_build(root: Path, site_dir: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"} | (extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=root, capture_output=True, text=True, timeout=600, env=env,
    )


def make_kb(dest: Path, entries: Path) -> Path:
    """A KB folder with the project's configuration and theme and the given entries/."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("mkdocs.yml", "site_src", "templates"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    (dest / "hooks").symlink_to(ROOT / "hooks")
    shutil.copytree(entries, dest / "entries")
    return dest


@pytest.fixture
def kb_copy(tmp_path):
    return partial(make_kb, tmp_path / "kb")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("real") / "site"
    result = mkdocs_build(ROOT, site)
    assert result.returncode == 0, result.stderr
    return site


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output readable
        pass


@contextlib.contextmanager
def serve(directory: Path):
    handler = partial(_Quiet, directory=str(directory))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site_server(built_site):
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test`, which installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/ from the current output")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")
