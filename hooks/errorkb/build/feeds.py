"""Stage 5b, feeds for readers and crawlers: the graph → Atom, RSS and robots.txt.

Input: a ``Graph`` and ``Settings``. Output: ``GeneratedFile``s. Entries are
ordered by ``last_verified`` (newest first), so the feeds announce both new
and re-verified entries; dates come from the entries, never from the clock,
so two builds of one commit are identical.

An entry records the day it was verified, not the hour. Feed readers (and the
W3C validator) treat two entries with the same ``updated`` as a mistake, so
each entry's time of day is derived from its id: stable from build to build,
different between the entries of one day.
"""

from __future__ import annotations

import datetime as dt
import zlib
from email.utils import format_datetime
from xml.sax.saxutils import escape

from errorkb.build.linker import Graph
from errorkb.build.pages import GeneratedFile, Settings, page_url, summary_of
from errorkb.build.schema import TEXT_KINDS

FEED_SIZE = 50


def _recent(graph: Graph) -> tuple[list[tuple[str, str]], dict[tuple[str, str], dt.datetime]]:
    """The newest entries, newest first, and the time each carries in the feeds."""
    refs = [(k, i) for k in TEXT_KINDS for i in graph.loaded.entries[k]]
    recent = sorted(refs, key=lambda r: (graph.entry(r).last_verified, r[1]), reverse=True)[:FEED_SIZE]
    when = stamps(graph, recent)
    return sorted(recent, key=lambda r: when[r], reverse=True), when


def _stamp(day: dt.date, seconds: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(0, 0), tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)


def stamps(graph: Graph, refs: list[tuple[str, str]]) -> dict[tuple[str, str], dt.datetime]:
    """A distinct time for every entry: its verification day, at a second of that day taken from its id."""
    taken: set[dt.datetime] = set()
    out = {}
    for ref in sorted(refs, key=lambda r: r[1]):
        seconds = zlib.crc32(f"{ref[0]}/{ref[1]}".encode()) % 86_400
        while _stamp(graph.entry(ref).last_verified, seconds) in taken:  # two ids on one second: the next free one
            seconds = (seconds + 1) % 86_400
        out[ref] = _stamp(graph.entry(ref).last_verified, seconds)
        taken.add(out[ref])
    return out


def atom(graph: Graph, settings: Settings) -> str:
    recent, when = _recent(graph)
    updated = max(when.values(), default=_stamp(dt.date(1970, 1, 1))).isoformat()
    items = []
    for ref in recent:
        entry = graph.entry(ref)
        url = settings.site_url + page_url(*ref)
        items.append(
            "  <entry>\n"
            f"    <id>{escape(url)}</id>\n"
            f"    <title>{escape(entry.title)}</title>\n"
            f'    <link rel="alternate" type="text/html" href="{escape(url)}"/>\n'
            f"    <updated>{when[ref].isoformat()}</updated>\n"
            f"    <summary>{escape(summary_of(entry))}</summary>\n"
            f"    <category term=\"{escape(getattr(entry, 'category', 'guide'))}\"/>\n"
            "  </entry>\n"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">\n'
        f"  <id>{escape(settings.site_url)}</id>\n"
        "  <title>Errors KB: new and re-verified entries</title>\n"
        f'  <link rel="self" type="application/atom+xml" href="{escape(settings.site_url)}feed.xml"/>\n'
        f'  <link rel="alternate" type="text/html" href="{escape(settings.site_url)}errors/"/>\n'
        f"  <updated>{updated}</updated>\n"
        "  <author><name>Errors KB editors</name></author>\n"
        + "".join(items)
        + "</feed>\n"
    )


def rss(graph: Graph, settings: Settings) -> str:
    recent, when = _recent(graph)
    items = []
    for ref in recent:
        entry = graph.entry(ref)
        url = settings.site_url + page_url(*ref)
        items.append(
            "    <item>\n"
            f"      <title>{escape(entry.title)}</title>\n"
            f"      <link>{escape(url)}</link>\n"
            f'      <guid isPermaLink="true">{escape(url)}</guid>\n'
            f"      <pubDate>{format_datetime(when[ref])}</pubDate>\n"
            f"      <description>{escape(summary_of(entry))}</description>\n"
            "    </item>\n"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">\n  <channel>\n'
        "    <title>Errors KB: new and re-verified entries</title>\n"
        f"    <link>{escape(settings.site_url)}errors/</link>\n"
        f'    <atom:link href="{escape(settings.site_url)}rss.xml" rel="self" type="application/rss+xml"/>\n'
        "    <description>Errors and fixes for running AI models on your own hardware.</description>\n"
        "    <language>en</language>\n"
        + (f"    <lastBuildDate>{format_datetime(max(when.values()))}</lastBuildDate>\n" if when else "")
        + "".join(items)
        + "  </channel>\n</rss>\n"
    )


def robots(settings: Settings) -> str:
    return f"User-agent: *\nAllow: /\nDisallow: /e/\n\nSitemap: {settings.site_url}sitemap.xml\n"


def export_feeds(graph: Graph, settings: Settings) -> list[GeneratedFile]:
    return [
        GeneratedFile("feed.xml", atom(graph, settings).encode("utf-8")),
        GeneratedFile("rss.xml", rss(graph, settings).encode("utf-8")),
        GeneratedFile("robots.txt", robots(settings).encode("utf-8")),
    ]
