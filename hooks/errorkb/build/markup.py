"""Authored Markdown → a small tree → plain text for email.

Input: a Markdown field of an entry (a step body, a cause's fix, an answer).
Output: ``parse()``, the tree, and ``to_text()``, the plain text a support
engineer pastes (see snippet.py; richtext.py writes the same tree as Markdown
and HTML). The field is parsed with Python-Markdown, the parser the site
itself uses, so a snippet holds exactly what the page shows.

``to_text``: paragraphs reflowed to 72 columns, code blocks indented by four
spaces and never wrapped, links as ``text (url)``, code spans in quotes and
never split, lists with ``-`` or ``1.``, a table a row a line; no Markdown,
no HTML.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser

import markdown

from errorkb.build.safety import ALLOWED_SCHEMES, url_scheme

WIDTH = 72
_GLUE = "\ue000"  # holds a code span together while wrapping (a private-use character)
_BREAK = "\ue001"  # a hard line break (<br>) inside a paragraph
_BLOCKS = {"p", "pre", "ul", "ol", "li", "blockquote", "table", "thead", "tbody", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "div"}


@dataclass
class Node:
    tag: str
    attrs: dict = field(default_factory=dict)
    children: list = field(default_factory=list)  # Node or str


class _TreeBuilder(HTMLParser):
    _VOID = {"br", "hr", "img"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root")
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in self._VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def tree_of_html(fragment: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(fragment)
    builder.close()
    return builder.root


_CONVERTER: list[markdown.Markdown] = []  # one per process: making one costs more than converting a step

# --- the plain-prose path: most fields are paragraphs, code spans, simple links and fenced code ---
# For text made of those alone the tree is built here, as Python-Markdown would build it (tests compare the two on
# every field of the KB and on generated text); anything else, or anything in doubt, goes to Python-Markdown.
#
# What prose outside spans and links may not hold. A '|' may stay: a paragraph is a table only when its second line
# is a row of '|', ':', '-' and spaces, and no line of a plain paragraph starts with any of those.
_SPECIAL = r"\\*_\[\]<>&~{}`^\t\r\x00-\x08\x0b-\x1f\x7f"
_NOT_PLAIN = re.compile("[" + _SPECIAL + "]")
_SPAN = re.compile(r"`([^`\n]+)`|\[([^\n]+?)\]\(([^\s]*?)\)")
_LINK_TEXT = re.compile("[^" + _SPECIAL + "|!]+")  # a link's text (never a line break: _SPAN stops at one)
_LINK_URL = re.compile(r"[A-Za-z0-9.\-/:?=%#@+,;]+")
_LINE_START = re.compile(r"[A-Za-z(\"']|`(?!`)")
_FENCE_OPEN = re.compile(r"```([A-Za-z0-9_+\-]*)")
_NOT_PLAIN_CODE = re.compile(r"[\t\r\x00-\x08\x0b-\x1f\x7f]")  # what a fenced block may not hold


def _plain_paragraph(lines: list[str]) -> Node | None:
    for line in lines:
        if not _LINE_START.match(line) or line.endswith(" "):
            return None
    text = "\n".join(lines)
    children: list = []
    at = 0
    for match in _SPAN.finditer(text):
        before = text[at:match.start()]
        if _NOT_PLAIN.search(before):
            return None
        code, label, href = match.groups()
        if code is not None:
            if code[0] == " " or code[-1] == " " or text[match.end():match.end() + 1] == "`" \
                    or (match.start() and text[match.start() - 1] == "`"):  # `a``b` is one span to Python-Markdown
                return None
            node = Node("code", children=[code])
        else:
            if not _LINK_TEXT.fullmatch(label) or label[0] == " " or label[-1] == " " or not _LINK_URL.fullmatch(href) or before.endswith("!"):
                return None
            node = Node("a", {"href": href}, [label])
        if before:
            children.append(before)
        children.append(node)
        at = match.end()
    rest = text[at:]
    if _NOT_PLAIN.search(rest):
        return None
    if rest:
        children.append(rest)
    return Node("p", children=children)


def plain_tree(markdown_text: str) -> Node | None:
    """The tree of a field written as paragraphs (plain words, `code` spans, [links](https://...)) and top-level
    fenced code blocks set off by blank lines; None for anything else, which Python-Markdown then reads."""
    lines = markdown_text.split("\n")
    blocks: list[Node] = []
    paragraph: list[str] = []
    at, count = 0, len(lines)
    while at < count:
        line = lines[at]
        if not line:
            if paragraph:
                node = _plain_paragraph(paragraph)
                if node is None:
                    return None
                blocks.append(node)
                paragraph = []
            at += 1
        elif line.startswith("```"):
            opening = _FENCE_OPEN.fullmatch(line)
            end = at + 1
            while end < count and lines[end] != "```":
                if "```" in lines[end] or not lines[end].strip(" ") and lines[end]:
                    return None
                end += 1
            body = lines[at + 1:end]
            if paragraph or opening is None or end == count or not body or not body[0] or not body[-1] \
                    or (end + 1 < count and lines[end + 1]) or _NOT_PLAIN_CODE.search("\n".join(body)):
                return None
            code = Node("code", {"class": f"language-{opening.group(1)}"} if opening.group(1) else {}, ["\n".join(body)])
            blocks.append(Node("pre", {"class": "highlight"}, [code]))
            at = end + 1
        else:
            paragraph.append(line)
            at += 1
    if paragraph:
        node = _plain_paragraph(paragraph)
        if node is None:
            return None
        blocks.append(node)
    root = Node("root")
    for n, block in enumerate(blocks):
        if n:
            root.children.append("\n")
        root.children.append(block)
    return root


@lru_cache(maxsize=8192)
def parse(markdown_text: str) -> Node:
    """Authored Markdown → tree, with the extensions the site renders entries with.

    Cached by the text itself (snippets and JSON-LD read the same steps), so an
    edited step is parsed again; the trees are never modified.
    """
    plain = plain_tree(markdown_text)
    if plain is not None:
        return plain
    if not _CONVERTER:
        _CONVERTER.append(markdown.Markdown(
            extensions=["tables", "pymdownx.highlight", "pymdownx.superfences"],
            extension_configs={"pymdownx.highlight": {"use_pygments": False}},
        ))
    converter = _CONVERTER[0]
    converter.reset()
    return tree_of_html(converter.convert(markdown_text))


def blocks(node: Node) -> list:
    """Children of a block container, with loose inline runs (a tight list item's text) gathered into a paragraph."""
    out, run = [], []
    for child in node.children:
        if isinstance(child, Node) and child.tag in _BLOCKS:
            if any(not isinstance(c, str) or c.strip() for c in run):
                out.append(Node("p", children=run))
            run = []
            out.append(child)
        else:
            run.append(child)
    if any(not isinstance(c, str) or c.strip() for c in run):
        out.append(Node("p", children=run))
    return out


def href_of(node: Node) -> str:
    """A link's absolute address, or "" when it has none that works outside the site or is not allowed.

    ``kb check`` refuses other schemes already; a snippet leaves the text of
    such a link and drops the address, whatever reached it.
    """
    href = (node.attrs.get("href") or "").strip()
    return href if url_scheme(href) in ALLOWED_SCHEMES else ""


def code_text(node: Node) -> str:
    parts = []
    for child in node.children:
        parts.append(child if isinstance(child, str) else code_text(child))
    return "".join(parts)


# --- plain text ---

def list_items(node: Node) -> list[tuple[str, Node]]:
    """The items of a ul or ol, each with the marker it starts with ("- ", "3. "), numbered from the list's start."""
    items = [c for c in node.children if isinstance(c, Node) and c.tag == "li"]
    start = int(node.attrs.get("start") or 1)
    return [(f"{n}. " if node.tag == "ol" else "- ", item) for n, item in enumerate(items, start)]


def hang(marker: str, text: str, indent: str) -> str:
    """A list item's text after its marker, the further lines indented under it (blank lines stay empty)."""
    lines = text.split("\n")
    return "\n".join([marker + lines[0]] + [(indent + line) if line else "" for line in lines[1:]])


def _quote(code: str) -> str:
    """Code in quotes, so it stands out from the sentence; left bare when it holds both kinds of quote."""
    if '"' not in code:
        return f'"{code}"'
    return f"'{code}'" if "'" not in code else code


def _inline_text(node: Node) -> str:
    out = []
    for child in node.children:
        if isinstance(child, str):
            out.append(" ".join(child.split("\n")))
        elif child.tag == "code":
            # A code span may run over a line break in the source; it is one line of code (as CommonMark reads it).
            out.append(_quote(" ".join(code_text(child).split()).replace(" ", _GLUE)))
        elif child.tag == "a":
            label, href = _inline_text(child), href_of(child)
            out.append(label if not href or href == label.strip() or href == "mailto:" + label.strip() else f"{label} ({href})")
        elif child.tag == "br":
            out.append(_BREAK)
        elif child.tag == "img":
            out.append(child.attrs.get("alt", ""))
        else:
            out.append(_inline_text(child))
    return "".join(out)


def _wrap(text: str, width: int) -> list[str]:
    lines = []
    for part in text.split(_BREAK):
        lines += fill_words(part.split(), max(width, 20))
    return [line.replace(_GLUE, " ") for line in lines]


def fill_words(words: list[str], width: int) -> list[str]:
    """``textwrap.wrap(" ".join(words), width, break_long_words=False, break_on_hyphens=False)``, line for line.

    The words hold no whitespace, so filling lines greedily, a word longer than ``width`` alone on its line,
    is all the standard wrapper does with them; it was the largest single cost of writing the snippets.
    """
    lines: list[str] = []
    line: list[str] = []
    length = 0
    for word in words:
        if line and length + 1 + len(word) <= width:
            line.append(word)
            length += 1 + len(word)
            continue
        if line:
            lines.append(" ".join(line))
        line, length = [word], len(word)
    if line:
        lines.append(" ".join(line))
    return lines


def _text_blocks(node: Node, width: int) -> list[str]:
    return [b for b in (_text_block(child, width) for child in blocks(node)) if b.strip()]


def _text_block(node: Node, width: int) -> str:
    if node.tag == "pre":
        return "\n".join(("    " + line).rstrip() for line in code_text(node).rstrip("\n").split("\n"))
    if node.tag in ("ul", "ol"):
        items = list_items(node)
        out = [hang(marker, "\n\n".join(_text_blocks(item, width - len(marker))), " " * len(marker)) for marker, item in items]
        loose = any(sum(1 for c in blocks(i)) > 1 for _, i in items)
        return ("\n\n" if loose else "\n").join(out)
    if node.tag == "table":
        rows = [r for r in walk(node) if r.tag == "tr"]
        lines = []
        for i, row in enumerate(rows):  # a row a line, the header first: email has no tables
            cells = [_inline_text(c) for c in row.children if isinstance(c, Node) and c.tag in ("td", "th")]
            wrapped = _wrap(" | ".join(cells), width - (2 if i else 0))
            lines += wrapped if i == 0 else ["- " + wrapped[0]] + ["  " + line for line in wrapped[1:]]
        return "\n".join(lines)
    if node.tag == "blockquote":
        return "\n".join(("  " + line).rstrip() for line in "\n\n".join(_text_blocks(node, width - 2)).split("\n"))
    if node.tag in ("hr",):
        return ""
    if node.tag == "div":
        return "\n\n".join(_text_blocks(node, width))
    return "\n".join(_wrap(_inline_text(node), width))


def walk(node: Node):
    for child in node.children:
        if isinstance(child, Node):
            yield child
            yield from walk(child)


def to_text(tree: Node, width: int = WIDTH) -> str:
    return "\n\n".join(_text_blocks(tree, width))
