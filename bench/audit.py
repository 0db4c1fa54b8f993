"""Lighthouse scores of the pages a visitor meets first, on a locally served build.

Builds the real site into build/audit/site, serves it on 127.0.0.1 with gzip
(as any static host or CDN would; Python's plain http.server sends every file
uncompressed, which no real host does), and runs Lighthouse from
bench/audit/node_modules against Debian's chromium, one page after another.
Prints the four scores per page and, for any score under its target, the
audits that cost points. Exit status 1 when a target is missed.

    python bench/audit.py [--site DIR] [--runs N]

Targets: performance >= 95, accessibility, best practices and SEO 100.
Lighthouse's default is a mid-range phone on a throttled mobile network.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "bench" / "audit" / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --no-first-run --disable-sync"
TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
COMPRESSIBLE = (".html", ".css", ".js", ".mjs", ".json", ".svg", ".xml", ".txt", ".pf_meta")


class GzipHandler(SimpleHTTPRequestHandler):
    """Static files, gzip-compressed for clients that accept it, like a production host."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the redirect to the folder with a slash
            path = path / "index.html"
        if not (path.is_file() and path.suffix in COMPRESSIBLE and "gzip" in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        return _Body(body)


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, *_):
        data, self.data = self.data, b""
        return data

    def close(self):
        pass


@contextlib.contextmanager
def serve(directory: Path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(GzipHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def pages() -> list[tuple[str, str]]:
    first = lambda kind: sorted(p.stem for p in (ROOT / "entries" / kind).glob("*.yaml"))[0]  # noqa: E731
    return [
        ("home", ""),
        ("errors index", "errors/"),
        ("error page", f"errors/{first('errors')}/"),
        ("guide page", f"guides/{first('guides')}/"),
        ("calculator", "will-it-run/"),
        ("paste box", "errors/#kb-paste"),
    ]


def build_site(dest: Path) -> None:
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(dest)]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"the site does not build:\n{result.stderr[-3000:]}")


def lighthouse(url: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}", f"--chrome-flags={CHROME_FLAGS}",
                   "--only-categories=performance,accessibility,best-practices,seo"]
        result = subprocess.run(command, env=os.environ | {"CHROME_PATH": CHROMIUM}, capture_output=True, text=True, timeout=300)
        if result.returncode or not out.is_file():
            raise RuntimeError(f"lighthouse failed on {url}:\n{result.stderr[-2000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def lost_points(report: dict, category: str) -> list[str]:
    out = []
    for ref in report["categories"][category]["auditRefs"]:
        audit = report["audits"][ref["id"]]
        if ref.get("weight", 0) > 0 and audit.get("score") is not None and audit["score"] < 1:
            value = audit.get("displayValue") or ""
            out.append(f"{ref['id']} {audit['score']:.2f} {value}".strip())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="audit this built site instead of building one")
    parser.add_argument("--runs", type=int, default=1, help="runs per page; the median performance score is kept")
    args = parser.parse_args(argv)
    if not LIGHTHOUSE.exists():
        sys.exit(f"{LIGHTHOUSE} is missing: run `make audit`, which installs it")
    site = args.site or ROOT / "build" / "audit" / "site"
    if not args.site:
        build_site(site)
    rows, notes, missed = [], [], 0
    with serve(site) as base:
        for name, path in pages():
            reports = [lighthouse(base + path) for _ in range(args.runs)]
            report = sorted(reports, key=lambda r: r["categories"]["performance"]["score"] or 0)[len(reports) // 2]
            scores = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in TARGETS}
            rows.append((name, "/" + path, scores, statistics.median(r["categories"]["performance"]["score"] or 0 for r in reports)))
            for category, target in TARGETS.items():
                if scores[category] < target:
                    missed += 1
                    notes.append(f"/{path} {category} {scores[category]} < {target}: " + "; ".join(lost_points(report, category)))
    width = max(len(r[1]) for r in rows)
    print(f"{'page':<{width}}  perf  a11y  best  seo")
    for name, path, scores, _ in rows:
        print(f"{path:<{width}}  {scores['performance']:>4}  {scores['accessibility']:>4}  {scores['best-practices']:>4}  {scores['seo']:>3}")
    print("targets: performance >= 95, accessibility, best practices and SEO 100 (Lighthouse mobile defaults, gzip on)")
    for note in notes:
        print("MISSED  " + note)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
