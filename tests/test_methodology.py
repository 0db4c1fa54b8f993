"""The Methodology section of the calculator page is written from the facts: the built page and facts.py agree."""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "hooks") not in sys.path:
    sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.calculator import facts  # noqa: E402
from errorkb.calculator.methodology import METHODOLOGY_MARKER, methodology_markdown  # noqa: E402


class Tables(HTMLParser):
    """Every <table> of a page as a list of rows of cell texts, the header row first."""

    def __init__(self):
        super().__init__()
        self.tables, self.row, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[-1].append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table(tables: list, first_header: str) -> list[list[str]]:
    found = [t for t in tables if t and t[0] and t[0][0] == first_header]
    assert len(found) == 1, f"one table headed {first_header!r} expected, found {len(found)}"
    return found[0][1:]


def number(text: str) -> float:
    return float(text.replace(",", "").split()[0])


def test_the_hand_written_page_holds_no_copy():
    text = (ROOT / "site_src" / "will-it-run.md").read_text(encoding="utf-8")
    assert text.count(METHODOLOGY_MARKER) == 1
    for typed in ("## Methodology", "| Format |", "4.15625", "cudaMinimumMemory"):
        assert typed not in text, f"{typed!r} is typed into site_src/will-it-run.md; the build writes it from facts.py"


def test_the_section_follows_the_facts(monkeypatch):
    """Change a fact and the section changes with it: nothing in it is typed."""
    before = methodology_markdown()
    monkeypatch.setitem(facts.QUANTS, "Q4_K_M", {**facts.QUANTS["Q4_K_M"], "bpw": 4.1234})
    monkeypatch.setattr(facts, "LLAMACPP_FIT_MIN_CTX", 2048)
    monkeypatch.setitem(facts.RELEASES, "sglang", {**facts.RELEASES["sglang"], "release": "SGLang 9.9"})
    after = methodology_markdown()
    assert "4.1234" in after and "4.1234" not in before
    assert "| `--fit-ctx` | 2,048 |" in after and "| `--fit-ctx` | 4,096 |" in before
    assert "SGLang 9.9" in after


def test_the_built_page_agrees_with_facts(built_site):
    html = (built_site / "will-it-run" / "index.html").read_text(encoding="utf-8")
    assert METHODOLOGY_MARKER not in html
    parser = Tables()
    parser.feed(html)
    tables = parser.tables

    releases = {row[0]: row[1] for row in table(tables, "Engine")}
    assert releases == {facts.ENGINE_NAMES[e]: facts.RELEASES[e]["release"] for e in facts.ENGINES}

    weights = {row[0]: row for row in table(tables, "Format")}
    assert set(weights) == set(facts.QUANTS)
    for name, q in facts.QUANTS.items():
        row = weights[name]
        assert row[1] == ", ".join(facts.ENGINE_NAMES[e] for e in q["engines"]), name
        assert number(row[2]) == q["bpw"] and number(row[3]) == q["embed_bpw"], name
        assert (number(row[4]) if "attn_bpw" in q else row[4]) == q.get("attn_bpw", "as the body"), name

    kv = {row[0]: row for row in table(tables, "Type")}
    assert set(kv) == set(facts.KV_TYPES)
    for name, (size, block) in facts.KV_TYPES.items():
        assert number(kv[name][1]) == size and (block == 1 or f"per {block} values" in kv[name][1]), name
        for engine, types in facts.KV_BY_ENGINE.items():
            assert (facts.ENGINE_NAMES[engine] in kv[name][2].split(", ")) == (name in types), (name, engine)

    tiers = table(tables, "GPU memory")
    assert [(number(r[1]), number(r[2]), number(r[3])) for r in tiers] == [t[1:] for t in facts.SGLANG_TIERS]

    ollama = table(tables, "GPU memory at least")
    assert [(number(r[0]) * facts.GIB, number(r[1])) for r in ollama] == list(facts.OLLAMA_CTX_TIERS)

    constants = {row[0]: row[1] for t in tables if t and t[0][0] == "Constant" for row in t[1:]}
    assert number(constants["--fit-ctx"]) == facts.LLAMACPP_FIT_MIN_CTX
    assert number(constants["--fit margin (--fit-target)"]) * facts.MIB == facts.LLAMACPP_FIT_MARGIN
    assert number(constants["OLLAMA_NUM_PARALLEL default"]) == facts.OLLAMA_NUM_PARALLEL
    assert number(constants["--gpu-memory-utilization default"]) == facts.VLLM_DEFAULT_UTIL
