"""How the build scales: synthetic KBs of growing size, built with our hook and with plain Material.

For each size: generate the KB (bench/synth.py), build it with the project's
mkdocs.yml (the hook runs the whole pipeline), then build the very same pages
written out as Markdown files with the hook removed (same theme, same
extensions, same navigation), and print one table with the targets checked.

    python bench/scale.py                    # 100, 1,000 and 10,000 entries
    python bench/scale.py --sizes 100,1000   # a quicker run

Wall time is the best of a few runs for the small sizes (the machine is
shared); peak memory is the build process's own maximum resident set.
Generated KBs are kept in build/bench/ and reused while their size is the same.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "hooks"))
sys.path.insert(0, str(HERE))

import synth  # noqa: E402
from errorkb.build import pipeline  # noqa: E402
from errorkb.cli.settings import read_settings  # noqa: E402

WORK = ROOT / "build" / "bench"
TARGETS = {
    "overhead": 1.10,  # our build time over plain Material's
    "linear": 11.0,  # 10k time over 1k time
    "ten_k_seconds": 120.0,
    "entry_page_bytes": 40_000,
    "search_bytes_per_entry": 1_500,
}


class _Lenient(yaml.SafeLoader):
    """Reads mkdocs.yml, ignoring tags such as !!python/name that only MkDocs resolves."""


_Lenient.add_multi_constructor("", lambda loader, suffix, node: None)


@dataclass
class Run:
    seconds: float
    peak_mib: float


@dataclass
class Row:
    entries: int
    ours: Run
    plain: Run
    pipeline_seconds: float
    pages: int
    site_bytes: int
    entry_page_bytes: int
    entry_page_max: int
    search_bytes: int | None
    matcher_bytes: int | None


def timed_build(kb: Path, config: str, site_dir: Path) -> Run:
    """One strict build in a child process; its wall time and its own peak memory (wait4's rusage)."""
    shutil.rmtree(site_dir, ignore_errors=True)
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", config, "--site-dir", str(site_dir)]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=kb, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"build of {kb / config} failed:\n{stderr.decode(errors='replace')[-3000:]}")
    return Run(seconds, usage.ru_maxrss / 1024)


def plain_copy(kb: Path) -> tuple[Path, float]:
    """The same site as Markdown files (site_src/ plus every generated page and file, no hook), and the pipeline's own time."""
    start = time.perf_counter()
    site = pipeline.build(kb, read_settings(kb))
    seconds = time.perf_counter() - start
    if site.problems:
        sys.exit("\n".join(p.format() for p in site.problems[:20]))
    dest = kb.parent / f"plain-{kb.name}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(kb / "site_src", dest / "docs")
    shutil.copytree(kb / "templates", dest / "templates")
    for page in site.pages:
        target = dest / "docs" / page.src_uri
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.markdown, encoding="utf-8")
    for item in site.files:
        target = dest / "docs" / item.dest_uri
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.content)
    config = yaml.load((kb / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Lenient)
    plain = {
        "INHERIT": str(kb / "mkdocs.yml"),
        "docs_dir": "docs",
        "hooks": [],
        "watch": [],
        "nav": pipeline.expand_nav(config.get("nav") or [], pipeline.nav_sections(site)),
    }
    (dest / "mkdocs.yml").write_text(yaml.safe_dump(plain, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest, seconds


def tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def search_index_bytes(site: Path) -> int | None:
    """The search index proper: Pagefind's index chunks, filters and metadata when the site uses Pagefind
    (not its code, nor the per-result fragments), otherwise Material's one search_index.json."""
    pagefind = site / "pagefind"
    if pagefind.is_dir():
        parts = [p for p in pagefind.rglob("*") if p.is_file() and (p.parent.name in ("index", "filter") or p.suffix == ".pf_meta" or p.name == "pagefind-entry.json")]
        return sum(p.stat().st_size for p in parts)
    lunr = site / "search" / "search_index.json"
    return lunr.stat().st_size if lunr.is_file() else None


def matcher_index_bytes(site: Path) -> int | None:
    files = [p for p in (site / "api").rglob("*") if p.is_file() and "match" in p.name] if (site / "api").is_dir() else []
    return sum(p.stat().st_size for p in files) if files else None


def entry_page_sizes(kb: Path) -> list[int]:
    """Bytes of each error page's HTML, without the shared CSS, JavaScript and images it loads."""
    ids = [p.stem for p in (kb / "entries" / "errors").glob("*.yaml")]
    return sorted((kb / "site" / "errors" / i / "index.html").stat().st_size for i in ids)


def measure(size: int, repeats: int) -> Row:
    kb = synth.make_kb(WORK / f"kb-{size}", size)
    plain, pipeline_seconds = plain_copy(kb)
    ours_runs, plain_runs = [], []
    for _ in range(repeats):  # alternate, so a busy moment hurts both alike
        ours_runs.append(timed_build(kb, "mkdocs.yml", kb / "site"))
        plain_runs.append(timed_build(plain, "mkdocs.yml", plain / "site"))
    site = kb / "site"
    counts = {k: len(list((kb / "entries" / k).glob("*.yaml"))) for k in ("errors", "guides")}
    entries = sum(counts.values())
    sizes = entry_page_sizes(kb)
    search = search_index_bytes(site)
    matcher = matcher_index_bytes(site)
    return Row(
        entries=entries,
        ours=min(ours_runs, key=lambda r: r.seconds),
        plain=min(plain_runs, key=lambda r: r.seconds),
        pipeline_seconds=pipeline_seconds,
        pages=sum(1 for _ in site.rglob("*.html")),
        site_bytes=tree_bytes(site),
        entry_page_bytes=int(statistics.median(sizes)),
        entry_page_max=sizes[-1],
        search_bytes=None if search is None else search // entries,
        matcher_bytes=None if matcher is None else matcher // counts["errors"],
    )


def table(rows: list[Row]) -> str:
    head = ["entries", "build s", "peak MiB", "pages/s", "site MiB", "entry page KB", "search B/entry", "matcher B/entry", "plain s", "ours/plain", "pipeline s"]
    lines = [head]
    for r in rows:
        lines.append([
            f"{r.entries:,}",
            f"{r.ours.seconds:.1f}",
            f"{r.ours.peak_mib:.0f}",
            f"{r.pages / r.ours.seconds:.0f}",
            f"{r.site_bytes / 2**20:.1f}",
            f"{r.entry_page_bytes / 1000:.1f}",
            "n/a" if r.search_bytes is None else f"{r.search_bytes:,}",
            "n/a" if r.matcher_bytes is None else f"{r.matcher_bytes:,}",
            f"{r.plain.seconds:.1f}",
            f"{r.ours.seconds / r.plain.seconds:.2f}",
            f"{r.pipeline_seconds:.1f}",
        ])
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    out = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def verdicts(rows: list[Row]) -> list[tuple[bool, str]]:
    out = []
    for r in rows:
        ratio = r.ours.seconds / r.plain.seconds
        out.append((ratio <= TARGETS["overhead"], f"{r.entries:,} entries: overhead over plain Material {100 * (ratio - 1):+.0f}% (target <= +10%)"))
    by_size = {r.entries: r for r in rows}
    small = next((r for r in rows if 900 <= r.entries <= 1100), None)
    large = next((r for r in rows if 9000 <= r.entries <= 11000), None)
    if small and large:
        factor = large.ours.seconds / small.ours.seconds
        out.append((factor <= TARGETS["linear"], f"10k/1k build time x{factor:.1f} (target <= x11)"))
    if large:
        out.append((large.ours.seconds < TARGETS["ten_k_seconds"], f"10k entries built in {large.ours.seconds:.0f} s (target < 120 s)"))
    for r in by_size.values():
        out.append((r.entry_page_max < TARGETS["entry_page_bytes"], f"{r.entries:,} entries: entry page median {r.entry_page_bytes / 1000:.1f} KB, largest {r.entry_page_max / 1000:.1f} KB (target < 40 KB)"))
        if r.search_bytes is not None:
            out.append((r.search_bytes < TARGETS["search_bytes_per_entry"], f"{r.entries:,} entries: search index {r.search_bytes:,} B per entry (target < 1,500 B)"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated entry counts")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    load_before = os.getloadavg()[0]
    rows = []
    for size in sizes:
        repeats = 3 if size <= 100 else 2 if size <= 1000 else 1
        print(f"building {size:,} entries ({repeats} run(s) each, ours and plain)...", file=sys.stderr, flush=True)
        rows.append(measure(size, repeats))
    print(table(rows))
    print(
        "build s: our full build (pipeline, MkDocs, Material, search indexes), best of the runs; plain s: the same pages as\n"
        "Markdown files built by the same Material theme without the hook; pipeline s: load, link and render alone;\n"
        "entry page KB: median HTML of one error page without shared assets; search B/entry: the index a browser\n"
        "downloads to search everything; matcher B/entry: the paste-your-error index per error entry.\n"
        f"{os.cpu_count()} cores; load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."
    )
    print()
    missed = 0
    for ok, text in verdicts(rows):
        print(("ok    " if ok else "MISSED") + "  " + text)
        missed += not ok
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
