"""No broken link and no missing anchor, found by a real crawler on the served site.

LinkChecker crawls the built real site from its home page, and from every
redirect page (aliases, short links) and every URL in published-urls.txt,
since nothing links to those. Internal links and their #anchors on other
pages must all resolve (anchors within a page are MkDocs' strict build's
job); external links are only checked for syntax (no network here).

Two settings keep the crawl short on a small machine. LinkChecker limits
itself to ten requests a second unless the server answers with a
"LinkChecker" header, which this test's server does. And the calculator's
prefilled links (thousands of /will-it-run/?m=...&g=... variants of one
page) are not fetched one by one: each page such links point to becomes a
start URL instead, so the page itself is still checked.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from conftest import ROOT

REDIRECT = b'http-equiv="refresh"'


class _CrawlerFriendly(SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("LinkChecker", "local test server")
        super().end_headers()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _serve(directory: Path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_CrawlerFriendly, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


QUERY_LINK = re.compile(r'href="([^"#?]*)\?[^"]*"')
SUMMARY = re.compile(r"That's it\. (\d+) links? in (\d+) URLs? checked\. (\d+) warnings? found\. (\d+) errors? found\.")


def start_urls(site: Path, base: str) -> list[str]:
    paths = {"/"}
    for page in site.rglob("*.html"):
        html = page.read_bytes()
        folder = "/" + page.parent.relative_to(site).as_posix() + "/"
        if REDIRECT in html[:2000]:
            paths.add(folder.replace("//", "/"))
        for target in QUERY_LINK.findall(html.decode("utf-8", errors="replace")):
            if not urlsplit(target).scheme and not target.startswith("//"):  # external links are not crawled
                paths.add(urljoin(folder.replace("//", "/"), target or "./"))
    manifest = ROOT / "published-urls.txt"
    if manifest.is_file():
        paths |= {line.strip() for line in manifest.read_text(encoding="utf-8").splitlines() if line.startswith("/")}
    return [base.rstrip("/") + p for p in sorted(paths)]


def crawl(site: Path) -> tuple[str, str]:
    linkchecker = Path(sys.executable).parent / "linkchecker"
    assert linkchecker.exists(), "LinkChecker is not installed: run `make test`, which installs requirements.lock"
    # LinkChecker drops root privileges to "nobody", so its configuration must be readable by anyone.
    with tempfile.NamedTemporaryFile("w", suffix=".rc", delete=False) as rc:
        rc.write(
            "[checking]\nthreads=8\nmaxrequestspersecond=1000\ntimeout=30\n"
            "[filtering]\ncheckextern=0\nignore=\n  ^http://127\\.0\\.0\\.1:[0-9]+/[^#]*\\?\n"
            "[AnchorCheck]\n"
        )
    os.chmod(rc.name, 0o644)
    try:
        with _serve(site) as base:
            command = [str(linkchecker), "--config", rc.name, "--no-status", "-o", "text", *start_urls(site, base)]
            result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    finally:
        os.unlink(rc.name)
    return result.stdout, result.stderr


def test_no_broken_internal_link_or_anchor(built_site):
    out, err = crawl(built_site)
    assert "Traceback" not in err, err[-3000:]
    summary = SUMMARY.search(out)
    assert summary, f"LinkChecker did not finish:\n{out[-2000:]}\n{err[-2000:]}"
    links, urls, warnings, errors = map(int, summary.groups())
    pages = sum(1 for _ in built_site.rglob("index.html"))
    assert urls >= pages, f"the crawl checked {urls} URLs for {pages} pages: it stopped early"
    problems = [block for block in out.split("\n\n") if block.startswith("URL") and ("\nWarning" in block or "\nResult     Error" in block)]
    assert warnings == 0 and errors == 0, f"{errors} broken link(s), {warnings} warning(s) (a missing anchor is a warning):\n\n" + "\n\n".join(problems[:30])
