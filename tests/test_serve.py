"""`make serve` under edits: a real `mkdocs serve` on a loopback port, a copy of the real entries, saves as an editor makes them.

Each save must show on every page it alters (the other end of a new related
link, the indexes that list a renamed title, the category page of a removed
entry), a broken save must leave the server running and the last good site
served, with the problem in the terminal and over the page in a real
browser, worded as `kb check` words it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, make_kb, run_kb

COMMAND = ["serve", "--dirty", "--no-strict"]  # as the Makefile's serve target
FIRST_BUILD = 900
SAVE = 180  # seconds a save may take to show on a loaded test machine (the bench measures speed)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def _page(url: str) -> str:
    """A served page without the reload call the server adds to each response (it names the request)."""
    status, body = _get(url)
    assert status == 200
    return re.sub(r"livereload\(\d+, \d+\);", "", body)


class Server:
    def __init__(self, kb: Path) -> None:
        self.kb = kb
        self.url = f"http://127.0.0.1:{_port()}/"
        self.log = tempfile.TemporaryFile()
        self.tmp = kb.parent / "server-tmp"  # the server's own temporary folder: what it leaves there after a stop is a leak
        self.tmp.mkdir(exist_ok=True)
        env = os.environ | {"NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(self.tmp)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", *COMMAND, "--dev-addr", self.url[7:-1]],
            cwd=kb, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
            # Ctrl-C must reach it even if the test process runs with SIGINT ignored (a child inherits that,
            # and Python then never raises KeyboardInterrupt): as in a terminal, the default disposition.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", errors="replace")

    def until(self, path: str, check, timeout: float = SAVE) -> str:
        """Poll a page until ``check(status, body)`` holds; its body."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"mkdocs serve stopped:\n{self.output()[-3000:]}"
            status, body = _get(self.url + path)
            if check(status, body):
                return body
            time.sleep(0.2)
        pytest.fail(f"{path} never showed the change; server said:\n{self.output()[-3000:]}")

    def stop(self) -> bool:
        """Stop it as a person does, with Ctrl-C (SIGINT); kill it only if it does not stop.

        A build under way when Ctrl-C arrives can delay the shutdown, and the preview removes its folder only
        then, so the wait allows for a whole build on a loaded machine, as a save does (SAVE). Whether it had
        to be killed."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=SAVE)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            return True
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    kb = make_kb(tmp_path_factory.mktemp("serve") / "kb", ROOT / "entries")
    s = Server(kb)
    try:
        s.until("errors/nccl-error/", lambda status, body: status == 200, FIRST_BUILD)
        yield s
    finally:
        killed = s.stop()
    left = list(s.tmp.glob("kb-preview-*"))
    assert not left, (f"the preview's folder of generated pages outlived the server (exit status {s.process.returncode}, "
                      f"{'killed after Ctrl-C did not stop it' if killed else 'stopped by Ctrl-C, or already stopped'}):\n{s.output()[-3000:]}")


def _edit(path: Path, **fields) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def test_a_save_builds_once(server):
    """A save starts one build, not a loop: a build reads templates and hooks, and reading is no change."""
    builds = lambda: server.output().count("Building documentation")  # noqa: E731
    before = builds()
    entry = server.kb / "entries" / "errors" / "nccl-error.yaml"
    entry.write_bytes(entry.read_bytes())  # saved again, unchanged
    deadline = time.monotonic() + SAVE
    while builds() == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert builds() > before, server.output()[-2000:]
    time.sleep(3)  # the build's last reads arrive
    after = builds()
    _page(server.url + "errors/nccl-error/")  # serving a page is no change either
    time.sleep(8)
    assert builds() == after, server.output()[-3000:]


def test_a_new_related_link_and_a_renamed_title_show_on_the_other_pages(server):
    errors = server.kb / "entries" / "errors"
    source = yaml.safe_load((errors / "nccl-error.yaml").read_text(encoding="utf-8"))
    assert "docker-shm-too-small" not in source.get("related_errors", [])
    _edit(errors / "nccl-error.yaml", related_errors=[*source.get("related_errors", []), "docker-shm-too-small"])
    server.until("errors/docker-shm-too-small/", lambda status, body: 'href="../nccl-error/"' in body)
    assert 'href="../docker-shm-too-small/"' in _get(server.url + "errors/nccl-error/")[1]

    target = yaml.safe_load((errors / "docker-shm-too-small.yaml").read_text(encoding="utf-8"))
    _edit(errors / "docker-shm-too-small.yaml", title="Renamedtitle for the shared memory error")
    server.until("errors/nccl-error/", lambda status, body: "Renamedtitle for the shared memory error" in body)
    category = target["category"]
    assert "Renamedtitle" in server.until(f"categories/{category}/", lambda status, body: "Renamedtitle" in body)
    for tool in target["tools"]:
        assert "Renamedtitle" in _get(server.url + f"tools/{tool}/")[1]


def test_a_new_entry_and_its_removal_show_on_its_category_page(server):
    errors = server.kb / "entries" / "errors"
    data = yaml.safe_load((errors / "port-already-in-use.yaml").read_text(encoding="utf-8"))
    data.update(title="Brandnewentry port test", aliases=[])
    new = errors / "port-already-in-use-brand-new.yaml"
    new.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    server.until(f"categories/{data['category']}/", lambda status, body: "Brandnewentry port test" in body)
    assert _get(server.url + "errors/port-already-in-use-brand-new/")[0] == 200
    new.unlink()
    server.until(f"categories/{data['category']}/", lambda status, body: status == 200 and "Brandnewentry" not in body)
    server.until("errors/port-already-in-use-brand-new/", lambda status, body: status == 404)


def _goto(page, url: str) -> None:
    """mkdocs serve's live reload may reload a page while it opens after a save: that navigation is aborted, so open it again."""
    for attempt in range(3):
        try:
            page.goto(url)
            return
        except Exception as error:  # playwright's Error: net::ERR_ABORTED
            if "ERR_ABORTED" not in str(error) or attempt == 2:
                raise
            page.wait_for_timeout(500)


