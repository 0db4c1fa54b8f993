"""What untrusted text may contain: Markdown fields, links and signatures.

Entries come from outside contributors, so two layers guard the output:
``check_markdown`` / ``check_signature`` refuse bad input in ``kb check`` (an
editor gets a precise message), and ``clean_html`` sanitises the rendered body
of every generated page at build time, so nothing that slips past the checks
(a new Markdown trick, a template bug) reaches a visitor's browser.
"""

from __future__ import annotations

import re
from re import _constants as sre_constants  # the public sre_* aliases are deprecated since 3.11
from re import _parser as sre_parse
from html.parser import HTMLParser

import markdown
import nh3

ALLOWED_SCHEMES = {"http", "https", "mailto"}

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[`~]*[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.M)
_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>|<!--|<\?|<!\[CDATA\[|<![a-zA-Z]")
_AUTOLINK = re.compile(r"<(?:https?|mailto):[^\s<>]*>", re.I)


def _strip_code(text: str) -> str:
    text = _FENCE.sub("", text)
    text = _CODE_SPAN.sub("", text)
    return _INDENTED.sub("", text)


class _Links(HTMLParser):
    """Collects the URLs and the attributes that rendered Markdown carries."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.bad_attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        allowed = _ATTRS["*"] | _ATTRS.get(tag, set())
        for name, value in attrs:
            if name not in allowed:
                self.bad_attrs.append(f"{name}={value!r}" if value is not None else name)
            if name in {"href", "src", "action", "formaction", "xlink:href", "poster", "srcset"} and value is not None:
                self.urls.append(value)


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see, after removing what browsers ignore."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", url)
    match = re.match(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):", cleaned)
    return match.group(1).lower() if match else None


_CONVERTER: list[markdown.Markdown] = []  # one converter per process; reset before each use
# Only these can produce a link, an image or an attribute list; plain prose skips the Markdown pass.
_MAY_LINK = re.compile(r"\]\s*[(:\[]|[<{]|\]$", re.M)


def _rendered(markdown_text: str) -> _Links:
    parser = _Links()
    if not _MAY_LINK.search(markdown_text):
        return parser
    if not _CONVERTER:
        _CONVERTER.append(markdown.Markdown(extensions=["extra", "admonition"]))
    parser.feed(_CONVERTER[0].reset().convert(markdown_text))
    return parser


def unsafe_links(markdown_text: str) -> list[str]:
    """URLs in the rendered Markdown (inline, reference-style, autolinks, entity-encoded) whose scheme is not allowed."""
    return [u for u in _rendered(markdown_text).urls if (url_scheme(u) or "https") not in ALLOWED_SCHEMES]


def check_markdown(value: str) -> list[tuple[str, str]]:
    """(code, message) pairs for raw HTML and unsafe links in one Markdown field."""
    found: list[tuple[str, str]] = []
    prose = _AUTOLINK.sub("", _strip_code(value))
    tag = _TAG.search(prose)
    if tag:
        found.append(("KB016", f"raw HTML {tag.group(0)[:40]!r} is not allowed"))
    rendered = _rendered(value)
    if rendered.bad_attrs and not tag:
        found.append(("KB016", f"the attribute {rendered.bad_attrs[0][:40]} is not allowed (attribute lists such as {{ onclick=... }} are HTML too)"))
    for url in rendered.urls:
        if (url_scheme(url) or "https") not in ALLOWED_SCHEMES:
            found.append(("KB017", f"the link {url[:60]!r} uses the scheme {url_scheme(url)!r}"))
    return found


# --- signatures: regular expressions that run in every visitor's browser ---

_SINGLE_CHAR = {sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.IN, sre_constants.ANY, sre_constants.CATEGORY}
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
_NOT_JS = [
    (re.compile(r"\(\?P?<[a-zA-Z_]"), "named groups"),
    (re.compile(r"\(\?[aiLmsux]+[):-]"), "inline flags"),
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\(\?>"), "atomic groups"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers"),
    (re.compile(r"\\[AZ]"), r"\A and \Z"),
    (re.compile(r"\(\?P="), "backreferences"),
    (re.compile(r"\\[1-9]"), "backreferences"),
]
MAX_BOUNDED = 4000  # wide enough to tie a message to a traceback frame nearby


def _is_wide(op: object, arg: object) -> bool:
    """A single-character matcher that also matches most other characters (., [^x])."""
    if op == sre_constants.ANY or op == sre_constants.NOT_LITERAL:
        return True
    return op == sre_constants.IN and any(o == sre_constants.NEGATE for o, _ in arg)


def _scan(pattern: sre_parse.SubPattern, inside_repeat: bool) -> str | None:
    for op, arg in pattern:
        if op in _REPEATS:
            low, high, body = arg
            many = high == sre_constants.MAXREPEAT
            if inside_repeat and (many or high > 1):
                return "a repeat inside a repeat can take exponential time (write the inner part out, or bound it)"
            if many and len(body) == 1 and _is_wide(*body[0]):
                return "an unbounded wildcard such as .* or [^x]+ (use a bounded repeat like [^\\n]{0,120})"
            if many and not (len(body) == 1 and body[0][0] in _SINGLE_CHAR):
                return "an unbounded repeat of a group (bound it, e.g. {0,5})"
            if not many and high > MAX_BOUNDED:
                return f"a repeat bound over {MAX_BOUNDED}"
            problem = _scan(body, inside_repeat or many or high > 1)
            if problem:
                return problem
        elif op == sre_constants.SUBPATTERN:
            problem = _scan(arg[-1], inside_repeat)
            if problem:
                return problem
        elif op == sre_constants.BRANCH:
            for branch in arg[1]:
                problem = _scan(branch, inside_repeat)
                if problem:
                    return problem
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            problem = _scan(arg[1], inside_repeat)
            if problem:
                return problem
        elif op == sre_constants.GROUPREF:
            return "backreferences"
    return None


def check_signature(pattern: str) -> str | None:
    """Why ``pattern`` may not be a signature, or None when it is safe in Python and JavaScript."""
    for probe, name in _NOT_JS:
        if probe.search(pattern):
            return f"{name} do not work the same in browsers"
    try:
        parsed = sre_parse.parse(pattern, re.IGNORECASE)
    except re.error as exc:
        return f"not a valid regular expression: {exc}"
    reason = _scan(parsed, False)
    if reason:
        return f"unsafe pattern: {reason}"
    if re.search(pattern, "", re.IGNORECASE) is not None or re.fullmatch(pattern, " ", re.IGNORECASE):
        return "the pattern matches an empty or blank log"
    return None


# --- the last layer: sanitising rendered HTML of generated pages ---

_TAGS = {
    "a", "abbr", "article", "aside", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl",
    "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "nav", "ol", "p", "pre", "s", "section", "small", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "time", "tr", "ul",
}
_ATTRS = {
    "*": {"class", "id", "title", "lang", "role", "tabindex"},
    "a": {"href", "hreflang"},
    "img": {"src", "alt", "width", "height", "loading"},
    "time": {"datetime"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"},
    "details": {"open"},
}


def clean_html(html: str) -> str:
    """Keep only harmless tags, attributes and URL schemes in a page body."""
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRS,
        generic_attribute_prefixes={"data-", "aria-"},
        url_schemes=ALLOWED_SCHEMES,
        link_rel=None,
        strip_comments=True,
    )
