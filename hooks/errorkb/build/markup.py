"""Authored Markdown → a small tree → plain text for email, portable Markdown, or an HTML fragment.

Input: a Markdown field of an entry (a step body, a cause's fix, an answer).
Output: the same content in three forms, for the snippets a support engineer
pastes (see snippet.py). The field is parsed once with Python-Markdown, the
parser the site itself uses, so a snippet holds exactly what the page shows;
the three writers then work from one tree:

- ``to_text``: paragraphs reflowed to 72 columns, code blocks indented by
  four spaces and never wrapped, links as ``text (url)``, code spans in
  quotes and never split, lists with ``-`` or ``1.``; no Markdown, no HTML.
- ``to_markdown``: Markdown that CommonMark and Python-Markdown read alike
  (blank lines between blocks, fenced code, escaped text).
- ``to_html``: a fragment of a few plain tags, every value escaped.
"""

from __future__ import annotations

import html
import re
import textwrap
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


@lru_cache(maxsize=8192)
def parse(markdown_text: str) -> Node:
    """Authored Markdown → tree, with the extensions the site renders entries with.

    Cached by the text itself (snippets and JSON-LD read the same steps), so an
    edited step is parsed again; the trees are never modified.
    """
    if not _CONVERTER:
        _CONVERTER.append(markdown.Markdown(
            extensions=["tables", "pymdownx.highlight", "pymdownx.superfences"],
            extension_configs={"pymdownx.highlight": {"use_pygments": False}},
        ))
    converter = _CONVERTER[0]
    converter.reset()
    return tree_of_html(converter.convert(markdown_text))


def _blocks(node: Node) -> list:
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
            out.append(_quote(code_text(child).replace(" ", _GLUE)))
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
        words = " ".join(part.split())
        lines += textwrap.wrap(words, width=max(width, 20), break_long_words=False, break_on_hyphens=False) or []
    return [line.replace(_GLUE, " ") for line in lines]


def _text_blocks(node: Node, width: int) -> list[str]:
    return [b for b in (_text_block(child, width) for child in _blocks(node)) if b.strip()]


def _text_block(node: Node, width: int) -> str:
    if node.tag == "pre":
        return "\n".join(("    " + line).rstrip() for line in code_text(node).rstrip("\n").split("\n"))
    if node.tag in ("ul", "ol"):
        items = [c for c in node.children if isinstance(c, Node) and c.tag == "li"]
        start = int(node.attrs.get("start") or 1)
        out = []
        for n, item in enumerate(items, start):
            marker = f"{n}. " if node.tag == "ol" else "- "
            pad = " " * len(marker)
            inner = _text_blocks(item, width - len(pad))
            text = "\n\n".join(inner).split("\n")
            out.append("\n".join([marker + text[0]] + [(pad + line) if line else "" for line in text[1:]]))
        loose = any(sum(1 for c in _blocks(i)) > 1 for i in items)
        return ("\n\n" if loose else "\n").join(out)
    if node.tag == "table":
        rows = [r for r in _walk(node) if r.tag == "tr"]
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


def _walk(node: Node):
    for child in node.children:
        if isinstance(child, Node):
            yield child
            yield from _walk(child)


def to_text(tree: Node, width: int = WIDTH) -> str:
    return "\n\n".join(_text_blocks(tree, width))


# --- Markdown that helpdesks render ---

_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_LINE_START = re.compile(r"^(\s*)([#>+\-=|]|\d+[.)])")


