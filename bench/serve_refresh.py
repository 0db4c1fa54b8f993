"""Edit to refresh under `make serve`: change one entry, time until its page shows the change.

Starts `mkdocs serve` (as `make serve` does) on a synthetic KB of 1,000
entries (bench/synth.py), waits for the first build, then edits the title of
one entry a few times and, after each edit, polls that entry's page until
the new title is served. Prints the median and the spread, for the plain
`serve` and for `serve --dirty` (which skips pages whose source did not
change).

    python bench/serve_refresh.py [--entries 1000] [--edits 3] [--modes serve,dirty]
"""

from __future__ import annotations

import argparse
import os
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

WORK = HERE.parent / "build" / "bench"
POLL = 0.05  # seconds between two requests for the page
TIMEOUT = 600


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


def measure(kb: Path, entry: Path, mode: str, edits: int) -> list[float]:
    port = free_port()
    # --dirty warns that navigation may be stale, and the project builds with strict: true, so it needs --no-strict.
    extra = ["--dirty", "--no-strict"] if mode == "dirty" else []
    command = [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}", *extra]
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command, cwd=kb, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    alive = lambda: server.poll() is None  # noqa: E731
    original = entry.read_text(encoding="utf-8")
    url = f"http://127.0.0.1:{port}/errors/{entry.stem}/"
    times = []
    try:
        start = time.monotonic()
        wait_for(url, None, start + TIMEOUT, alive)
        print(f"  {mode}: first build served after {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
        for n in range(1, edits + 1):
            marker = f"edited {n} at {time.time_ns()}"
            text = original.replace("\ntitle: ", f"\ntitle: {marker} ", 1)
            time.sleep(1.5)  # let the previous rebuild settle, so each edit is timed on its own
            edited = time.monotonic()
            entry.write_text(text, encoding="utf-8")
            seen = wait_for(url, marker, edited + TIMEOUT, alive)
            times.append(seen - edited)
            print(f"  {mode}: edit {n} served after {times[-1]:.1f} s", file=sys.stderr, flush=True)
    except RuntimeError:
        log.seek(0)
        sys.exit(f"mkdocs serve stopped:\n{log.read().decode(errors='replace')[-2000:]}")
    finally:
        entry.write_text(original, encoding="utf-8")
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--modes", default="serve,dirty", help="serve, dirty, or both")
    args = parser.parse_args(argv)
    kb = synth.make_kb(WORK / f"kb-{args.entries}", args.entries)
    entry = sorted((kb / "entries" / "errors").glob("*.yaml"))[len(list((kb / "entries" / "errors").glob("*.yaml"))) // 2]
    print(f"edit to refresh, {args.entries:,} entries, editing {entry.relative_to(kb)}:", flush=True)
    for mode in args.modes.split(","):
        times = measure(kb, entry, mode, args.edits)
        label = "make serve (mkdocs serve)" if mode == "serve" else "mkdocs serve --dirty"
        print(f"  {label:<28} median {statistics.median(times):5.1f} s  (min {min(times):.1f}, max {max(times):.1f}, {len(times)} edits)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
