"""Time-boxed fuzzing of what reads untrusted input: the loader, the Markdown guard and the matcher.

    python tests/fuzz.py [--seconds 120] [--only loader,markdown,matcher]

Each target is a Hypothesis property run over fresh random examples, again
and again, until its share of the time is spent. A failure prints the
smallest input Hypothesis could shrink it to and exits 1. Not collected by
pytest (the name does not start with test_): `make fuzz` runs it.

Targets and what must hold for every input:

yaml      read_yaml never raises; every Problem has a live code and a line
          inside the file. Inputs: real entries mutated byte by byte with
          the tokens that break YAML parsers (tags, anchors, tabs, BOMs,
          NULs, deep brackets, stray quotes).
loader    load() + link() of a KB with one mutated entry never raise; a
          file is either an entry or the cause of Problems, never both,
          never neither. Inputs: real entries with fields replaced by
          values of any type.
markdown  text that check_markdown lets through renders (with the site's
          own Markdown extensions) to HTML with no script, no event
          handler and no javascript: URL; and clean_html never lets one
          through whatever it is given.
matcher   match() never raises, returns entries best first, and takes
          under two seconds on a pasted log of up to 100 KB.
signature a pattern the signature language accepts compiles in RE2, holds
          the literal text it promises (its prefilter never hides a match
          RE2 finds), matches no blank log, and runs on a 200 KB log in
          under a second; check() never raises, whatever the pattern.
plaintext a title made of any characters is either refused with KB024 or
          renders, in the page template and the front matter, to text that
          reads back as itself with no tag and no control character.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import sys
import tempfile
import time
import traceback
from html.parser import HTMLParser
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))

from errorkb.build import safety  # noqa: E402
from errorkb.build.linker import link  # noqa: E402
from errorkb.build.loader import load  # noqa: E402
from errorkb.build.problems import CODES  # noqa: E402
from errorkb.build.yamlfile import read_yaml  # noqa: E402

VALID_KB = ROOT / "tests" / "fixtures" / "valid"
SEEDS = sorted((ROOT / "entries" / "errors").glob("*.yaml"))[:6] + sorted((ROOT / "entries" / "guides").glob("*.yaml"))[:2]
SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck), max_examples=60)

YAML_TOKENS = [
    ": ", "- ", "? ", "&a ", "*a", "!!python/object:os.system ", "!x ", "\t", "\x00", "\ufeff", "\xff", "{", "}", "[", "]",
    "'", '"', "|", ">-", "#", "\n", "\n  ", "    ", "---\n", "...\n", "%YAML 1.1\n", "<<: *a\n", "[" * 40, "- " * 30,
    "\r", "\u2028", "0x", "1e999", "2099-01-01", "~", "null", "yes", "\\", "\\x00", "\u00e9", "\ud7ff",
]
HOSTILE_MARKDOWN = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[a](javascript:alert(1))", "[a](JaVaScRiPt:alert(1))",
    "[a](&#106;avascript:alert(1))", "[a](java\tscript:alert(1))", "[a]: javascript:alert(1)\n", "[b][a]", "<javascript:alert(1)>",
    "{ onclick=alert(1) }", "{: onmouseover=alert(1) }", "![i](data:text/html,<script>alert(1)</script>)", "<svg onload=alert(1)>",
    "<!-- x -->", "<iframe src=x>", "[a](vbscript:x)", "```{ .x onclick=y }\ncode\n```", "`code`", "**bold**", "\n\n", "> quote",
    "    indented", "- item", "1. item", "| a | b |\n|:--|--:|\n| 1 | 2 |", "<https://example.org>", "[ok](https://example.org)",
    "&lt;script&gt;", "\\<script>", "<scr<script>ipt>", "javascript:", "on", "=", "\"", "'", "(", ")", "<", ">", "&", "#",
]


def mutate(base: str, edits: list[tuple[int, int, str]]) -> bytes:
    text = base
    for position, cut, token in edits:
        at = position % (len(text) + 1)
        text = text[:at] + token + text[at + cut % 8:]
    return text.encode("utf-8", errors="surrogatepass")


def check_problems(problems, newlines: int) -> None:
    """Live codes, and lines inside the file (or just past its end, where a parser reports an unexpected end)."""
    for p in problems:
        assert p.code in CODES and not CODES[p.code].retired, p
        assert 1 <= p.line <= newlines + 2, p


# --- yaml: the first reader of every file ---

@st.composite
def mutated_files(draw) -> bytes:
    base = SEEDS[draw(st.integers(0, len(SEEDS) - 1))].read_text(encoding="utf-8")
    edits = draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7), st.sampled_from(YAML_TOKENS) | st.text(max_size=6)), max_size=12))
    return mutate(base, edits)


@settings(**SETTINGS)
@given(raw=mutated_files() | st.binary(max_size=400))
def fuzz_yaml(raw: bytes) -> None:
    doc = read_yaml(raw, "entries/errors/fuzz.yaml")
    check_problems(doc.problems, raw.count(b"\n"))
    assert (doc.problems and doc.data is None) or (not doc.problems and isinstance(doc.data, dict)), doc


# --- loader: validation, content checks and linking of a whole KB ---

ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40) | st.dates() | st.sampled_from(HOSTILE_MARKDOWN),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_entries(draw) -> tuple[str, dict]:
    seed = SEEDS[draw(st.integers(0, len(SEEDS) - 1))]
    data = yaml.safe_load(seed.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(sorted(data) + ["unknown_field"]))
        if draw(st.booleans()):
            data[key] = draw(ANY_VALUE)
        else:
            data.pop(key, None)
    return seed.parent.name, data


@settings(**SETTINGS)
@given(case=mutated_entries())
def fuzz_loader(case) -> None:
    kind, data = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        shutil.copytree(VALID_KB, root)
        target = root / "entries" / kind / "fuzz-case.yaml"
        try:
            text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
        except yaml.YAMLError:
            return
        target.write_text(text, encoding="utf-8")
        loaded = load(root)
        graph = link(loaded)
        mine = [p for p in loaded.problems + graph.problems if p.file.endswith("fuzz-case.yaml")]
        check_problems(mine, text.count("\n"))
        is_entry = "fuzz-case" in loaded.entries[kind]
        has_load_problem = any(p in loaded.problems for p in mine)
        assert is_entry != has_load_problem, (is_entry, mine)


# --- markdown: what an entry's text may become in a visitor's browser ---

class _Lenient(yaml.SafeLoader):
    pass


_Lenient.add_multi_constructor("", lambda loader, suffix, node: None)


def _extensions() -> tuple[list[str], dict]:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Lenient)
    names, options = [], {}
    for item in config.get("markdown_extensions", []):
        name, opts = next(iter(item.items())) if isinstance(item, dict) else (item, None)
        names.append(name)
        if opts:
            options[name] = opts
    return names, options


EXTENSIONS = _extensions()


def site_markdown(text: str) -> str:
    """Render with the Markdown extensions of mkdocs.yml, as the build does."""
    import markdown

    return markdown.markdown(text, extensions=EXTENSIONS[0], extension_configs=EXTENSIONS[1])


def browser_scheme(url: str) -> str | None:
    """The scheme a browser takes from an attribute value: tabs and newlines anywhere are dropped, spaces are not."""
    url = re.sub(r"[\t\n\r]", "", url).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.\-]*):", url)
    return match.group(1).lower() if match else None


class _Dangerous(HTMLParser):
    """Whatever in a piece of HTML could run script: tags, event handlers, URL schemes."""

    TAGS = {"script", "iframe", "object", "embed", "svg", "math", "style", "link", "meta", "base", "form", "frame"}
    URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "poster", "srcset", "data"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    @staticmethod
    def _alignment(tag: str, value: str | None) -> bool:
        """The one style the Markdown tables extension writes itself: a column's alignment, nothing an author controls."""
        return tag in {"th", "td"} and re.fullmatch(r"text-align: (?:left|right|center);", value or "") is not None

    def handle_starttag(self, tag, attrs):
        if tag in self.TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or (name == "style" and not self._alignment(tag, value)):
                self.found.append(f"{tag} {name}=")
            if name in self.URL_ATTRS and value and (browser_scheme(value) or "https") not in safety.ALLOWED_SCHEMES:
                self.found.append(f"{tag} {name}={value[:40]!r}")


