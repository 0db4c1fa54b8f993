// "Paste your error": the matcher in the browser. The twin of
// hooks/errorkb/matcher/score.py: rank() and match() compute exactly what it
// computes (read its docstring for how an entry scores), on the same RE2
// engine (re2js), and tests/matcher_cases.json holds the cases both must pass.
// paste.mjs loads this module only when the paste box is used.
import { RE2JS } from "re2js";
import { normalise } from "./normalise.mjs";

// The weights and the confidence threshold come from the index (score.py is their one home).

function patterns(list, factors) {
  return list.map((p, i) => ({ rx: RE2JS.compile(p, RE2JS.CASE_INSENSITIVE), factors: (factors && factors[i]) || [] }));
}

/** The index (api/v1/matcher.json) with its patterns compiled by RE2, case-insensitive, as in Python. */
export function compileIndex(index) {
  if (!index.weights || typeof index.confident !== "number") throw new Error("matcher.json carries no weights: rebuild the site");
  const entries = index.entries.map((e) => ({
    id: e.id, title: e.title, url: e.url, wrapper: Boolean(e.w),
    signatures: patterns(e.s, e.sf),
    weakSignatures: patterns(e.ws || [], e.wsf),
    context: patterns(e.c || [], e.cf),
    unless: patterns(e.u || [], e.uf),
    contextRequired: Boolean(e.r),
    wrapperWhen: patterns(e.ww || [], e.wwf),
    benignWhen: patterns(e.bw || [], e.bwf),
    prior: e.p || 0,
  }));
  return Object.assign(entries, { weights: index.weights, confident: index.confident });
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

/** Whether two of the spans share no character, as score._apart: only then does a second signature corroborate. */
function apart(spans) {
  return spans.some((a, i) => spans.slice(i + 1).some((b) => a.end <= b.start || b.end <= a.start));
}

function score(entry, flat, lower, w) {
  const strong = entry.signatures.map((p) => search(p, flat, lower)).filter(Boolean);
  const hits = strong.concat(entry.weakSignatures.map((p) => search(p, flat, lower)).filter(Boolean));
  if (!hits.length) return null;
  const spans = hits.map((m) => ({ start: m.index, end: m.index + m.length, kind: "signature" }));
  const strength = Math.max(...spans.map((s) => Math.min(1, (s.end - s.start) / w.strong_chars)));
  const start = Math.min(...spans.map((s) => s.start));
  let value = w.base + w.strength * strength;
  if (apart(spans)) value += w.corroboration;
  let found = null;
  if (entry.unless.length && first(entry.unless, flat, lower)) {
    value -= w.context_missing;
  } else if (entry.context.length) {
    found = first(entry.context, flat, lower);
    if (found) {
      spans.push({ start: found.index, end: found.index + found.length, kind: "context" });
      value += w.context_found;
    } else {
      value -= w.context_missing;
    }
  }
  if ((entry.contextRequired || !strong.length) && !found) value -= w.context_required;
  value += w.early * (1 - start / flat.length);
  return { value, start, spans };
}

/** Every entry whose signatures match the normalised log, best first. */
export function rank(entries, normalised) {
  const flat = normalised.flat;
  if (!flat) return [];
  const lower = asciiLower(flat);
  const found = [];
  for (const entry of entries) {
    const result = score(entry, flat, lower, entries.weights);
    if (result) found.push({ entry, ...result });
  }
  for (const f of found) f.wrapped = f.entry.wrapper || Boolean(f.entry.wrapperWhen.length && first(f.entry.wrapperWhen, flat, lower));
  const hasRoot = found.some((f) => !f.wrapped);
  const prior = new Map(found.map((f) => [f.entry.id, f.entry.prior]));
  const matches = found.map(({ entry, value, start, spans, wrapped }) => {
    const benign = Boolean(entry.benignWhen.length && first(entry.benignWhen, flat, lower));
    const s = round3((wrapped && hasRoot) || benign ? value * entries.weights.wrapper_factor : value);
    spans.sort((a, b) => a.start - b.start || a.end - b.end);
    return { id: entry.id, title: entry.title, url: entry.url, score: s, confident: s >= entries.confident, wrapper: wrapped, spans, first: start };
  });
  matches.sort((a, b) => b.score - a.score || a.first - b.first || prior.get(b.id) - prior.get(a.id) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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

// ---- reading the whole log: facts, error lines, possibly related entries ----
// The twins of matcher/facts.py, related.py and analyse.py; every pattern and
// constant comes from the indexes (matcher.json, related.json).

/** The facts table of matcher.json, compiled. */
export function compileFacts(table) {
  return table.map(([kind, label, pattern, value]) => ({ kind, label, rx: RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE), value }));
}

/** The first fact of each kind, as facts.read_facts. */
export function readFacts(flat, compiled) {
  const found = new Map();
  for (const { kind, label, rx, value } of compiled) {
    if (found.has(kind)) continue;
    const m = rx.matcher(flat);
    if (m.find()) {
      const text = value.replace(/\{(\d)\}/g, (_, n) => m.group(Number(n)) ?? "");
      found.set(kind, { kind, label, value: text, start: m.start(), end: m.end() });
    }
  }
  return [...found.values()];
}

const numbers = (version) => (version.split("+")[0].match(/[0-9]+/g) || []).slice(0, 4).map(Number);

function compare(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0) ? 1 : -1;
  }
  return 0;
}

