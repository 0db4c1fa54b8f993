"""Stage 4a, snippets: an entry, or one of its steps, as a support engineer pastes it into a reply.

Input: an error or guide entry, its summary and its absolute URL. Output: for
the entry and for each solution step (a guide: each cause) the same content
in three forms, ``text``, ``markdown`` and ``html`` (markup.py, richtext.py). A step
snippet is the whole step: its title, its body, its commands, how to tell it
worked when the step says so, and the permanent link to the step. An entry
snippet is the summary, the numbered step titles with their links, and the
link to the entry.

``kb cite``, the JSON API and the page's "Copy for email" buttons all take
their text from here (the page carries it in a data attribute), so the three
can never disagree.
"""

from __future__ import annotations

import html
import textwrap

from errorkb.build import markup, richtext

FORMATS = ("text", "markdown", "html")


def _wrap(line: str) -> str:
    return "\n".join(textwrap.wrap(" ".join(line.split()), markup.WIDTH, break_long_words=False, break_on_hyphens=False))


def _md(text: str) -> str:
    return richtext.to_markdown(markup.Node("p", children=[text]))


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _link_md(url: str) -> str:
    return "<" + url.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20") + ">"


def _link_html(url: str) -> str:
    return f'<a href="{html.escape(url, quote=True)}">{_esc(url)}</a>'


def parts_of(kind: str, entry) -> list[tuple[str, str, list[tuple[str | None, str]]]]:
    """(anchor, heading, [(label, Markdown)]) for every step of an error or cause of a guide."""
    if kind == "errors":
        return [(f"step-{n}", f"Step {n}: {s.title}", [(None, s.body)]) for n, s in enumerate(entry.solution, 1)]
    return [(f"cause-{n}", f"Cause {n}: {c.title}", [("Diagnose", c.diagnose), ("Fix", c.fix)]) for n, c in enumerate(entry.causes, 1)]


def step_snippet(entry_title: str, heading: str, sections: list[tuple[str | None, str]], url: str) -> dict[str, str]:
    trees = [(label, markup.parse(body)) for label, body in sections]
    text = [_wrap(entry_title) + "\n" + _wrap(heading)]
    md = [f"**{_md(entry_title)}**  \n**{_md(heading)}**"]
    htm = [f"<p><strong>{_esc(entry_title)}</strong><br>\n<strong>{_esc(heading)}</strong></p>"]
    for label, tree in trees:
        body = markup.to_text(tree)
        text.append(f"{label}:\n{body}" if label else body)
        if label:
            md.append(f"**{label}**")
            htm.append(f"<p><strong>{label}</strong></p>")
        md.append(richtext.to_markdown(tree))
        htm.append(richtext.to_html(tree))
    text.append(url)
    md.append(_link_md(url))
    htm.append(f"<p>{_link_html(url)}</p>")
    return {"text": "\n\n".join(text) + "\n", "markdown": "\n\n".join(md) + "\n", "html": "\n".join(htm) + "\n"}


def entry_snippet(entry_title: str, summary: str, label: str, steps: list[tuple[str, str]], url: str) -> dict[str, str]:
    """Title, summary, the numbered step titles each with its link, the entry's link."""
    items = [(n, title, step_url) for n, (title, step_url) in enumerate(steps, 1)]
    text_items = "\n".join(
        textwrap.fill(" ".join(title.split()), markup.WIDTH, initial_indent=f"{n}. ", subsequent_indent=" " * len(f"{n}. "), break_long_words=False, break_on_hyphens=False)
        + "\n" + " " * len(f"{n}. ") + step_url
        for n, title, step_url in items
    )
    text = "\n\n".join([_wrap(entry_title), _wrap(summary), f"{label}:\n{text_items}", url]) + "\n"
    md_items = "\n".join(f"{n}. [{_md(title)}]({step_url.replace('(', '%28').replace(')', '%29').replace(' ', '%20')})" for n, title, step_url in items)
    md = "\n\n".join([f"**{_md(entry_title)}**", _md(summary), f"{_md(label)}:", md_items, _link_md(url)]) + "\n"
    html_items = "".join(f'<li><a href="{html.escape(step_url, quote=True)}">{_esc(title)}</a></li>' for _, title, step_url in items)
    htm = "\n".join([f"<p><strong>{_esc(entry_title)}</strong></p>", f"<p>{_esc(summary)}</p>", f"<p>{_esc(label)}:</p>", f"<ol>{html_items}</ol>", f"<p>{_link_html(url)}</p>"]) + "\n"
    return {"text": text, "markdown": md, "html": htm}


def snippets(kind: str, entry, summary: str, url: str) -> dict:
    """{"entry": {text, markdown, html}, "steps": [{anchor, title, url, text, markdown, html}]} for one entry."""
    steps = []
    for anchor, heading, sections in parts_of(kind, entry):
        step_url = f"{url}#{anchor}"
        steps.append({"anchor": anchor, "title": heading, "url": step_url} | step_snippet(entry.title, heading, sections, step_url))
    label = "Steps" if kind == "errors" else "Causes, in the order to check them"
    titles = [(s.title, st["url"]) for s, st in zip(entry.solution if kind == "errors" else entry.causes, steps)]
    return {"entry": entry_snippet(entry.title, summary, label, titles, url), "steps": steps}
