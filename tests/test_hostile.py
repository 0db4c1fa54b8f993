"""A hostile KB that `kb check` lets through: script in every plain-text field, and nothing of it runs.

The valid fixture KB is rewritten so that every plain-text field (titles,
summaries, category, tool, platform and author names, step titles, source
titles, FAQ questions, the literal error text) carries markup, attribute
break-outs, template syntax, XML break-outs, emoji and entities. Such text is
legitimate (an entry may be about `<think>` tags), so the check passes; the
build must then print it as text in every context: HTML body, attributes,
<title>, the navigation, feeds, JSON, the search index, the terminal.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, mkdocs_build, run_kb, serve

SCRIPT = '<script>alert("kb-xss-1")</script>'
ATTR = '"><img src=x onerror=alert("kb-xss-2")>'
QUOTE = "' onmouseover='alert(\"kb-xss-3\")' x='"
XML = "]]></title><script>alert('kb-xss-4')</script>"
TEMPLATE = "{{ config }} {% raw %} \\ ` * _ [x](javascript:alert(5))"
UNICODE = "Emoji 😀 👩‍💻 & ünïcödé — &amp; &lt;b&gt;"


def _dump(path: Path, data) -> None:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")


def make_hostile_kb(dest: Path) -> Path:
    shutil.copytree(FIXTURES / "valid", dest)
    for name in ("mkdocs.yml", "site_src", "templates"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    (dest / "hooks").symlink_to(ROOT / "hooks")
    entries = dest / "entries"
    for taxonomy, value in (("categories", SCRIPT + " " + QUOTE), ("tools", ATTR), ("platforms", XML), ("authors", UNICODE)):
        data = yaml.safe_load((entries / f"{taxonomy}.yaml").read_text())
        for term in data.values():
            term["name"] = value
            if "description" in term:
                term["description"] = TEMPLATE + " " + UNICODE
        _dump(entries / f"{taxonomy}.yaml", data)
    for path in sorted((entries / "errors").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        data["title"] = f"{UNICODE} {SCRIPT} {ATTR}"[:200]
        data["summary"] = f"{QUOTE} {XML}"
        data["error"] = data["error"] + "\n</code></pre><script>alert('kb-xss-6')</script>"
        data["solution"][0]["title"] = TEMPLATE
        data["sources"][0]["title"] = XML
        _dump(path, data)
    for kind, name in (("models", "llama-3.1-8b"), ("gpus", "rtx-4090")):  # the calculator's pages and JSON
        (entries / kind).mkdir(exist_ok=True)
        data = yaml.safe_load((ROOT / "entries" / kind / f"{name}.yaml").read_text(encoding="utf-8"))
        data["title"] = f"{SCRIPT} {ATTR} {UNICODE}"[:120]
        if kind == "gpus":
            data["architecture"] = XML[:60]
        data["sources"][0]["title"] = QUOTE
        _dump(entries / kind / f"{name}.yaml", data)
    for path in sorted((entries / "guides").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        data["title"] = f"{ATTR} {UNICODE}"
        data["summary"] = f"{SCRIPT} {QUOTE}"
        data["causes"][0]["title"] = XML
        for faq in data.get("faq", []):
            faq["question"] = SCRIPT
        _dump(path, data)
    return dest


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.in_script = False
        self.in_jsonld = False
        self.titles: list[str] = []
        self._title = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if value and name in {"href", "src", "action"} and re.sub(r"\s", "", value).lower().startswith("javascript:"):
                self.problems.append(f"<{tag} {name}={value[:40]!r}>")
        if tag == "img" and dict(attrs).get("src") == "x":
            self.problems.append("<img src=x>")
        self.in_script = tag == "script"
        self.in_jsonld = tag == "script" and dict(attrs).get("type") == "application/ld+json"
        self._title = tag == "title"

    def handle_endtag(self, tag):
        self.in_script = False
        self.in_jsonld = False
        self._title = False

    def handle_data(self, data):
        if self.in_jsonld:  # data, not code: JSON with nothing that could end the element or start markup
            json.loads(data)
            if re.search(r"[<>&\u2028\u2029]", data):
                self.problems.append(f"JSON-LD with a raw character: {data[:60]!r}")
        elif self.in_script and "kb-xss" in data:
            self.problems.append(f"script: {data[:60]!r}")
        if self._title:
            self.titles.append(data)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    kb = make_hostile_kb(tmp_path_factory.mktemp("hostile") / "kb")
    check = run_kb("--root", str(kb), "check")
    assert check.returncode == 0, check.stdout + check.stderr  # all of it is legitimate text
    site = kb.parent / "site"
    result = mkdocs_build(kb, site)
    assert result.returncode == 0, result.stderr
    return kb, site


def test_no_output_file_carries_anything_executable(hostile):
    _, site = hostile
    checked = 0
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            parser = _Tags()
            parser.feed(path.read_text(encoding="utf-8"))
            assert parser.problems == [], f"{path.relative_to(site)}: {parser.problems[:3]}"
            checked += 1
        elif path.suffix == ".xml":
            ET.fromstring(path.read_bytes())  # well-formed, whatever the titles hold
            assert b"<script" not in path.read_bytes()
        elif path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
    assert checked > 20


def test_plain_text_reads_as_itself_in_title_and_body(hostile):
    _, site = hostile
    page = (site / "errors" / "cuda-oom-loading-model" / "index.html").read_text(encoding="utf-8")
    parser = _Tags()
    parser.feed(page)
    assert parser.titles and "😀" in parser.titles[0] and SCRIPT in parser.titles[0]
    assert "&lt;script&gt;alert(&#34;kb-xss-1&#34;)&lt;/script&gt;" in page or "&lt;script&gt;alert(&quot;kb-xss-1&quot;)&lt;/script&gt;" in page
    assert "\\&lt;" not in page and "\\<" not in page  # no stray Markdown escapes shown
    assert 'content="' in page and "og:title" in page


def test_structured_data_reads_the_hostile_text_back_exactly(hostile):
    """extruct finds the JSON-LD, and every hostile title comes back character for character."""
    import extruct

    kb, site = hostile
    for kind, entry_id in (("errors", "cuda-oom-loading-model"), ("guides", "vllm-oom-checklist")):
        entry = yaml.safe_load((kb / "entries" / kind / f"{entry_id}.yaml").read_text())
        page = (site / kind / entry_id / "index.html").read_text(encoding="utf-8")
        found = extruct.extract(page, base_url=f"https://errorkb.org/{kind}/{entry_id}/", syntaxes=["json-ld"], uniform=False)["json-ld"]
        assert len(found) == 1
        nodes = {node["@type"]: node for node in found[0]["@graph"]}
        assert nodes["TechArticle"]["headline"] == entry["title"]
        assert nodes["BreadcrumbList"]["itemListElement"][-1]["name"] == entry["title"]
        if kind == "errors":
            assert nodes["HowTo"]["step"][0]["name"] == entry["solution"][0]["title"]
            assert nodes["TechArticle"]["about"]["description"] == entry["error"].strip()
        else:
            assert [q["name"] for q in nodes["FAQPage"]["mainEntity"]] == [f["question"] for f in entry["faq"]]


def test_script_text_is_escaped_for_the_element():
    """The theme's own environment and the expression of main.html: no <, >, & or line separator survives."""
    from mkdocs.config import load_config

    env = load_config(str(ROOT / "mkdocs.yml")).theme.get_env()
    env.autoescape = True  # as the hook sets it
    hostile = {"name": "</script><script>alert(1)</script> <!-- & \u2028\u2029 ' 😀"}
    out = env.from_string("{{ page.meta.kb_jsonld | tojson }}").render(page={"meta": {"kb_jsonld": hostile}})
    assert not re.search(r"[<>&\u2028\u2029']", out)
    assert json.loads(out) == hostile


