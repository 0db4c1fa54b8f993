"""Rendering: golden pages for the fixture KB, links both ways, redirects, and hostile HTML."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from conftest import FIXTURES, ROOT
from errorkb.build import pipeline
from errorkb.build.pages import Settings, summary_of
from errorkb.build.safety import check_markdown, clean_html

GOLDEN = ROOT / "tests" / "golden"
SETTINGS = Settings(site_url="https://errorkb.org/", today=dt.date(2026, 11, 21))


@pytest.fixture(scope="module")
def site():
    built = pipeline.build(FIXTURES / "valid", SETTINGS)
    assert built.problems == []
    return built


def page(site, uri):
    return next(p.markdown for p in site.pages if p.src_uri == uri)


@pytest.mark.parametrize("uri", ["errors/vllm-no-available-kv-cache-blocks.md", "guides/vllm-oom-checklist.md"])
def test_golden_pages(site, uri, update_golden):
    golden = GOLDEN / uri.replace("/", "__")
    text = page(site, uri)
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"{golden} is missing: run pytest --update-golden and review the diff"
    assert text == golden.read_text(encoding="utf-8"), "rendered page differs from the golden file (pytest --update-golden to accept)"


def test_related_links_are_added_in_both_directions(site):
    # vllm-no-available-kv-cache-blocks lists cuda-oom-loading-model; the reverse link is derived
    back = page(site, "errors/cuda-oom-loading-model.md")
    assert "](vllm-no-available-kv-cache-blocks.md)" in back
    # the guide names the error in a cause; the error page links back to the guide
    err = page(site, "errors/vllm-no-available-kv-cache-blocks.md")
    assert "](../guides/vllm-oom-checklist.md)" in err


def test_every_step_has_its_own_anchor(site):
    err = page(site, "errors/vllm-no-available-kv-cache-blocks.md")
    assert re.findall(r"\{ #(step-\d+) ", err) == ["step-1", "step-2"]


def test_stale_notice_only_past_the_window(site):
    old = page(site, "errors/cuda-oom-loading-model.md")  # verified 2024-01-15
    fresh = page(site, "errors/vllm-no-available-kv-cache-blocks.md")  # verified 2026-11-01
    assert "May be out of date" in old
    assert "May be out of date" not in fresh


def test_alias_becomes_a_redirect_page(site):
    files = {f.dest_uri: f.content.decode() for f in site.files}
    redirect = files["errors/vllm-kv-blocks/index.html"]
    assert 'rel="canonical" href="https://errorkb.org/errors/vllm-no-available-kv-cache-blocks/"' in redirect
    assert 'http-equiv="refresh" content="0; url=../../errors/vllm-no-available-kv-cache-blocks/"' in redirect
    assert "location.hash" in redirect  # keeps #step-2 when JavaScript runs


def test_category_and_tool_indexes(site):
    oom = page(site, "categories/out-of-memory.md")
    assert oom.index("CUDA out of memory while loading") < oom.index("vLLM: No available memory")
    assert "](../errors/cuda-oom-loading-model.md)" in page(site, "tools/pytorch.md")
    home = page(site, "errors/index.md")
    assert "[Out of memory](../categories/out-of-memory.md) (2)" in home


def test_summary_falls_back_to_first_sentence_of_cause(site):
    entry = site.graph.errors["cuda-oom-loading-model"]
    assert summary_of(entry) == "The weights alone are larger than the free memory of the GPU."


def test_plain_text_fields_are_escaped_not_interpreted(tmp_path):
    from errorkb.build.render import text

    assert text("<script>alert(1)</script>") == "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"
    assert text("a & b. 1-2") == "a &amp; b\\. 1\\-2"
    assert text("[x](javascript:y)") == "\\[x\\]\\(javascript:y\\)"


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(1)></svg>",
    '<iframe src="https://evil.example/"></iframe>',
    '<a href="javascript:alert(1)">x</a>',
    '<a href="jav&#x61;script:alert(1)">x</a>',
    '<a href="data:text/html,hi">x</a>',
    '<p style="background:url(javascript:alert(1))" onclick="alert(1)">x</p>',
    '<form action="https://evil.example"><input name=q></form>',
    "<object data=x></object><embed src=x>",
]


@pytest.mark.parametrize("html", HOSTILE)
def test_clean_html_removes_script_and_handlers(html):
    cleaned = clean_html(html).lower()
    for bad in ("<script", "onerror", "onload", "onclick", "javascript:", "data:", "<iframe", "<svg", "<form", "<input", "<object", "<embed", "style="):
        assert bad not in cleaned, (html, cleaned)


def test_clean_html_keeps_what_pages_need():
    html = '<h3 id="step-1" class="kb-step">Step 1<a class="headerlink" href="#step-1" title="Link">¶</a></h3><time datetime="2026-11-21">x</time><div class="highlight"><pre><span></span><code>vllm serve</code></pre></div>'
    assert clean_html(html) == html


@pytest.mark.parametrize("markdown_text", ["Use `<script>` tags in a code span.", "```html\n<script>fine in a fence</script>\n```", "See <https://docs.vllm.ai/>."])
def test_html_inside_code_and_autolinks_is_allowed(markdown_text):
    assert check_markdown(markdown_text) == []


def test_a_step_written_for_some_releases_says_which(tmp_path):
    import shutil

    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    path = root / "entries" / "errors" / "vllm-no-available-kv-cache-blocks.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  - title: Shorten the maximum context\n", '  - title: Shorten the maximum context\n    applies_to: {vllm: "<0.11"}\n', 1), encoding="utf-8")
    built = pipeline.build(root, SETTINGS)
    assert built.problems == []
    err = page(built, "errors/vllm-no-available-kv-cache-blocks.md")
    step2 = err.split("{ #step-2 .kb-step }", 1)[1].split("{ #step-3", 1)[0]
    assert "Only for vLLM `<0.11`\n{: .kb-step-applies }" in step2
    assert ".kb-step-applies" not in err.split("{ #step-2 .kb-step }", 1)[0]  # the other steps hold for every release
    path.write_text(text.replace("  - title: Shorten the maximum context\n", '  - title: Shorten the maximum context\n    applies_to: {vlm: "<0.11"}\n', 1), encoding="utf-8")
    problems = [(p.code, p.line, p.field, p.message) for p in pipeline.build(root, SETTINGS).problems]
    assert problems == [("KB013", 34, "solution[1].applies_to.vlm", "'vlm' is not in entries/tools.yaml")]


def test_search_parts_name_the_last_parts_of_dotted_names_once():
    from errorkb.build.render import search_parts

    parts = search_parts([
        "torch.OutOfMemoryError: CUDA out of memory",
        "java.lang.UnsatisfiedLinkError: dlopen failed: libcudart.so.12 and c10::Error; torch 2.6 also raises torch.OutOfMemoryError",
        "See https://docs.nvidia.com/cuda/index.html or /usr/lib/libfoo.so.1",
    ]).split()
    # The last part of each name, once; a part that is already a word of its own (torch), a short one (so, 12)
    # and the parts of URLs and paths are left out.
    assert parts == ["OutOfMemoryError", "java", "lang", "UnsatisfiedLinkError", "libcudart", "Error"]
    # Entry text is untrusted: whatever surrounds a dotted name, only word characters come out.
    hostile = search_parts(['torch.Evil"><img src=x onerror=alert(1)>.Next', "a.<script>alert('x')</script>.Tail", "x.y' onmouseover='z"])
    assert re.fullmatch(r"[\w -]*", hostile) and "Evil" in hostile.split(), hostile


def test_an_entry_page_carries_its_search_parts_out_of_sight(site):
    text = page(site, "errors/cuda-oom-loading-model.md")  # its message is torch.OutOfMemoryError: ...
    line = next(l for l in text.splitlines() if "kb-search-parts" in l)
    assert line.startswith('<p class="kb-search-parts" aria-hidden="true">') and "OutOfMemoryError" in line
    # a page without dotted names carries no empty element
    assert "kb-search-parts" not in page(site, "errors/vllm-no-available-kv-cache-blocks.md")
    css = (ROOT / "site_src" / "stylesheets" / "kb.css").read_text(encoding="utf-8")
    assert re.search(r"\.kb-search-parts\s*\{\s*display:\s*none", css)