/** As facts.version_in: true, false, or null when either side cannot be read. */
export function versionIn(spec, version) {
  const have = numbers(version);
  if (!have.length) return null;
  for (const clause of spec.split(",")) {
    const m = /^\s*(>=|<=|==|!=|~=|>|<|=)?\s*([0-9][0-9A-Za-z.*+-]*)\s*$/.exec(clause);
    const want = m ? numbers(m[2]) : [];
    if (!want.length) return null;
    const a = m[2].includes("*") ? have.slice(0, want.length) : [...have, ...Array(Math.max(0, want.length - have.length)).fill(0)];
    const b = [...want, ...Array(Math.max(0, a.length - want.length)).fill(0)];
    const c = compare(a, b);
    const ok = { ">=": c >= 0, "~=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0, "==": c === 0, "=": c === 0, "!=": c !== 0 }[m[1] || "=="];
    if (!ok) return false;
  }
  return true;
}

/** related.json, compiled: its line patterns, stop words and per-entry weights. */
export function compileRelated(index) {
  return {
    index,
    errorLine: RE2JS.compile(index.error_line),
    exceptionLine: RE2JS.compile(index.exception_line),
    frameLine: RE2JS.compile(index.frame_line),
    stop: new Set(index.stop),
    entries: index.entries.map((e) => {
      const weights = new Map();
      for (let i = 0; i < e.w.length; i += 2) weights.set(index.terms[e.w[i]], e.w[i + 1]);
      return { entry: e, weights };
    }),
  };
}

/** As related.tokens. */
export function tokens(text, stop) {
  return (asciiLower(text).match(/[a-z0-9]+/g) || []).filter((t) => t.length >= 2 && t.length <= 40 && !/^[0-9]+$/.test(t) && !stop.has(t));
}

/** As related.error_lines. */
export function errorLines(lines, related) {
  const { max_lines: most, max_line: longest } = related.index;
  const exceptions = lines.filter((l) => related.exceptionLine.matcher(l.trim()).find());
  const candidates = (exceptions.length ? [exceptions[exceptions.length - 1]] : []).concat(lines.filter((l) => related.errorLine.matcher(l).find()));
  const picked = [];
  for (const raw of candidates) {
    const line = raw.trim().slice(0, longest);
    if (line && !picked.includes(line)) picked.push(line);
    if (picked.length === most) break;
  }
  if (picked.every((l) => asciiLower(l).includes(related.index.traceback_header))) {
    picked.push(...lastFrame(lines, related).filter((l) => !picked.includes(l)).slice(0, most - picked.length));
  }
  return picked;
}

/** As related.last_frame. */
export function lastFrame(lines, related) {
  const { max_line: longest, package_dirs: packageDirs } = related.index;
  for (let at = lines.length - 1; at >= 0; at--) {
    const m = related.frameLine.matcher(lines[at].trim());
    if (!m.find()) continue;
    let parts = m.group(1).replaceAll("\\", "/").split("/").filter((p) => p);
    let inside = -1;
    parts.forEach((p, i) => { if (packageDirs.includes(p)) inside = i; });
    parts = inside >= 0 ? parts.slice(inside + 1) : parts.slice(-2);
    if (parts.length && parts[parts.length - 1].endsWith(".py")) parts[parts.length - 1] = parts[parts.length - 1].slice(0, -3);
    const out = [[...parts, m.group(2)].join(" ").slice(0, longest)];
    const code = at + 1 < lines.length ? lines[at + 1].trim() : "";
    if (code.replace(/^[\^~ ]+|[\^~ ]+$/g, "") && !related.frameLine.matcher(code).find()) out.push(code.slice(0, longest));
    return out;
  }
  return [];
}

/** As related.rank_related. */
export function rankRelated(related, lines, exclude = new Set()) {
  const { top, min_terms: minTerms, min_score: minScore } = related.index;
  const query = [...new Set(lines.flatMap((l) => tokens(l, related.stop)))];
  const found = [];
  for (const { entry, weights } of related.entries) {
    if (exclude.has(entry.id)) continue;
    const shared = query.filter((t) => weights.has(t));
    const score = shared.reduce((sum, t) => sum + weights.get(t), 0);
    if (shared.length >= minTerms && score >= minScore) {
      shared.sort((a, b) => weights.get(b) - weights.get(a) || (a < b ? -1 : a > b ? 1 : 0));
      found.push({ id: entry.id, title: entry.title, url: entry.url, score, words: shared.slice(0, 6) });
    }
  }
  found.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return found.slice(0, top);
}

/** Both indexes compiled once: what analyse() needs. */
export function compileBundle(matcherIndex, relatedIndex) {
  return { matcher: matcherIndex, entries: compileIndex(matcherIndex), facts: compileFacts(matcherIndex.facts), related: compileRelated(relatedIndex) };
}

/** As analyse.analyse: confident and possible matches, possibly related entries, error lines, facts, versions. */
export function analyse(text, bundle, top = Infinity) {
  const normalised = normalise(text);
  const matches = rank(bundle.entries, normalised).slice(0, top);
  const lines = normalised.flat ? errorLines(normalised.lines, bundle.related) : [];
  const related = rankRelated(bundle.related, lines, new Set(matches.map((m) => m.id)));
  const facts = readFacts(normalised.flat, bundle.facts);
  const found = new Map(facts.map((f) => [f.kind, f.value.split(" ")[0].replace(/^b+/, "")]));
  const applies = new Map(bundle.matcher.entries.filter((e) => e.a).map((e) => [e.id, e.a]));
  const versions = {};
  for (const m of matches) {
    for (const [tool, spec] of sortedRanges(applies.get(m.id) || {})) {
      if (found.has(tool)) { versions[m.id] = versionIn(spec, found.get(tool)); break; }
    }
  }
  return { normalised, matches, related, lines, facts, versions, steps: stepHints(bundle.matcher, matches, found) };
}

const sortedRanges = (ranges) => Object.entries(ranges).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** As analyse._steps: each match's versioned steps that the log's version decides, this version's first. */
function stepHints(matcher, matches, found) {
  const versioned = new Map(matcher.entries.filter((e) => e.st).map((e) => [e.id, e.st]));
  const out = {};
  for (const m of matches) {
    const hints = [];
    for (const [number, title, ranges] of versioned.get(m.id) || []) {
      for (const [tool, spec] of sortedRanges(ranges)) {
        const fits = found.has(tool) ? versionIn(spec, found.get(tool)) : null;
        if (fits !== null) { hints.push({ number, title, tool, fits }); break; }
      }
    }
    if (hints.length) out[m.id] = hints.sort((a, b) => (a.fits === b.fits ? a.number - b.number : a.fits ? -1 : 1));
  }
  return out;
}
