"""Snippets for a support reply: every entry and every step of the real KB, in all three forms.

Each snippet is checked against the authored entry, not against the code that
made it: the text holds the whole step (every word the page shows, every
command), no Markdown or HTML is left in it, no label is left empty, lines
wrap at 72 columns except commands and URLs; the Markdown form, parsed back by
a CommonMark parser (markdown-it-py), and the HTML form, parsed by an HTML5
parser (html5lib, strict), say the same words as the text.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from functools import lru_cache
from pathlib import Path

import html5lib
import markdown
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from conftest import FIXTURES, ROOT, run_kb
from errorkb.build import markup, richtext
from errorkb.build.linker import link
from errorkb.build.loader import load
from errorkb.build.pages import snippets_of, summary_of
from errorkb.cli.main import cite
from errorkb.cli.settings import read_settings

NS = "{http://www.w3.org/1999/xhtml}"
COMMONMARK = MarkdownIt("commonmark").enable("table")
HTML_TAGS = {"p", "br", "strong", "em", "code", "pre", "a", "ul", "ol", "li", "table", "tbody", "tr", "th", "td", "blockquote"}  # tbody: the parser adds it


@pytest.fixture(scope="module")
def kb():
    return link(load(ROOT)), read_settings(ROOT)


def cases(kb):
    """(kind, id, step or None, the Markdown the step was written in) for every entry and step."""
    graph, _ = kb
    for entry_id, entry in sorted(graph.errors.items()):
        yield "errors", entry_id, None, ""
        for n, step in enumerate(entry.solution, 1):
            yield "errors", entry_id, n, step.body
    for entry_id, entry in sorted(graph.guides.items()):
        yield "guides", entry_id, None, ""
        for n, cause in enumerate(entry.causes, 1):
            yield "guides", entry_id, n, cause.diagnose + "\n\n" + cause.fix


def visible(fragment: str) -> str:
    """What a reader sees of an HTML fragment, with each link's address after its text (as the text form writes it)."""
    root = html5lib.parseFragment(fragment, namespaceHTMLElements=False)
    out: list[str] = []

    def walk(node):
        out.append(node.text or "")
        number = int(node.get("start") or 1)
        for child in node:
            if node.tag == "ol" and child.tag == "li":  # the text form writes the numbers too
                out.append(f" {number} ")
                number += 1
            walk(child)
            if child.tag == "a" and child.get("href") and "".join(child.itertext()).strip() != child.get("href"):
                out.append(" " + child.get("href") + " ")
            out.append(child.tail or "")

    walk(root)
    return "".join(out)


def letters(text: str) -> str:
    """Only letters and digits: what must survive any change of form (quotes, wrapping, escapes do not count)."""
    return re.sub(r"[\W_]+", "", text.replace("mailto:", "")).lower()


@lru_cache(maxsize=None)
def page_html(markdown_text: str) -> str:
    """The authored Markdown as the site renders it (the same extensions as mkdocs.yml)."""
    return markdown.markdown(markdown_text, extensions=["tables", "pymdownx.superfences"])


@lru_cache(maxsize=None)
def page_tree(markdown_text: str):
    return html5lib.parseFragment(page_html(markdown_text), namespaceHTMLElements=False)


def commands(markdown_text: str) -> list[str]:
    """Every line of every code block, found in the page's rendering."""
    root = page_tree(markdown_text)
    return [line for pre in root.iter("pre") for line in "".join(pre.itertext()).split("\n") if line.strip()]


def code_spans(markdown_text: str) -> list[str]:
    root = page_tree(markdown_text)
    # a span that runs over a line break in the source is one line of code, as CommonMark reads it
    return [" ".join("".join(c.itertext()).split()) for c in root.iter("code") if c not in {p for pre in root.iter("pre") for p in pre}]


