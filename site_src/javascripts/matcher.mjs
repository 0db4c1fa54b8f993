// "Paste your error": the matcher in the browser. The twin of
// hooks/errorkb/matcher/score.py: rank() and match() compute exactly what it
// computes (read its docstring for how an entry scores), on the same RE2
// engine (re2js), and tests/matcher_cases.json holds the cases both must pass.
// paste.mjs loads this module only when the paste box is used.
import { RE2JS } from "re2js";
import { normalise } from "./normalise.mjs";

const STRONG_CHARS = 20;
const [BASE, STRENGTH, CORROBORATION, CONTEXT_FOUND, CONTEXT_MISSING, EARLY] = [0.5, 0.3, 0.04, 0.12, 0.08, 0.04];
const WRAPPER_FACTOR = 0.5;
export const CONFIDENT = 0.7;

function patterns(list, factors) {
  return list.map((p, i) => ({ rx: RE2JS.compile(p, RE2JS.CASE_INSENSITIVE), factors: (factors && factors[i]) || [] }));
}

/** The index (api/v1/matcher.json) with its patterns compiled by RE2, case-insensitive, as in Python. */
export function compileIndex(index) {
  return index.entries.map((e) => ({
    id: e.id, title: e.title, url: e.url, wrapper: Boolean(e.w),
    signatures: patterns(e.s, e.sf),
    context: patterns(e.c || [], e.cf),
  }));
}

/** A-Z to a-z and nothing else, as score.ascii_lower does. */
export const asciiLower = (text) => text.replace(/[A-Z]+/g, (s) => s.toLowerCase());

/** The first match of one pattern as {index, length}, or null; the prefilter first, as in Pattern.search. */
function search(pattern, flat, lower) {
  if (pattern.factors.length && !pattern.factors.some((f) => lower.includes(f))) return null;
  const m = pattern.rx.matcher(flat);
  return m.find() ? { index: m.start(), length: m.end() - m.start() } : null;
}

/** Round half up to 3 decimals, as matcher.round3 does. */
export const round3 = (value) => Math.floor(value * 1000 + 0.5) / 1000;

function first(patterns, flat, lower) {
  for (const pattern of patterns) {
    const m = search(pattern, flat, lower);
    if (m) return m;
  }
  return null;
}

function score(entry, flat, lower) {
  const hits = entry.signatures.map((p) => search(p, flat, lower)).filter(Boolean);
  if (!hits.length) return null;
  const spans = hits.map((m) => ({ start: m.index, end: m.index + m.length, kind: "signature" }));
  const strength = Math.max(...spans.map((s) => Math.min(1, (s.end - s.start) / STRONG_CHARS)));
  const start = Math.min(...spans.map((s) => s.start));
  let value = BASE + STRENGTH * strength;
  if (hits.length > 1) value += CORROBORATION;
  if (entry.context.length) {
    const found = first(entry.context, flat, lower);
    if (found) {
      spans.push({ start: found.index, end: found.index + found.length, kind: "context" });
      value += CONTEXT_FOUND;
    } else {
      value -= CONTEXT_MISSING;
    }
  }
  value += EARLY * (1 - start / flat.length);
  return { value, start, spans };
}

/** Every entry whose signatures match the normalised log, best first. */
export function rank(entries, normalised) {
  const flat = normalised.flat;
  if (!flat) return [];
  const lower = asciiLower(flat);
  const found = [];
  for (const entry of entries) {
    const result = score(entry, flat, lower);
    if (result) found.push({ entry, ...result });
  }
  const hasRoot = found.some((f) => !f.entry.wrapper);
  const matches = found.map(({ entry, value, start, spans }) => {
    const s = round3(entry.wrapper && hasRoot ? value * WRAPPER_FACTOR : value);
    spans.sort((a, b) => a.start - b.start || a.end - b.end);
    return { id: entry.id, title: entry.title, url: entry.url, score: s, confident: s >= CONFIDENT, wrapper: entry.wrapper, spans, first: start };
  });
  matches.sort((a, b) => b.score - a.score || a.first - b.first || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return matches;
}

/** normalise + rank; ``index`` is the raw matcher.json or the result of compileIndex. */
export function match(text, index, top = Infinity) {
  const entries = Array.isArray(index) ? index : compileIndex(index);
  const normalised = normalise(text);
  return { normalised, matches: rank(entries, normalised).slice(0, top) };
}

/** The text around a span, cut to whole words where possible, as [before, marked, after]. */
export function excerpt(flat, span, room = 80) {
  let from = Math.max(0, span.start - room);
  let to = Math.min(flat.length, span.end + room);
  const left = flat.indexOf(" ", from);
  if (from > 0 && left !== -1 && left < span.start) from = left + 1;
  const right = flat.lastIndexOf(" ", to);
  if (to < flat.length && right > span.end) to = right;
  return [(from > 0 ? "\u2026" : "") + flat.slice(from, span.start), flat.slice(span.start, span.end),
    flat.slice(span.end, to) + (to < flat.length ? "\u2026" : "")];
}
