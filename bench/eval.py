"""`make eval`: how well the paste matcher and the site search do, on real logs and at scale.

Prints, for the real-log corpus (tests/data/real-logs/, its three splits
apart: train, dev and the held-out part, see tests/test_real_logs.py): the matcher's top-1 and top-3 accuracy and its false positives
on the near-misses; as the baseline, the top-1 accuracy of Material's built-in
search when the same pastes are typed into its box in a real browser; the
query cases of tests/search_cases.yaml on both search engines; and the sizes
a visitor downloads (the matcher index, the first search) on the real site
and on a generated KB of --scale entries (bench/synthetic.py). The numbers
also go to .bench/eval.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT / "hooks")]

import yaml  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, make_kb, mkdocs_build, serve  # noqa: E402
from test_search import RUN_CASES  # noqa: E402
from errorkb.build.linker import link  # noqa: E402
from errorkb.build.loader import load  # noqa: E402
from errorkb.matcher.analyse import Bundle, analyse  # noqa: E402

WORK = ROOT / ".bench"
CORPUS = ROOT / "tests" / "data" / "real-logs"
ENTRY_URL = re.compile(r"/(?:errors|guides)/([a-z0-9-]+)/")
SPLITS = ("train", "dev", "heldout")
FIRST_QUERIES = ["CUDA out of memory", "out of memory", "cudaErrorIllegalAddress", "--mem-fraction-static", "AsyncEngineDeadError"]


def gz(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 9))


def corpus() -> list[dict]:
    return [yaml.safe_load(p.read_text(encoding="utf-8")) | {"name": p.stem} for p in sorted(CORPUS.glob("*.yaml"))]


def pct(hits: int, total: int) -> str:
    return f"{hits}/{total} = {100 * hits / total:.1f}%" if total else "n/a"


ENGINE_REPOS = {"vllm-project/vllm": "vllm", "ggml-org/llama.cpp": "llamacpp", "ggerganov/llama.cpp": "llamacpp", "ollama/ollama": "ollama",
                "sgl-project/sglang": "sglang", "huggingface/text-generation-inference": "tgi", "huggingface/transformers": "transformers",
                "pytorch/pytorch": "pytorch"}
ENGINE_WORDS = [("vllm", "vllm"), ("llama.cpp", "llamacpp"), ("llama-server", "llamacpp"), ("ollama", "ollama"), ("sglang", "sglang"),
                ("tgi", "tgi"), ("text-generation-inference", "tgi"), ("transformers", "transformers"), ("torch", "pytorch")]


def repo_of(log: dict) -> str:
    """owner/repo of a thread (owner/repo#N) or of a file committed to it (owner/repo:path); a web page's own source."""
    return re.split(r"[#:]", log["source"])[0]


def engine_of(log: dict) -> str:
    """The engine a log comes from: its repository when it is an engine's, else what its version line or text names."""
    repo = repo_of(log)
    if repo in ENGINE_REPOS:
        return ENGINE_REPOS[repo]
    text = (str(log.get("engine_version", "")) + " " + log["log"][:4000]).lower()
    return next((engine for word, engine in ENGINE_WORDS if word in text), "other")


def downstream(log: dict) -> bool:
    return repo_of(log) not in ENGINE_REPOS


def _scores(rows: list[tuple[dict, object]]) -> dict:
    real = [(log, r) for log, r in rows if log["expected"]]
    near = [(log, r) for log, r in rows if not log["expected"]]
    def ids(r, n):
        return [m.id for m in r.matches[:n]]
    return {
        "logs": len(real),
        "top1": sum(1 for log, r in real if ids(r, 1) == [log["expected"]]),
        "top3": sum(1 for log, r in real if log["expected"] in ids(r, 3)),
        "useful": sum(1 for log, r in real if log["expected"] in [m.id for m in r.matches] + [x.id for x in r.related]),
        # the first entry the page lists: the best match, or the first "possibly related" when no signature matched
        "first_shown": sum(1 for log, r in real if ([m.id for m in r.matches] or [x.id for x in r.related])[:1] == [log["expected"]]),
        "near_misses": len(near),
        "near_miss_confident": sorted(log["name"] for log, r in near if any(m.confident for m in r.matches)),
        "misses": [f"{log['name']} -> {ids(r, 3)} / related {[x.id for x in r.related[:3]]}" for log, r in real if ids(r, 1) != [log["expected"]]],
    }


def evaluate_matcher(logs: list[dict]) -> dict:
    """Top-1, top-3 and "something useful shown" (the right entry among the matches or the possibly related), per split and engine."""
    bundle = Bundle.from_graph(link(load(ROOT)))
    out: dict = {}
    for split in SPLITS:
        rows = [(log, analyse(log["log"], bundle)) for log in logs if log["split"] == split]
        out[split] = _scores(rows)
        out[split]["by_engine"] = {e: _scores([(l, r) for l, r in rows if engine_of(l) == e]) for e in sorted({engine_of(l) for l, _ in rows})}
        out[split]["downstream"] = _scores([(l, r) for l, r in rows if downstream(l)])
        out[split]["repositories"] = len({repo_of(l) for l, _ in rows})
    return out


def build_sites() -> dict[str, Path]:
    """The real site twice: as published (Pagefind) and with Material's own search, for the baseline."""
    sites = {}
    for engine in ("pagefind", "lunr"):
        kb = make_kb(WORK / f"kb-{engine}", ROOT / "entries")
        if engine == "lunr":
            (kb / "templates" / "overrides" / "partials" / "search.html").unlink(missing_ok=True)
        site = WORK / f"site-{engine}"
        result = mkdocs_build(kb, site, {"KB_SEARCH": engine})
        if result.returncode:
            raise SystemExit(f"the {engine} build failed:\n{result.stderr[-3000:]}")
        sites[engine] = site
    return sites


def material_top(browser, url: str, query: str) -> list[str]:
    """Type a query into Material's own search box on a fresh page; the entry ids of the results, best first.

    A fresh page for each query: Material's worker answers queries in turn, and
    a long paste keeps it busy, so on a reused page a later answer can be stale.
    """
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused: list[str] = []  # Material logs "Invalid query" and shows nothing when lunr cannot parse a query
    page.on("console", lambda message: refused.append(message.text) if "Invalid query" in message.text else None)
    try:
        page.goto(url + "about/")
        page.wait_for_function("/start searching/i.test(document.querySelector('.md-search-result__meta').textContent)")
        box = page.locator(".md-search__input")
        box.fill(query.replace("\n", " ")[:20_000])
        box.press("End")
        deadline = time.monotonic() + 120
        while "matching" not in page.inner_text(".md-search-result__meta"):
            if refused or time.monotonic() > deadline:
                return []
            page.wait_for_timeout(100)
        hrefs = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(a => a.href)")
    finally:
        page.close()
    ids = [m.group(1) for m in (ENTRY_URL.search(h) for h in hrefs) if m]
    return list(dict.fromkeys(ids))


def pagefind_top(page, cases: list[dict]) -> list[list[str]]:
    """The first five results of each case, in the order the header box shows them (tests/test_search.py's script)."""
    return page.evaluate(RUN_CASES, cases)


def first_search(page, url: str, site: Path, query: str) -> dict:
    """What the first search in the header box downloads (Pagefind files, gzip), with the facets shown."""
    seen: set[str] = set()
    page.on("request", lambda r: seen.add(r.url))
    page.goto(url + "about/")
    page.locator(".md-search__input").fill(query)
    page.locator("#kb-search-results li").first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    files = sorted({u.split("/pagefind/", 1)[1].split("?")[0] for u in seen if "/pagefind/" in u})
    return {"query": query, "files": len(files), "gzip_bytes": sum(gz(site / "pagefind" / f) for f in files), "raw_bytes": sum((site / "pagefind" / f).stat().st_size for f in files)}


def sizes(site: Path) -> dict:
    pages = len(list((site / "errors").glob("*/index.html"))) + len(list((site / "guides").glob("*/index.html")))
    matcher = site / "api" / "v1" / "matcher.json"
    out = {"entry_pages": pages, "matcher_json_raw": matcher.stat().st_size, "matcher_json_gzip": gz(matcher)}
    lunr = site / "search" / "search_index.json"
    if lunr.exists():
        out |= {"lunr_raw": lunr.stat().st_size, "lunr_gzip": gz(lunr)}
    pf = site / "pagefind"
    if pf.exists():
        parts = [p for p in pf.rglob("*") if p.is_file() and (p.suffix in {".pf_index", ".pf_fragment", ".pf_filter", ".pf_meta"})]
        out |= {"pagefind_index_raw": sum(p.stat().st_size for p in parts)}
    return out


def run_browser(sites: dict[str, Path], logs: list[dict], cases: list[dict], scaled: Path | None) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with serve(sites["lunr"]) as url:
            started = time.perf_counter()
            baseline = {log["name"]: material_top(browser, url, log["log"]) for log in logs}
            out["material_seconds"] = round(time.perf_counter() - started, 1)
            out["material_pastes"] = baseline
            out["material_cases"] = [material_top(browser, url, c["query"]) if not c.get("filters") else None for c in cases]
        with serve(sites["pagefind"]) as url:
            page = browser.new_page()
            page.goto(url + "about/")
            out["pagefind_cases"] = [[m.group(1) for m in (ENTRY_URL.search(u) for u in urls) if m] for urls in pagefind_top(page, cases)]
            out["first_search_real"] = [first_search(browser.new_page(), url, sites["pagefind"], q) for q in FIRST_QUERIES]
        if scaled:
            with serve(scaled) as url:
                out["first_search_scaled"] = [first_search(browser.new_page(), url, scaled, q) for q in FIRST_QUERIES]
        browser.close()
    return out


def case_score(cases: list[dict], results: list) -> str:
    usable = [(c, r) for c, r in zip(cases, results) if r is not None]
    passed = sum(1 for c, r in usable if c["expect"] in r[: c.get("top", 1)])
    return pct(passed, len(usable))


def report(result: dict, logs: list[dict], cases: list[dict]) -> str:
    lines = ["", "== Paste matcher (tests/data/real-logs): top-1 and top-3 of the signature matches, the first entry the page lists (a match, or the first 'possibly related'), the right entry anywhere on the page, near-misses with a confident match"]
    for split, m in result["matcher"].items():
        lines.append(f"{split} ({m['logs']} logs, {m['near_misses']} near-misses, {m['repositories']} repositories)")
        for name, s in [("all", m), ("downstream apps", m["downstream"])] + sorted(m["by_engine"].items()):
            lines.append(f"  {name:16s} top-1 {pct(s['top1'], s['logs']):18s} top-3 {pct(s['top3'], s['logs']):18s} "
                         f"first shown {pct(s['first_shown'], s['logs']):18s} "
                         f"shown {pct(s['useful'], s['logs']):18s} near-miss confident {pct(len(s['near_miss_confident']), s['near_misses'])}")
        lines += [f"    missed: {miss}" for miss in m["misses"]]
        lines += [f"    near-miss matched: {name}" for name in m["near_miss_confident"]]
    browser = result.get("browser")
    if browser:
        lines.append(f"\n== Baseline: Material's built-in search, the same pastes typed into its box ({browser['material_seconds']} s)")
        for split in SPLITS:
            mine = [log for log in logs if log["split"] == split]
            real = [log for log in mine if log["expected"]]
            top1 = sum(1 for log in real if browser["material_pastes"][log["name"]][:1] == [log["expected"]])
            near = [log for log in mine if not log["expected"]]
            anything = sum(1 for log in near if browser["material_pastes"][log["name"]])
            lines.append(f"{split:8s} top-1 {pct(top1, len(real))}  near-misses with results {pct(anything, len(near))}")
        lines.append("\n== Search cases (tests/search_cases.yaml)")
        lines.append(f"Pagefind {case_score(cases, browser['pagefind_cases'])}   Material (cases without facets) {case_score(cases, browser['material_cases'])}")
    lines.append("\n== Sizes (bytes; gzip is what a visitor downloads)")
    for name, s in result["sizes"].items():
        n = s["entry_pages"]
        line = f"{name}: {n} entry pages; matcher.json {s['matcher_json_raw']} raw, {s['matcher_json_gzip']} gzip ({s['matcher_json_gzip'] / n:.0f} per entry)"
        if "lunr_raw" in s:
            line += f"; Material index {s['lunr_raw']} raw, {s['lunr_gzip']} gzip ({s['lunr_raw'] / n:.0f} raw per entry, so ~{s['lunr_gzip'] / n * 10_000 / 1e6:.1f} MB gzip at 10,000 entries)"
        if "pagefind_index_raw" in s:
            line += f"; Pagefind index on disk {s['pagefind_index_raw']} ({s['pagefind_index_raw'] / n:.0f} per entry)"
        lines.append(line)
    for key in ("first_search_real", "first_search_scaled"):
        for fs in (browser or {}).get(key, []):
            lines.append(f"first Pagefind search ({key.split('_')[-1]}), {fs['query']!r}: {fs['files']} files, {fs['gzip_bytes']} gzip ({fs['raw_bytes']} raw)")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1000, help="error entries in the generated KB for the size measures (0: skip; 10000 takes about half an hour on two cores)")
    parser.add_argument("--no-browser", action="store_true", help="only the matcher numbers and the file sizes")
    parser.add_argument("--scaled-site", type=Path, help="an already built generated site to measure instead of building one")
    args = parser.parse_args()
    WORK.mkdir(exist_ok=True)
    for old in WORK.glob("kb-*"):
        shutil.rmtree(old)
    logs, cases = corpus(), yaml.safe_load((ROOT / "tests" / "search_cases.yaml").read_text(encoding="utf-8"))["cases"]
    result: dict = {"matcher": evaluate_matcher(logs)}
    sites = build_sites()
    result["sizes"] = {"real site": sizes(sites["pagefind"]) | {k: v for k, v in sizes(sites["lunr"]).items() if k.startswith("lunr")}}
    scaled = args.scaled_site
    if scaled is None and args.scale:
        from synthetic import write_kb

        kb = write_kb(ROOT, WORK / "kb-scaled", args.scale)
        scaled = WORK / "site-scaled"
        started = time.perf_counter()
        built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(scaled)],
                               cwd=kb, capture_output=True, text=True, env=os.environ | {"NO_MKDOCS_2_WARNING": "1"})
        if built.returncode:
            raise SystemExit(f"the generated KB did not build:\n{built.stderr[-3000:]}")
        print(f"built {args.scale} entries in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if scaled:
        result["sizes"][f"generated KB ({scaled.name})"] = sizes(scaled)
    if not args.no_browser:
        result["browser"] = run_browser(sites, logs, cases, scaled)
    (WORK / "eval.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    sys.stdout.write(report(result, logs, cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
