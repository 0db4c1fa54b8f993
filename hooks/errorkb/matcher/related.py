"""The fallback: when no signature is sure, the entries whose words the log's error lines share.

Input: the normalised lines of a log and the related index (built here from
the graph, exported as api/v1/related.json and fetched by the browser only
when the paste box is used). Output: the error lines picked from the log and
up to TOP ``Related`` entries, best first. They are shown as "possibly
related", never as a confident match.

The index holds, for each error entry, its most telling words with a BM25
weight computed at build time (title and message counted twice, then the
summary, the cause and the literal text of its signatures), rounded to whole
numbers so that Python and JavaScript add up exactly the same scores.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

import re2

from errorkb.build.jsonout import fragment
from errorkb.build.linker import Graph
from errorkb.build.pages import page_url, plain, summary_of
from errorkb.matcher import language

INDEX_VERSION = 1
K1, B = 1.2, 0.75
TERMS_PER_ENTRY = 80
SCALE = 10  # weights are stored as round(weight * SCALE)
TOP = 5
MIN_TERMS = 2  # distinct words in common, at least
MIN_SCORE = 40  # in stored units (4.0 in BM25 terms)
MAX_LINES = 6
MAX_LINE = 300

TOKEN = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    "the a an of to in is it for on at by with and or not be as are was were this that from your you can may if "
    "no yes use used using when then than but into out so do does did has have had its set get got one two all any "
    "file line self return py python traceback most recent call last none true false info debug warning warn error "
    "errors raise raised exception per via after before while also only there which will would should could".split()
)
# Both twins run these with RE2 (google-re2 here, re2js in the browser); the index carries them.
ERROR_LINE = (
    r"(?i)(?:[a-z_.]{0,80}(?:error|exception)\b|\bfatal\b|\bfailed\b|\bfailure\b|ggml_assert|\bkilled\b|panic:|"
    r"\bcannot\b|\bcan't\b|\bunable to\b|\bnot found\b|\brefused\b|\bnot supported\b|\binvalid\b|\babort)"
)
EXCEPTION_LINE = r"^[A-Za-z_][\w.]{0,120}(?:Error|Exception|Exit|Interrupt)\b"
# A traceback pasted without its last line still says where it stopped: the last frame's module and function.
FRAME_LINE = r'^File "([^"]{1,500})", line \d+, in ([\w<>.]{1,120})'
TRACEBACK_HEADER = "traceback (most recent call last)"
PACKAGE_DIRS = ("site-packages", "dist-packages", "\u2026")  # the normaliser shortens a package path to "…/package/module.py"


@dataclass(frozen=True)
class Related:
    id: str
    title: str
    url: str
    score: int
    words: tuple[str, ...]

    def to_json(self, base_url: str = "") -> dict:
        return {"id": self.id, "title": self.title, "url": base_url + self.url, "score": self.score, "words": list(self.words)}


def ascii_lower(text: str) -> str:
    return text.translate(_LOWER)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def tokens(text: str) -> list[str]:
    """Words as both twins cut them: ASCII letters and digits, lower case, with a letter, 2 to 40 long, no stop words."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    # The related index cuts every entry's fields again at every build of `mkdocs serve`.
    return tuple(t for t in TOKEN.findall(ascii_lower(text)) if 2 <= len(t) <= 40 and not t.isdigit() and t not in STOP)


_ERROR_LINE, _EXCEPTION_LINE, _FRAME_LINE = re2.compile(ERROR_LINE), re2.compile(EXCEPTION_LINE), re2.compile(FRAME_LINE)


def error_lines(lines: list[str]) -> list[str]:
    """The lines that say what went wrong: the last exception line first, then the other error lines in log order.

    When they are none but traceback headers (a traceback pasted without its exception), the last frame stands in:
    its module path from the package on (or its last two parts) and its function, then the source line under it.
    """
    picked: list[str] = []
    exceptions = [line for line in lines if _EXCEPTION_LINE.search(line.strip())]
    candidates = ([exceptions[-1]] if exceptions else []) + [line for line in lines if _ERROR_LINE.search(line)]
    for line in candidates:
        line = line.strip()[:MAX_LINE]
        if line and line not in picked:
            picked.append(line)
        if len(picked) == MAX_LINES:
            break
    if all(TRACEBACK_HEADER in ascii_lower(line) for line in picked):
        picked += [line for line in last_frame(lines) if line not in picked][: MAX_LINES - len(picked)]
    return picked


def last_frame(lines: list[str]) -> list[str]:
    """The last Python frame of the lines, as words to look up: ["torch serialization default_restore_location", its source line]."""
    for at in range(len(lines) - 1, -1, -1):
        found = _FRAME_LINE.search(lines[at].strip())
        if not found:
            continue
        parts = [part for part in found.group(1).replace("\\", "/").split("/") if part]
        inside = max((i for i, part in enumerate(parts) if part in PACKAGE_DIRS), default=-1)
        parts = parts[inside + 1:] if inside >= 0 else parts[-2:]
        if parts and parts[-1].endswith(".py"):
            parts[-1] = parts[-1][:-3]
        out = [" ".join([*parts, found.group(2)])[:MAX_LINE]]
        code = lines[at + 1].strip() if at + 1 < len(lines) else ""
        if code.strip("^~ ") and not _FRAME_LINE.search(code):  # not the next frame, not a caret line
            out.append(code[:MAX_LINE])
        return out
    return []