def test_terminal_output_has_no_control_characters(hostile):
    kb, _ = hostile
    for args in (("cite", "cuda-oom-loading-model"), ("cite", "cuda-oom-loading-model", "--step", "1"), ("stale", "--days", "0")):
        result = run_kb("--root", str(kb), *args)
        assert result.returncode == 0, result.stderr
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", result.stdout), args


def test_a_visitor_sees_no_dialog(hostile, page):
    _, site = hostile
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    with serve(site) as url:
        for path in ("errors/", "errors/cuda-oom-loading-model/", "guides/vllm-oom-checklist/", "categories/out-of-memory/", "",
                     "models/llama-3.1-8b/", "gpus/rtx-4090/", "will-it-run/?model=llama-3.1-8b&gpu=rtx-4090"):
            page.goto(url + path)
            page.wait_for_load_state("load")
            page.mouse.move(200, 200)
        page.goto(url + "errors/")
        page.fill("#kb-paste-input", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB")
        page.wait_for_selector(".kb-paste__result", timeout=10_000)
        assert "😀" in page.inner_text(".kb-paste__results")
        page.goto(url + "?q=kb-xss")  # the Pagefind index holds the hostile titles: results are text too
        page.locator("#kb-search-results li a").first.wait_for(timeout=15_000)
        assert "<script>" in page.inner_text("#kb-search-results")
        page.mouse.move(300, 300)
    assert dialogs == []