def check_text(text: str, url: str, source: str, plain: list[str]) -> None:
    """``plain``: the plain-text fields in the snippet (titles), which may hold any character as they are."""
    lines = text.split("\n")
    assert text.endswith("\n") and lines[-2] == url, "the snippet ends with the permanent link"
    # prose: the text without its commands, code spans and addresses, which are quoted as they are
    prose = " ".join(" ".join(ln for ln in lines if not ln.startswith("    ")).split())
    for quoted in sorted(code_spans(source) + re.findall(r"https?://\S+", text) + plain, key=len, reverse=True):
        prose = prose.replace(quoted, "")
    assert not re.search(r"`|\]\(|\*\*|__|(^|\n)#+ |<[a-zA-Z/][^>]*>|&[a-z]+;", prose), f"Markdown or HTML left in {prose!r}"
    blocks = text.rstrip("\n").split("\n\n")
    for n, block in enumerate(blocks):  # a block that ends with a label is followed by what it announces
        if block.endswith(":") and not block.split("\n")[-1].startswith("    "):
            following = blocks[n + 1].strip() if n + 1 < len(blocks) else ""
            assert following and following != url and not (following.endswith(":") and "\n" not in following), f"empty label {block[-60:]!r}"
    code = commands(source)
    spans = code_spans(source)
    for n, line in enumerate(lines):
        if len(line) > 72 and not line.startswith("    "):
            rest = line
            for unbreakable in sorted(spans + re.findall(r"https?://\S+", line), key=len, reverse=True):
                rest = rest.replace(unbreakable, "")
            assert " " not in rest.strip(" -0123456789.'\"()").strip(), f"line over 72 columns: {line!r}"
        if len(line) > 72 and line.startswith("    "):
            assert any(line.strip() == c.strip() for c in code), f"an indented line that is no command: {line!r}"
    for command in code:
        assert any(ln.startswith("    ") and ln.strip() == command.strip() for ln in lines), f"command missing: {command!r}"


def test_every_entry_and_step_in_every_form(kb):
    graph, settings = kb
    counted = {"entries": 0, "steps": 0}
    for kind, entry_id, step, source in cases(kb):
        entry = graph.loaded.entries[kind][entry_id]
        url = f"{settings.site_url}{kind}/{entry_id}/" + (f"#{'step' if kind == 'errors' else 'cause'}-{step}" if step else "")
        if step is None:
            snips = snippets_of(graph, settings, kind, entry_id)
        snip = snips["entry"] if step is None else snips["steps"][step - 1]
        text, md, htm = snip["text"], snip["markdown"], snip["html"]
        if step in (None, 1):  # what `kb cite` prints is this very snippet (the rest is the same path)
            assert [cite(graph, settings, entry_id, step, f) for f in ("text", "markdown", "html")] == [text, md, htm]
        parts = entry.solution if kind == "errors" else entry.causes
        check_text(text, url, source, [entry.title, summary_of(entry)] + [p.title for p in parts])
        assert letters(entry.title) in letters(text)
        if step is None:
            parts = entry.solution if kind == "errors" else entry.causes
            for n, part in enumerate(parts, 1):
                assert f"\n{n}. " in text and f"#{'step' if kind == 'errors' else 'cause'}-{n}\n" in text
                assert letters(part.title) in letters(text)
            counted["entries"] += 1
        else:
            # the whole step: every word the page shows of it, in order, nothing cut
            assert letters(visible(page_html(source))) in letters(text.replace("Diagnose:", "").replace("Fix:", ""))
            counted["steps"] += 1
        # the Markdown, read back by a CommonMark parser, and the HTML, read by an HTML5 parser, say the same
        assert letters(visible(COMMONMARK.render(md))) == letters(text), (entry_id, step)
        html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parseFragment(htm)  # raises on any parse error
        tags = {el.tag for el in html5lib.parseFragment(htm, namespaceHTMLElements=False).iter() if isinstance(el.tag, str)}
        assert tags - {"DOCUMENT_FRAGMENT"} <= HTML_TAGS, tags
        assert letters(visible(htm)) == letters(text), (entry_id, step)
    print(f"checked {counted['entries']} entries and {counted['steps']} steps in 3 forms")
    assert counted["entries"] == len(graph.errors) + len(graph.guides) and counted["steps"] > 3 * counted["entries"]