def _document(entry) -> list[str]:
    factors = " ".join(f for p in (*entry.signatures, *entry.weak_signatures) for f in language.factors(p))
    return tokens(entry.title) * 2 + tokens(entry.error) * 2 + tokens(summary_of(entry)) + tokens(plain(entry.cause)) + tokens(factors)


def _guide_document(guide) -> list[str]:
    causes = " ".join(c.title for c in guide.causes)
    return tokens(guide.title) * 2 + tokens(summary_of(guide)) + tokens(causes)


def entry_words(graph: Graph, kind: str, entry_id: str) -> tuple[dict[str, int], int]:
    """One error entry's or guide's words with their counts, and how many there are: what its weights are made from."""
    terms = Counter(_document(graph.errors[entry_id]) if kind == "errors" else _guide_document(graph.guides[entry_id]))
    return terms, sum(terms.values())


def _direct(table, name, key, make):
    return make()


def related_index(graph: Graph, memo=None) -> dict:
    """The index of every error entry's and every guide's most telling words.

    ``memo(table, name, key, make)``, under ``mkdocs serve``: keeps each entry's words by the digest of its
    file, and each entry's record in the index as a ``jsonout.Fragment`` (written once while its title and
    weights stay the same); the index is then only for writing related.json. The weights depend on every
    entry (document frequencies, the average length), so they are computed afresh each time.
    """
    keep = memo or _direct
    digests = graph.loaded.digests
    # Guides take part too: a log whose words match a symptom (an app that cannot reach its server) lands on the guide.
    refs = [("errors", i) for i in sorted(graph.errors)] + [("guides", i) for i in sorted(graph.guides) if i not in graph.errors]
    docs = {ref: keep("related-words", ref, digests.get(ref), lambda ref=ref: entry_words(graph, *ref)) for ref in refs}
    count = len(docs) or 1
    avgdl = sum(length for _, length in docs.values()) / count
    df: Counter = Counter()
    for terms, _ in docs.values():
        df.update(terms.keys())
    idf = {term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in df.items()}
    k1p1 = K1 + 1
    weighted = {}
    for ref, (terms, length) in docs.items():
        norm = K1 * (1 - B + B * length / avgdl)
        # highest weight first, ties by word (words are distinct, so the pairs sort exactly so)
        best = sorted([(-(idf[term] * tf * k1p1 / (tf + norm)), term) for term, tf in terms.items()])
        del best[TERMS_PER_ENTRY:]
        weighted[ref] = [(t, r if (r := round(-w * SCALE)) > 1 else 1) for w, t in best]
    vocabulary = sorted({t for pairs in weighted.values() for t, _ in pairs})
    position = {t: i for i, t in enumerate(vocabulary)}
    entries = []
    for (kind, entry_id), pairs in weighted.items():
        # by position in the vocabulary, which is the order of the words themselves; position and weight alternate
        pairs = sorted(pairs)
        flat = [0] * (2 * len(pairs))
        flat[0::2] = [position[t] for t, _ in pairs]
        flat[1::2] = [w for _, w in pairs]
        flat = tuple(flat)
        title = graph.loaded.entries[kind][entry_id].title

        def record(kind=kind, entry_id=entry_id, title=title, flat=flat):
            made = {"id": entry_id, "title": title, "url": page_url(kind, entry_id), "w": list(flat)}
            return made if memo is None else fragment(made, 2)

        entries.append(keep("related-records", (kind, entry_id), (title, flat), record))
    return {
        "version": INDEX_VERSION, "top": TOP, "min_terms": MIN_TERMS, "min_score": MIN_SCORE, "max_lines": MAX_LINES, "max_line": MAX_LINE,
        "error_line": ERROR_LINE, "exception_line": EXCEPTION_LINE,
        "frame_line": FRAME_LINE, "traceback_header": TRACEBACK_HEADER, "package_dirs": list(PACKAGE_DIRS), "stop": sorted(STOP), "terms": vocabulary, "entries": entries,
    }


def compile_related(index: dict) -> list[tuple[dict, dict[str, int]]]:
    terms = index["terms"]
    return [(e, {terms[e["w"][i]]: e["w"][i + 1] for i in range(0, len(e["w"]), 2)}) for e in index["entries"]]


def rank_related(compiled, lines: list[str], exclude: set[str] = frozenset(), index: dict | None = None) -> list[Related]:
    """Entries sharing the most telling words with the error lines, best first; ``exclude`` are already shown."""
    top, min_terms, min_score = (index["top"], index["min_terms"], index["min_score"]) if index else (TOP, MIN_TERMS, MIN_SCORE)
    query = list(dict.fromkeys(t for line in lines for t in tokens(line)))
    found = []
    for entry, weights in compiled:
        if entry["id"] in exclude:
            continue
        shared = [t for t in query if t in weights]
        score = sum(weights[t] for t in shared)
        if len(shared) >= min_terms and score >= min_score:
            shared.sort(key=lambda t: (-weights[t], t))
            found.append(Related(entry["id"], entry["title"], entry["url"], score, tuple(shared[:6])))
    found.sort(key=lambda r: (-r.score, r.id))
    return found[:top]