def dangerous(html: str) -> list[str]:
    parser = _Dangerous()
    parser.feed(html)
    parser.close()
    return parser.found


@settings(**SETTINGS)
@given(parts=st.lists(st.sampled_from(HOSTILE_MARKDOWN) | st.text(max_size=8), min_size=1, max_size=10))
def fuzz_markdown(parts: list[str]) -> None:
    text = "".join(parts)
    rendered = site_markdown(text)
    cleaned = safety.clean_html(rendered)
    assert not dangerous(cleaned), (dangerous(cleaned), cleaned)
    if not safety.check_markdown(text):  # what `kb check` accepts must be harmless before the last guard too
        assert not dangerous(rendered), (dangerous(rendered), rendered)


# --- matcher: every pasted log, however strange ---
# The matcher's public call is errorkb.matcher.match(text, index). If it is
# renamed, update `_matcher()` below; the target then fails loudly rather
# than passing without running.

def _matcher():
    from errorkb.matcher import score as matcher

    loaded = load(ROOT)
    index = matcher.compile_index(matcher.matcher_index(link(loaded)))
    errors = [e.error for e in loaded.entries["errors"].values()]
    return matcher.match, index, errors


MATCHER: list = []


@st.composite
def pasted_logs(draw) -> str:
    match, index, errors = MATCHER[0]
    pieces = draw(st.lists(
        st.sampled_from(errors) | st.text(max_size=80) | st.sampled_from(["\n", "\r\n", "\t", " " * 200, "\x1b[31m", "&lt;", "\\n", "0x7f3a2b1c", "/usr/lib/python3/site-packages/x/y.py"]),
        max_size=30,
    ))
    repeat = draw(st.integers(1, 400))
    return "".join(pieces) * (repeat if len("".join(pieces)) * repeat < 100_000 else 1)