def test_markup_writes_links_code_lists_and_tables_for_email():
    source = (
        "Read [the engine arguments](https://docs.vllm.ai/en/stable/configuration/engine_args/) and set "
        "`--gpu-memory-utilization 0.95`, **not** *more*, then watch `nvidia-smi`:\n\n"
        "```bash\nvllm serve m --max-model-len 8192\n```\n\n"
        "- first item with `code`\n- second item\n\n"
        "| Card | Index |\n|---|---|\n| P40 | `cu126` |\n\n"
        "How to tell it worked: a positive `Available KV cache memory`."
    )
    tree = markup.parse(source)
    text = markup.to_text(tree)
    assert "the engine arguments (https://docs.vllm.ai/en/stable/configuration/engine_args/)" in " ".join(text.split())
    assert '"--gpu-memory-utilization 0.95"' in text  # a code span is never split across lines
    assert "\n    vllm serve m --max-model-len 8192\n" in text
    assert "- first item with \"code\"\n- second item" in text
    assert "- P40 | \"cu126\"" in text
    assert "**" not in text and "`" not in text and "|---" not in text
    assert all(len(line) <= 72 for line in text.splitlines() if not line.startswith("    "))
    md = richtext.to_markdown(tree)
    assert letters(visible(COMMONMARK.render(md))) == letters(text)
    assert "<strong>not</strong>" in COMMONMARK.render(md) and "<table>" in COMMONMARK.render(md)
    assert letters(visible(richtext.to_html(tree))) == letters(text)


def test_text_that_looks_like_markup_stays_text():
    source = "Tags like <think> and `<script>`, a literal \\*star\\*, 1. not a list, # not a heading & more."
    tree = markup.parse(source)
    md = richtext.to_markdown(tree)
    rendered = COMMONMARK.render(md)
    assert "<script>" not in rendered and "<em>" not in rendered and "<ol" not in rendered and "<h1" not in rendered
    assert "&lt;script&gt;" in richtext.to_html(tree) and "<think>" not in richtext.to_html(tree)
    assert letters(visible(rendered)) == letters(visible(richtext.to_html(tree)))


def test_a_link_that_is_not_web_or_mail_keeps_only_its_text():
    """`kb check` refuses such links; if one got through, no snippet form carries its address."""
    tree = markup.parse("See [a](javascript:alert(2)), [b](jav&#x61;script:x), [c](data:text/html,x) and [d](https://ok.example/).")
    for form in (markup.to_text(tree), richtext.to_markdown(tree), richtext.to_html(tree)):
        assert "javascript" not in form.lower() and "data:" not in form and "ok.example" in form


def test_cli_prints_each_form(kb):
    graph, settings = kb
    entry_id = "vllm-no-available-kv-cache-blocks"
    for form in ("text", "markdown", "html"):
        result = run_kb("cite", entry_id, "--step", "1", "--format", form)
        assert result.returncode == 0, result.stderr
        assert result.stdout == cite(graph, settings, entry_id, 1, form)
    assert run_kb("cite", entry_id, "--format", "rtf").returncode == 2


def test_cite_outside_the_real_kb(tmp_path):
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "valid", root)
    result = run_kb("--root", str(root), "cite", "vllm-oom-checklist", "--step", "1", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "**Diagnose**" in result.stdout and "**Fix**" in result.stdout
    assert result.stdout.rstrip().endswith("<https://errorkb.org/guides/vllm-oom-checklist/#cause-1>")
    assert Path(root / "entries").is_dir()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab-_.\ue000é/"), min_size=1, max_size=30), max_size=40), st.integers(min_value=20, max_value=90))
def test_filling_words_wraps_as_the_standard_library_does(words, width):
    assert markup.fill_words(words, width) == textwrap.wrap(" ".join(words), width=width, break_long_words=False, break_on_hyphens=False)
