"""Stage 3, rendering: Jinja2 templates (templates/pages/*.j2) → Markdown strings.

Input: a template name and the context a page needs. Output: Markdown text.
StrictUndefined makes a missing field fail the build instead of printing
nothing. Templates produce Markdown, not HTML, so autoescape stays off; every
value that is inserted as text (not as authored Markdown) goes through the
``text`` filter, which escapes what Markdown or HTML would interpret.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parents[3] / "templates" / "pages"

# Characters Python-Markdown (with the tables extension) unescapes after a backslash.
_MD_SPECIALS = re.compile(r"([\\`*_\[\]{}()#+!|.-])")


def text(value: object) -> str:
    """Escape a plain-text value so Markdown and HTML print it literally.

    HTML's own characters become entities (a backslash before ``<`` would be
    printed, since Markdown does not treat it as an escape); Markdown's become
    backslash escapes.
    """
    escaped = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIALS.sub(r"\\\1", escaped)


def attr(value: object) -> str:
    """Escape a value placed inside an HTML attribute of a template.

    Line breaks become character references: a blank line inside a raw HTML
    block would end the block for Markdown and spill the rest as text.
    """
    return html.escape(str(value), quote=True).replace("\r", "&#13;").replace("\n", "&#10;")


def code_block(value: str, lang: str = "text") -> str:
    """A fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{value.rstrip()}\n{fence}"


# A dotted or scoped name as messages print it: torch.OutOfMemoryError, java.lang.UnsatisfiedLinkError,
# c10::Error, libcudart.so.12. Pagefind indexes such a token whole, so a visitor who types only its last
# part (OutOfMemoryError) would not find the page.
_QUALIFIED = re.compile(r"(?<![\w.:/\\])[A-Za-z_][\w-]*(?:(?:\.|::)[A-Za-z_0-9][\w-]*)+")
_WORD = re.compile(r"[A-Za-z_][\w-]*")
_STANDALONE = re.compile(r"(?<![\w.:])[A-Za-z_][\w-]*(?![\w.:]*[\w])")  # a word not joined to a name by . or ::
SEARCH_PARTS_MAX = 80


def search_parts(texts: list[object]) -> str:
    """The parts of the qualified names in ``texts`` that appear nowhere in them as words of their own.

    An entry page lists them in an element only site search reads, so that a search for
    ``OutOfMemoryError`` finds the page that prints ``torch.OutOfMemoryError``. Parts shorter than
    four characters or without a letter (``so``, ``12``, ``py``) are left out.
    """
    joined = "\n".join(str(t) for t in texts if t)
    standalone = {m.group(0).lower() for m in _STANDALONE.finditer(joined)}
    parts: dict[str, str] = {}  # lower case -> the part as first written, in order
    for token in _QUALIFIED.finditer(joined):
        for part in re.split(r"\.|::", token.group(0)):
            if len(part) >= 4 and _WORD.fullmatch(part) and part.lower() not in standalone:
                parts.setdefault(part.lower(), part)
    return " ".join(list(parts.values())[:SEARCH_PARTS_MAX])


def indent_md(value: str, spaces: int = 4) -> str:
    """Indent authored Markdown so it nests inside a list item or admonition."""
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in value.strip("\n").splitlines())


@lru_cache(maxsize=4)
def environment(templates_dir: str = str(TEMPLATES_DIR)) -> jinja2.Environment:
    # Cached per process only for speed of repeated renders within one build;
    # templates are re-read when their mtime changes (auto_reload), so
    # `mkdocs serve` still picks up edits.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        auto_reload=True,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(text=text, attr=attr, code_block=code_block, indent_md=indent_md, search_parts=search_parts)
    # Front matter is written with tojson: keep every character as itself (an emoji
    # escaped as a surrogate pair is not valid YAML); <, >, & and ' stay escaped.
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    return env


def render(template_name: str, **context: object) -> str:
    return environment().get_template(template_name).render(**context)