@settings(**SETTINGS)
@given(log=pasted_logs())
def fuzz_matcher(log: str) -> None:
    match, index, _ = MATCHER[0]
    start = time.perf_counter()
    found = match(log, index)
    took = time.perf_counter() - start
    assert took < 2.0, f"{took:.2f} s for a {len(log):,}-character log"
    scores = [m.score for m in found]
    assert scores == sorted(scores, reverse=True), scores


REGEX_PARTS = [
    "cuda", " out of memory", "error", "\\d+", "\\w{0,20}", "[^\\n]{0,120}", ".{0,80}", "(?:a|b)", "|", "(", ")", "?", "*", "+",
    "{2,5}", "{0,1001}", "\\", "\\b", "\\s", "\\p{L}", "(?=x)", "(?i)", "(?P<n>x)", "\\1", "[a-z]", "[^x]+", ".*", "(?:x+)+",
    "nccl warn", "killed", "\\.", "\\x41", "\\Q", "[[:alpha:]]", "(?#c)", "^", "$", "tried to allocate",
]


@settings(**SETTINGS)
@given(parts=st.lists(st.sampled_from(REGEX_PARTS) | st.text(max_size=6), min_size=1, max_size=12),
       log=st.text(max_size=200))
def fuzz_signature(parts: list[str], log: str) -> None:
    from errorkb.matcher import language
    from errorkb.matcher.score import ascii_lower

    pattern = "".join(parts)
    if language.check(pattern) is not None:
        return
    compiled = language.compile(pattern)
    factors = language.factors(pattern)
    assert factors and min(map(len, factors)) >= language.MIN_FACTOR, (pattern, factors)
    assert compiled.search("") is None and compiled.search(" ") is None, pattern
    for text in (log, log + " " + "".join(p for p in parts if p.isalpha())):
        if compiled.search(text):
            assert any(f in ascii_lower(text) for f in factors), (pattern, factors, text)
    big = (log or "x") * (200_000 // max(1, len(log)))
    start = time.perf_counter()
    compiled.search(big)
    assert time.perf_counter() - start < 1.0, pattern


@settings(**SETTINGS)
@given(title=st.text(min_size=3, max_size=200))
def fuzz_plaintext(title: str) -> None:
    from errorkb.build.render import environment, text
    from errorkb.build.text import forbidden

    if "\n" in title or title.strip() != title or len(title.strip()) < 3 or forbidden(title):
        return  # refused by the schema (one line) or by KB024
    front = environment().from_string("title: {{ value | tojson }}").render(value=title)
    assert yaml.safe_load(front)["title"] == title, front
    html = site_markdown("# " + text(title))
    assert "<script" not in html.lower() and not re.search(r"<(?!/?h1\b)[a-z]", html.replace('<a class="headerlink"', "")), html
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", html)


TARGETS = {"yaml": fuzz_yaml, "loader": fuzz_loader, "markdown": fuzz_markdown, "matcher": fuzz_matcher,
           "signature": fuzz_signature, "plaintext": fuzz_plaintext}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120, help="total time budget, shared by the targets")
    parser.add_argument("--only", default=",".join(TARGETS), help="comma-separated targets")
    args = parser.parse_args(argv)
    chosen = [t for t in args.only.split(",") if t]
    unknown = set(chosen) - set(TARGETS)
    if unknown:
        parser.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    if "matcher" in chosen:
        MATCHER.append(_matcher())
    share = args.seconds / len(chosen)
    print(f"fuzzing {', '.join(chosen)} for {share:.0f} s each (today is {dt.date.today()})", flush=True)
    failed = []
    for name in chosen:
        target, rounds, deadline = TARGETS[name], 0, time.monotonic() + share
        while time.monotonic() < deadline:
            try:
                target()
            except Exception:
                traceback.print_exc()
                print(f"{name}: FAILED after about {rounds * SETTINGS['max_examples']:,} examples; Hypothesis printed the smallest failing input above", flush=True)
                failed.append(name)
                break
            rounds += 1
        else:
            print(f"{name}: ok, {rounds * SETTINGS['max_examples']:,} examples", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
