"""Edit to refresh under `make serve`: save a change, time until every page it alters is served changed.

For each KB size (the real entries, or N synthetic ones from bench/synth.py)
this starts `mkdocs serve` as `make serve` does, waits for the first build,
then makes three kinds of edit a few times each and, after each save, polls
the page that must change until it shows the change:

- typo: a word changes in one entry's cause; its own page must show it;
- related: one entry gains a related link; the OTHER entry's page must link back;
- new: a new entry file appears; its category's index page must list it.

Prints the median, min and max per kind and size. The real KB is copied
first (build/bench/kb-real), so nothing under entries/ is touched.

    python bench/serve_refresh.py [--sizes real,1000,10000] [--edits 3] [--kinds typo,related,new]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

WORK = ROOT / "build" / "bench"
POLL = 0.05  # seconds between two requests for the page
SETTLE = 2.0  # seconds between edits, so each one is timed on its own
TIMEOUT = 900
COMMAND = ["serve", "--dirty", "--no-strict"]  # what `make serve` runs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def wait_for(url: str, text: str | None, deadline: float, alive) -> float:
    """Poll ``url`` until it answers (and contains ``text``); the moment it did."""
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("the server stopped")
        body = fetch(url)
        if body is not None and (text is None or text in body):
            return time.monotonic()
        time.sleep(POLL)
    raise TimeoutError(f"{url} did not show {text!r} in time")


def wait_gone(url: str, text: str, deadline: float, alive) -> None:
    """Poll ``url`` until it no longer contains ``text`` (the undo was built), so the next edit starts on an idle server."""
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("the server stopped")
        body = fetch(url)
        if body is not None and text not in body:
            return
        time.sleep(POLL)
    raise TimeoutError(f"{url} still shows {text!r}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc): the build's own cost, whatever the machine's load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def real_kb() -> Path:
    """A copy of the project's KB (configuration, pages, templates, entries) to edit freely."""
    dest = WORK / "kb-real"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in ("mkdocs.yml", "site_src", "templates", "entries", "CONTRIBUTING.md"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, dest / name)
    (dest / "hooks").symlink_to(ROOT / "hooks")
    return dest


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _dump(path: Path, data: dict) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")


class Edits:
    """The three kinds of edit on one KB; each gives (file, data to save, page to poll, text it must show, undo)."""

    def __init__(self, kb: Path) -> None:
        self.errors = kb / "entries" / "errors"
        files = sorted(self.errors.glob("*.yaml"))
        self.entry = files[len(files) // 2]
        self.original = self.entry.read_text(encoding="utf-8")
        self.data = _load(self.entry)
        linked = set(self.data.get("related_errors", []))
        # targets for new links: entries that neither name this one nor are named by it
        self.targets = [p for p in files if p != self.entry and p.stem not in linked and self.entry.stem not in p.read_text(encoding="utf-8")][:20]

    def _restore(self) -> None:
        self.entry.write_text(self.original, encoding="utf-8")

    def typo(self, n: int):
        marker = f"typomarker{n}x{time.time_ns() % 10**6}"
        data = dict(self.data, cause=self.data["cause"].replace(" ", f" {marker} ", 1))
        return self.entry, data, f"errors/{self.entry.stem}/", marker, self._restore

    def related(self, n: int):
        target = self.targets[n % len(self.targets)]
        data = dict(self.data, related_errors=[*self.data.get("related_errors", []), target.stem])
        return self.entry, data, f"errors/{target.stem}/", f'href="../{self.entry.stem}/"', self._restore

    def new(self, n: int):
        path = self.errors / f"{self.entry.stem}-copy-{n}.yaml"
        marker = f"Newentrymarker{n}x{time.time_ns() % 10**6}"
        data = dict(self.data, title=f"{marker} {self.data['title']}", aliases=[])
        return path, data, f"categories/{self.data['category']}/", marker, lambda: path.unlink()


def measure(kb: Path, kinds: list[str], edits_per_kind: int) -> dict[str, tuple[list[float], list[float]]]:
    port = free_port()
    command = [sys.executable, "-m", "mkdocs", *COMMAND, "--dev-addr", f"127.0.0.1:{port}"]
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command, cwd=kb, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    alive = lambda: server.poll() is None  # noqa: E731
    edits = Edits(kb)
    base = f"http://127.0.0.1:{port}/"
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    undo = None
    try:
        start = time.monotonic()
        wait_for(base + f"errors/{edits.entry.stem}/", None, start + TIMEOUT, alive)
        print(f"  first build served after {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
        for kind in kinds:
            for n in range(1, edits_per_kind + 1):
                path, data, url, marker, undo = getattr(edits, kind)(n)
                time.sleep(SETTLE)
                before = cpu_seconds(server.pid)
                saved = time.monotonic()
                _dump(path, data)
                seen = wait_for(base + url, marker, saved + TIMEOUT, alive)
                times[kind].append(seen - saved)
                cpu[kind].append(cpu_seconds(server.pid) - before)
                print(f"  {kind} {n}: {url} changed after {times[kind][-1]:.2f} s ({cpu[kind][-1]:.2f} s of CPU)", file=sys.stderr, flush=True)
                undo()
                undo = None
                wait_gone(base + url, marker, time.monotonic() + TIMEOUT, alive)
    except (RuntimeError, TimeoutError) as exc:
        log.seek(0)
        sys.exit(f"{exc}; mkdocs serve said:\n{log.read().decode(errors='replace')[-3000:]}")
    finally:
        if undo:
            undo()
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGINT)  # Ctrl-C: MkDocs runs the shutdown hook, which removes the preview's folder
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return {k: (times[k], cpu[k]) for k in kinds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="real,1000,10000", help="comma-separated: real and/or entry counts")
    parser.add_argument("--edits", type=int, default=3, help="edits of each kind (the median is printed)")
    parser.add_argument("--kinds", default="typo,related,new")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",")
    rows = []
    for size in args.sizes.split(","):
        kb = real_kb() if size == "real" else synth.make_kb(WORK / f"kb-{size}", int(size))
        count = sum(1 for _ in (kb / "entries").glob("*/*.yaml"))
        print(f"edit to refresh, {size} KB ({count:,} entry files), `mkdocs {' '.join(COMMAND)}`:", file=sys.stderr, flush=True)
        for kind, (times, cpu) in measure(kb, kinds, args.edits).items():
            rows.append((size, count, kind, times, cpu))
    print(f"{'KB':>6}  {'files':>7}  {'edit':<8}  {'median s':>8}  {'min s':>6}  {'max s':>6}  {'CPU s':>6}  edits")
    for size, count, kind, times, cpu in rows:
        print(f"{size:>6}  {count:>7,}  {kind:<8}  {statistics.median(times):8.2f}  {min(times):6.2f}  {max(times):6.2f}  {statistics.median(cpu):6.2f}  {len(times)}")
    print("median/min/max s: from the save to the moment the page that must change is served changed (the server hears\n"
          "of a save from the operating system, or by polling every 0.5 s with KB_SERVE_POLL=1; either wait is included);\n"
          "CPU s: the server's median CPU time over the same span, what\n"
          f"the save costs whatever else the machine runs. {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
