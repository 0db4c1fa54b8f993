"""Calculator methodology: the Methodology section of the "Will it run?" page, written from the facts.

Input: errorkb.calculator.facts (nothing typed twice). Output: Markdown that the
pipeline puts in place of the page's ``METHODOLOGY_MARKER``; tests compare the
built page with facts.export(), so the page cannot drift from the numbers the
calculator uses.
"""

from __future__ import annotations

from errorkb.build.render import render
from errorkb.calculator import facts

METHODOLOGY_MARKER = "<!-- kb:methodology -->"


def weight_rows() -> list[dict]:
    rows = []
    for name, q in facts.QUANTS.items():
        rows.append({"name": name, "engines": ", ".join(facts.ENGINE_NAMES[e] for e in q["engines"]), "bpw": q["bpw"],
                     "embed_bpw": q["embed_bpw"], "attn_bpw": q.get("attn_bpw")})
    return rows


def kv_rows() -> list[dict]:
    rows = []
    for name, (size, block) in facts.KV_TYPES.items():
        engines = [facts.ENGINE_NAMES[e] for e, types in facts.KV_BY_ENGINE.items() if name in types]
        rows.append({"name": name, "bytes": f"{size}" if block == 1 else f"{size} per {block} values",
                     "per_value": size / block, "engines": ", ".join(engines) or "none",
                     "ollama": facts.OLLAMA_KV_BPE.get(name)})
    return rows


def sglang_rows() -> list[dict]:
    rows, low = [], 0
    for bound, chunk, small, large in facts.SGLANG_TIERS:
        rows.append({"range": f"{low:,} MiB and more" if bound is None else f"{low:,} to {bound - 1:,} MiB",
                     "chunk": chunk, "bs_small": small, "bs_large": large})
        low = bound or low
    return rows


def ollama_rows() -> list[dict]:
    return [{"at_least": at_least // facts.GIB, "num_ctx": ctx} for at_least, ctx in facts.OLLAMA_CTX_TIERS]


def methodology_markdown() -> str:
    releases = [{"engine": facts.ENGINE_NAMES[e], **facts.RELEASES[e]} for e in facts.ENGINES]
    return render("calculator-methodology.md.j2", f=facts, releases=releases, weights=weight_rows(), kv=kv_rows(),
                  sglang_tiers=sglang_rows(), ollama_tiers=ollama_rows(),
                  mib=lambda n: f"{n / facts.MIB:,.0f} MiB", num=lambda n: f"{n:,}" if isinstance(n, int) else f"{n:g}")


def fill(markdown: str) -> str:
    """The page's Markdown with the generated section in place of the marker (unchanged without one)."""
    return markdown.replace(METHODOLOGY_MARKER, methodology_markdown()) if METHODOLOGY_MARKER in markdown else markdown
