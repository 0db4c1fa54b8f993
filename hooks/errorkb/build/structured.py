"""Stage 4b, what search engines read: an entry → schema.org JSON-LD and the text of its <title>.

Input: an error or guide entry, its id, the taxonomies and the settings.
Output: ``jsonld()``, one JSON-LD document (a dict) per entry page, and
``html_title()``. The page template puts both in the front matter; the theme
(templates/overrides/main.html) writes the JSON-LD into a script element with
Jinja's ``tojson``, which escapes ``<``, ``>``, ``&`` and ``'`` (and, as it
writes ASCII only, U+2028 and U+2029), so no entry text can end the element.

- every entry page: a ``TechArticle`` (dateModified from last_verified, the
  author) and a ``BreadcrumbList`` matching the page's breadcrumb;
- an error page: the error message as the article's ``about``, and a
  ``HowTo`` with one ``HowToStep`` per solution step, linked to its anchor;
- a guide with questions: an ``FAQPage``.
"""

from __future__ import annotations

import re

from errorkb.build import markup

CONTEXT = "https://schema.org"
MESSAGE_MAX = 90


def message_of(error: str) -> str:
    """The part of an error people search for: its first line, up to its first sentence when long."""
    line = next((ln.strip() for ln in error.splitlines() if ln.strip()), error.strip())
    if len(line) > MESSAGE_MAX:
        sentence = re.match(r"(.{20,}?[.!?])(\s|$)", line)
        if sentence:
            line = sentence.group(1)
    if len(line) > MESSAGE_MAX:
        cut = line[:MESSAGE_MAX].rsplit(" ", 1)[0]
        line = (cut if len(cut) > MESSAGE_MAX // 2 else line[:MESSAGE_MAX]).rstrip(",;: ") + "…"  # a long path has no space to cut at
    return line.rstrip(".")


def html_title(kind: str, entry) -> str:
    """An error page's title starts with its message; the entry's own title follows when it says more."""
    if kind != "errors":
        return entry.title
    message, title = message_of(entry.error), entry.title
    core = re.sub(r"^[\w.]+: ", "", message)  # without the exception's class
    at = title.lower().find(core.lower())
    if at == 0 or (at > 0 and at + len(core) == len(title)):
        # the title repeats the message and adds a word before or after ("vLLM", "while loading the weights")
        rest = (title[len(core):] if at == 0 else title[:at]).strip(" :-/,;")
        if rest.startswith("(") and rest.endswith(")"):
            rest = rest[1:-1]
        if not rest or rest.lower() in message.lower():
            return message
        if rest.count("(") == rest.count(")") and rest.split()[-1].lower() not in {"or", "and", "with", "in", "/"}:
            return f"{message} ({rest})"
    if title.lower() in message.lower():
        return message
    return f"{message} - {title}"


def _plain(markdown_text: str) -> str:
    return markup.to_text(markup.parse(markdown_text), width=10_000)


def _author(term) -> dict:
    # The author list names the teams that write and check entries, so an author is an Organization.
    out = {"@type": "Organization", "name": term.name}
    if getattr(term, "url", None):
        out["url"] = term.url
    return out


def _crumbs(items: list[tuple[str, str]]) -> dict:
    return {
        "@type": "BreadcrumbList",
        "itemListElement": [{"@type": "ListItem", "position": n, "name": name, "item": url} for n, (name, url) in enumerate(items, 1)],
    }


def jsonld(kind: str, entry, summary: str, author, url: str, crumbs: list[tuple[str, str]]) -> dict:
    """The page's JSON-LD; ``crumbs`` are the (name, absolute URL) pairs of its breadcrumb, the entry last."""
    article = {
        "@type": "TechArticle",
        "@id": url + "#article",
        "headline": entry.title,
        "description": summary,
        "url": url,
        "mainEntityOfPage": url,
        "inLanguage": "en",
        "dateModified": entry.last_verified.isoformat(),
        "author": _author(author),
    }
    graph: list[dict] = [article]
    if kind == "errors":
        message = message_of(entry.error)
        article["about"] = {"@type": "Thing", "name": message, "description": entry.error.strip()}
        graph.append({
            "@type": "HowTo",
            "@id": url + "#solution",
            "name": entry.title,
            "description": summary,
            "step": [
                {"@type": "HowToStep", "position": n, "name": step.title, "url": f"{url}#step-{n}", "text": _plain(step.body)}
                for n, step in enumerate(entry.solution, 1)
            ],
        })
    else:
        if entry.faq:
            graph.append({
                "@type": "FAQPage",
                "@id": url + "#faq",
                "url": url + "#faq",
                "mainEntity": [
                    {"@type": "Question", "name": item.question, "url": f"{url}#faq-{n}", "acceptedAnswer": {"@type": "Answer", "text": _plain(item.answer)}}
                    for n, item in enumerate(entry.faq, 1)
                ],
            })
    graph.append(_crumbs(crumbs))
    return {"@context": CONTEXT, "@graph": graph}