def _md_escape(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_ESCAPE.sub(r"\\\1", text)


def _fence_for(text: str, char: str = "`") -> str:
    longest = max((len(m) for m in re.findall(re.escape(char) + "+", text)), default=0)
    return char * max(3, longest + 1)


def _inline_md(node: Node) -> str:
    out = []
    for child in node.children:
        if isinstance(child, str):
            out.append(_md_escape(" ".join(child.split(" ")).replace("\n", " ")))
        elif child.tag == "code":
            code = code_text(child)
            fence = "`" * (max((len(m) for m in re.findall("`+", code)), default=0) + 1)
            pad = " " if code.startswith("`") or code.endswith("`") else ""
            out.append(f"{fence}{pad}{code}{pad}{fence}")
        elif child.tag == "a":
            href = href_of(child).replace("(", "%28").replace(")", "%29").replace(" ", "%20")
            out.append(f"[{_inline_md(child)}]({href})" if href else _inline_md(child))
        elif child.tag in ("strong", "b"):
            out.append(f"**{_inline_md(child)}**")
        elif child.tag in ("em", "i"):
            out.append(f"*{_inline_md(child)}*")
        elif child.tag == "br":
            out.append("\\\n")
        else:
            out.append(_inline_md(child))
    text = re.sub(r"[ \t]+", " ", "".join(out)).strip()
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if not m.group(2)[0].isdigit() else m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


def _md_blocks(node: Node) -> list[str]:
    return [b for b in (_md_block(child) for child in _blocks(node)) if b.strip()]


def _md_block(node: Node) -> str:
    if node.tag == "pre":
        code = code_text(node).rstrip("\n")
        inner = next((c for c in node.children if isinstance(c, Node) and c.tag == "code"), None)
        lang = next((c[len("language-"):] for c in (inner.attrs.get("class") or "").split() if c.startswith("language-")), "") if inner else ""
        fence = _fence_for(code)
        return f"{fence}{lang}\n{code}\n{fence}"
    if node.tag in ("ul", "ol"):
        items = [c for c in node.children if isinstance(c, Node) and c.tag == "li"]
        start = int(node.attrs.get("start") or 1)
        out = []
        for n, item in enumerate(items, start):
            marker = f"{n}. " if node.tag == "ol" else "- "
            lines = "\n\n".join(_md_blocks(item)).split("\n")
            out.append("\n".join([marker + lines[0]] + [("    " + line) if line else "" for line in lines[1:]]))
        return "\n\n".join(out)
    if node.tag == "table":
        rows = [r for r in _walk(node) if r.tag == "tr"]
        table = []
        for i, row in enumerate(rows):
            cells = [_inline_md(c).replace("|", "\\|") for c in row.children if isinstance(c, Node) and c.tag in ("td", "th")]
            table.append("| " + " | ".join(cells) + " |")
            if i == 0:
                table.append("|" + "---|" * len(cells))
        return "\n".join(table)
    if node.tag == "blockquote":
        return "\n".join(("> " + line).rstrip() for line in "\n\n".join(_md_blocks(node)).split("\n"))
    if node.tag == "hr":
        return ""
    if node.tag == "div":
        return "\n\n".join(_md_blocks(node))
    if node.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"**{_inline_md(node)}**"
    return _inline_md(node)


def to_markdown(tree: Node) -> str:
    return "\n\n".join(_md_blocks(tree))


# --- an HTML fragment for rich-text editors ---

_INLINE_TAGS = {"strong": "strong", "b": "strong", "em": "em", "i": "em", "code": "code"}


def _inline_html(node: Node) -> str:
    out = []
    for child in node.children:
        if isinstance(child, str):
            out.append(html.escape(child.replace("\n", " "), quote=False))
        elif child.tag == "a":
            href = href_of(child)
            out.append(f'<a href="{html.escape(href, quote=True)}">{_inline_html(child)}</a>' if href else _inline_html(child))
        elif child.tag == "br":
            out.append("<br>")
        elif child.tag in _INLINE_TAGS:
            tag = _INLINE_TAGS[child.tag]
            out.append(f"<{tag}>{_inline_html(child)}</{tag}>")
        else:
            out.append(_inline_html(child))
    return "".join(out).strip()


def _html_block(node: Node) -> str:
    if node.tag == "pre":
        return f"<pre><code>{html.escape(code_text(node).rstrip(chr(10)), quote=False)}</code></pre>"
    if node.tag in ("ul", "ol"):
        items = [c for c in node.children if isinstance(c, Node) and c.tag == "li"]
        start = node.attrs.get("start")
        opening = f'<ol start="{int(start)}">' if node.tag == "ol" and start else f"<{node.tag}>"
        return opening + "".join(f"<li>{''.join(_html_block(b) for b in _blocks(i))}</li>" for i in items) + f"</{node.tag}>"
    if node.tag == "table":
        rows = [r for r in _walk(node) if r.tag == "tr"]
        out = []
        for row in rows:
            cells = [c for c in row.children if isinstance(c, Node) and c.tag in ("td", "th")]
            out.append("<tr>" + "".join(f"<{c.tag}>{_inline_html(c)}</{c.tag}>" for c in cells) + "</tr>")
        return "<table>" + "".join(out) + "</table>"
    if node.tag in ("blockquote", "div"):
        inner = "".join(_html_block(b) for b in _blocks(node))
        return f"<blockquote>{inner}</blockquote>" if node.tag == "blockquote" else inner
    if node.tag == "hr":
        return ""
    if node.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"<p><strong>{_inline_html(node)}</strong></p>"
    return f"<p>{_inline_html(node)}</p>"


def to_html(tree: Node) -> str:
    return "\n".join(b for b in (_html_block(child) for child in _blocks(tree)) if b)
