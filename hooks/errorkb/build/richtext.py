"""The markup tree (markup.py) → Markdown for helpdesks that render it, or an HTML fragment for rich-text editors.

Input: a tree from ``markup.parse``. Output: ``to_markdown`` writes Markdown
that CommonMark and Python-Markdown read alike (blank lines between blocks,
fenced code, text escaped so it never turns into markup; a table in GitHub's
syntax); ``to_html`` writes a fragment of a few plain tags (p, pre, code, a,
strong, em, lists, tables) with every value escaped and only web and mail
links kept.
"""

from __future__ import annotations

import html
import re

from errorkb.build.markup import Node, blocks, code_text, hang, href_of, list_items, walk

# --- Markdown that helpdesks render ---

_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_NUMBERED = re.compile(r"^(\s*\d+)([.)])")
_MARK = re.compile(r"^(\s*)([#>+\-=|])")


def _escape_start(text: str) -> str:
    """Escape what would start a heading, quote, list or table at the start of a paragraph."""
    return _MARK.sub(r"\1\\\2", _NUMBERED.sub(r"\1\\\2", text))


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
    return _escape_start(text)


def _md_blocks(node: Node) -> list[str]:
    return [b for b in (_md_block(child) for child in blocks(node)) if b.strip()]


def _md_block(node: Node) -> str:
    if node.tag == "pre":
        code = code_text(node).rstrip("\n")
        inner = next((c for c in node.children if isinstance(c, Node) and c.tag == "code"), None)
        lang = next((c[len("language-"):] for c in (inner.attrs.get("class") or "").split() if c.startswith("language-")), "") if inner else ""
        fence = _fence_for(code)
        return f"{fence}{lang}\n{code}\n{fence}"
    if node.tag in ("ul", "ol"):
        return "\n\n".join(hang(marker, "\n\n".join(_md_blocks(item)), "    ") for marker, item in list_items(node))
    if node.tag == "table":
        rows = [r for r in walk(node) if r.tag == "tr"]
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
        return opening + "".join(f"<li>{''.join(_html_block(b) for b in blocks(i))}</li>" for i in items) + f"</{node.tag}>"
    if node.tag == "table":
        rows = [r for r in walk(node) if r.tag == "tr"]
        out = []
        for row in rows:
            cells = [c for c in row.children if isinstance(c, Node) and c.tag in ("td", "th")]
            out.append("<tr>" + "".join(f"<{c.tag}>{_inline_html(c)}</{c.tag}>" for c in cells) + "</tr>")
        return "<table>" + "".join(out) + "</table>"
    if node.tag in ("blockquote", "div"):
        inner = "".join(_html_block(b) for b in blocks(node))
        return f"<blockquote>{inner}</blockquote>" if node.tag == "blockquote" else inner
    if node.tag == "hr":
        return ""
    if node.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        return f"<p><strong>{_inline_html(node)}</strong></p>"
    return f"<p>{_inline_html(node)}</p>"


def to_html(tree: Node) -> str:
    return "\n".join(b for b in (_html_block(child) for child in blocks(tree)) if b)
