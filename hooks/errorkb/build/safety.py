"""What untrusted text may contain: Markdown fields, links and signatures.

Entries come from outside contributors, so two layers guard the output:
``check_markdown`` / ``check_signature`` refuse bad input in ``kb check`` (an
editor gets a precise message), and ``clean_html`` sanitises the rendered body
of every generated page at build time, so nothing that slips past the checks
(a new Markdown trick, a template bug) reaches a visitor's browser.
"""

from __future__ import annotations

import re
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
        self.images: list[str] = []
        self.bad_attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        allowed = _ATTRS["*"] | _ATTRS.get(tag, set())
        for name, value in attrs:
            if name not in allowed:
                self.bad_attrs.append(f"{name}={value!r}" if value is not None else name)
            if name in {"href", "src", "action", "formaction", "xlink:href", "poster", "srcset"} and value is not None:
                self.urls.append(value)
            if tag == "img" and name in {"src", "srcset"} and value is not None:
                self.images.append(value)


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see, after removing what browsers ignore."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", url)
    match = re.match(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):", cleaned)
    return match.group(1).lower() if match else None


_CONVERTER: list[markdown.Markdown] = []  # one converter per process; reset before each use
# Only these can produce a link, an image or an attribute list; plain prose skips the Markdown pass.
_MAY_LINK = re.compile(r"\]\s*[(:\[]|[<{]|\]$", re.M)


def _rendered(markdown_text: str, plain: bool = True) -> _Links:
    """The links, images and attributes of one field as rendered. Prose that ``markup.plain_tree`` reads (plain
    paragraphs, code spans, simple links, fenced code) renders alike with these extensions, so its links are
    taken from that tree; anything else goes through Python-Markdown (``plain=False``: always)."""
    parser = _Links()
    if not _MAY_LINK.search(markdown_text):
        return parser
    if plain:
        from errorkb.build.markup import plain_tree, walk  # markup reads this module's URL rules

        tree = plain_tree(markdown_text)
        if tree is not None:
            parser.urls = [node.attrs["href"] for node in walk(tree) if node.tag == "a"]
            return parser
    if not _CONVERTER:
        _CONVERTER.append(markdown.Markdown(extensions=["extra", "admonition"]))
    parser.feed(_CONVERTER[0].reset().convert(markdown_text))
    return parser


# Python-Markdown's inline parser is quadratic in these characters; real entries use a handful.
MAX_SPECIALS = {"[": 80, "`": 300, "<": 120, "*": 300, "_": 300}
_ATTR_LIST = re.compile(r"\{:?[ \t]*(?:[.#][\w-]|[\w-]+[ \t]*=)[^}\n]*\}")


def _cost(value: str) -> str | None:
    for char, limit in MAX_SPECIALS.items():
        count = value.count(char)
        if count > limit:
            return f"{count} '{char}' characters (at most {limit} in one field)"
    return None


def check_markdown(value: str) -> list[tuple[str, str]]:
    """(code, message) pairs for raw HTML, attribute lists, unsafe links and outside images in one Markdown field."""
    found: list[tuple[str, str]] = []
    cost = _cost(value)
    if cost:
        return [("KB025", cost)]  # nothing else is parsed: that is the cost being refused
    prose = _AUTOLINK.sub("", _strip_code(value))
    tag = _TAG.search(prose)
    if tag:
        found.append(("KB016", f"raw HTML {tag.group(0)[:40]!r} is not allowed"))
    attr_list = _ATTR_LIST.search(prose)
    rendered = _rendered(value)
    if not tag and (attr_list or rendered.bad_attrs):
        what = attr_list.group(0)[:40] if attr_list else rendered.bad_attrs[0][:40]
        found.append(("KB016", f"the attribute list {what!r} is not allowed (classes, ids and handlers change how the page looks and behaves)"))
    for url in rendered.urls:
        if (url_scheme(url) or "https") not in ALLOWED_SCHEMES:
            found.append(("KB017", f"the link {url[:60]!r} uses the scheme {url_scheme(url)!r}"))
    for src in rendered.images:
        if not _is_local(src):
            found.append(("KB029", f"the image {src[:60]!r} is not a file of the KB"))
    fence = _fence_against_text(value)
    if fence:
        found.append(("KB031", fence))
    return found


_FENCE_LINE = re.compile(r"(`{3,}|~{3,})(.*)")


def _fence_against_text(value: str) -> str | None:
    """A code block at the left margin must have a blank line (or the start or end of the field) on both sides.

    Without one, Markdown keeps the block inside the paragraph next to it: the page shows a code block inside
    a <p>, which browsers and every other reader of the text (snippets, email copies, the API) break apart.
    Blocks indented under a list item are not concerned.
    """
    lines = value.split("\n")
    opening = ""
    for number, line in enumerate(lines):
        found = _FENCE_LINE.match(line)
        if not opening:
            if found:
                opening = found.group(1)
                if number and lines[number - 1].strip():
                    return f"the code block opened on line {number + 1} of the text follows a line of text"
        elif found and found.group(1)[0] == opening[0] and len(found.group(1)) >= len(opening) and not found.group(2).strip():
            opening = ""
            if number + 1 < len(lines) and lines[number + 1].strip():
                return f"the code block closed on line {number + 1} of the text is followed by a line of text"
    return None


def _is_local(url: str) -> bool:
    """A relative path inside the site: no scheme, no host (//...), no way up past the root."""
    cleaned = re.sub(r"[\x00-\x20\x7f]+", "", url).replace("\\", "/")
    return url_scheme(cleaned) is None and not cleaned.startswith("//")


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