def test_a_broken_save_is_shown_in_the_terminal_and_the_browser_and_the_last_good_site_stays(server, page):
    path = server.kb / "entries" / "errors" / "cuda-home-not-set.yaml"
    good = path.read_text(encoding="utf-8")
    served = _page(server.url + "errors/cuda-home-not-set/")
    data = yaml.safe_load(good)
    _edit(path, related_errors=["vllm-kv", *data.get("related_errors", [])])  # a dangling id, as an editor mistypes it
    expected = [line for line in run_kb("--root", str(server.kb), "check").stdout.splitlines() if line.strip()]
    assert expected and all("cuda-home-not-set.yaml" in line for line in expected), expected
    status = server.until("kb-preview/status.json", lambda status, body: "KB012" in body)
    assert yaml.safe_load(status)["problems"] == expected
    deadline = time.monotonic() + 30
    while not all(line in server.output() for line in expected) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(line in server.output() for line in expected), server.output()[-2000:]
    assert server.process.poll() is None

    assert _page(server.url + "errors/cuda-home-not-set/") == served  # the last good page, as it was
    _goto(page, server.url + "errors/cuda-home-not-set/")
    overlay = page.locator("#kb-preview-problems")
    overlay.wait_for(timeout=20_000)
    assert expected[0] in overlay.inner_text()
    page.goto("about:blank")  # leave the preview page, so its live reload after the next save cannot cut our navigation short

    path.write_text(good, encoding="utf-8")
    server.until("kb-preview/status.json", lambda status, body: status == 200 and '"problems": []' in body)
    with page.expect_response(lambda r: r.url.endswith("/kb-preview/status.json") and r.ok):
        page.goto(server.url + "errors/cuda-home-not-set/")
    page.wait_for_timeout(1000)  # the script has read the answer (no problems, checked above) by now
    assert page.locator("#kb-preview-problems").count() == 0


_BUILD = """
import logging, os, sys
from pathlib import Path
os.environ["NO_MKDOCS_2_WARNING"] = "1"
logging.disable(logging.WARNING)
from mkdocs.config import load_config
from mkdocs.commands.build import build
kb, site_dir, edits = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
url = "http://127.0.0.1:8000/"
os.chdir(kb)
for n, step in enumerate(["start", *edits]):
    if step != "start":
        target, text = step.split("=", 1)
        (kb / target).write_text(Path(text).read_text(encoding="utf-8"), encoding="utf-8")
    config = load_config(config_file=str(kb / "mkdocs.yml"), site_dir=site_dir, strict=False)
    config.site_url = url
    if n == 0:
        config.plugins.on_startup(command="serve", dirty=True)  # as `mkdocs serve --dirty` does
    build(config, serve_url=url, dirty=True)
"""


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def test_the_site_a_save_leaves_is_the_site_a_fresh_start_builds(tmp_path):
    """Every file dirty rebuilds leave (pages they skipped included: their navigation, the sitemap) equals a first build's,
    after an edit that changes other pages and a save that adds a page."""
    kb = make_kb(tmp_path / "kb", ROOT / "entries")
    entry = "entries/errors/nccl-error.yaml"
    data = yaml.safe_load((kb / entry).read_text(encoding="utf-8"))
    data.update(title="Retitled " + data["title"], related_errors=[*data.get("related_errors", []), "docker-shm-too-small"])
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    original = tmp_path / "original.yaml"
    original.write_bytes((kb / entry).read_bytes())

    def run(site: Path, *edits: str) -> None:
        result = subprocess.run([sys.executable, "-c", _BUILD, str(kb), str(site), *edits], capture_output=True, text=True, timeout=1800)
        assert result.returncode == 0, result.stderr[-3000:]

    added = yaml.safe_load((kb / "entries/errors/port-already-in-use.yaml").read_text(encoding="utf-8"))
    added.update(title="Port taken again (an added entry)", aliases=[])
    new_entry = tmp_path / "added.yaml"
    new_entry.write_text(yaml.safe_dump(added, sort_keys=False, allow_unicode=True), encoding="utf-8")

    run(tmp_path / "saved", f"{entry}={edited}", f"entries/errors/port-taken-again.yaml={new_entry}")  # start, then two saves
    run(tmp_path / "fresh-edited")  # the edited KB from scratch
    saved, fresh = _files(tmp_path / "saved"), _files(tmp_path / "fresh-edited")
    assert sorted(saved) == sorted(fresh)
    assert [name for name in sorted(saved) if saved[name] != fresh[name]] == []
    assert b"Retitled" in saved["errors/docker-shm-too-small/index.html"]
    assert b"/errors/port-taken-again/" in saved["sitemap.xml"], "a new page is in the sitemap the save leaves"
