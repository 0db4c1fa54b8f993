// "Paste your error": the matcher in the browser, and the box that uses it.
// rank() and match() compute exactly what hooks/errorkb/matcher/score.py computes
// (read its docstring for how an entry scores); tests/matcher_cases.json
// holds the cases both must pass. mount() runs on every page load and does
// nothing on pages without <div id="kb-paste">. Nothing leaves the page.
import { normalise } from "./normalise.mjs";

const STRONG_CHARS = 20;
const [BASE, STRENGTH, CORROBORATION, CONTEXT_FOUND, CONTEXT_MISSING, EARLY] = [0.5, 0.3, 0.04, 0.12, 0.08, 0.04];
const WRAPPER_FACTOR = 0.5;
export const CONFIDENT = 0.7;

/** The index (api/v1/matcher.json) with its patterns compiled; "i" without "u", like Python's IGNORECASE|ASCII. */
export function compileIndex(index) {
  return index.entries.map((e) => ({
    id: e.id, title: e.title, url: e.url, wrapper: Boolean(e.w),
    signatures: e.s.map((p) => new RegExp(p, "i")),
    context: (e.c || []).map((p) => new RegExp(p, "i")),
  }));
}

/** Round half up to 3 decimals, as matcher.round3 does. */
export const round3 = (value) => Math.floor(value * 1000 + 0.5) / 1000;

function first(patterns, flat) {
  for (const rx of patterns) {
    const m = rx.exec(flat);
    if (m) return m;
  }
  return null;
}

function score(entry, flat) {
  const hits = entry.signatures.map((rx) => rx.exec(flat)).filter(Boolean);
  if (!hits.length) return null;
  const spans = hits.map((m) => ({ start: m.index, end: m.index + m[0].length, kind: "signature" }));
  const strength = Math.max(...spans.map((s) => Math.min(1, (s.end - s.start) / STRONG_CHARS)));
  const start = Math.min(...spans.map((s) => s.start));
  let value = BASE + STRENGTH * strength;
  if (hits.length > 1) value += CORROBORATION;
  if (entry.context.length) {
    const found = first(entry.context, flat);
    if (found) {
      spans.push({ start: found.index, end: found.index + found[0].length, kind: "context" });
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
  const found = [];
  for (const entry of entries) {
    const result = score(entry, flat);
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

// ---- the paste box ----------------------------------------------------------

let indexPromise = null; // one download per page load, shared by every mount

function siteBase() {
  const config = document.getElementById("__config");
  const base = config ? JSON.parse(config.textContent).base : ".";
  return new URL(base.replace(/\/?$/, "/"), location.href);
}

function loadIndex(base) {
  indexPromise ??= fetch(new URL("api/v1/matcher.json", base)).then((r) => {
    if (!r.ok) throw new Error(`matcher index: HTTP ${r.status}`);
    return r.json();
  }).then(compileIndex);
  return indexPromise;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

function label(m) {
  if (m.confident) return ["kb-paste__badge--confident", "Strong match"];
  if (m.wrapper) return ["kb-paste__badge--wrapper", "Reported by an earlier error"];
  return ["kb-paste__badge--possible", "Possible match"];
}

function renderResult(m, flat, base) {
  const [cls, text] = label(m);
  const link = el("a", { href: new URL(m.url, base).href, class: "kb-paste__link" }, m.title);
  const parts = el("p", { class: "kb-paste__meta" }, el("span", { class: `kb-paste__badge ${cls}` }, text),
    ` score ${m.score.toFixed(2)}`);
  const item = el("li", { class: "kb-paste__result" }, link, parts);
  for (const span of m.spans.filter((s) => s.kind === "signature").slice(0, 2)) {
    const [before, marked, after] = excerpt(flat, span);
    item.append(el("pre", { class: "kb-paste__excerpt" }, el("code", {}, before, el("mark", {}, marked), after)));
  }
  return item;
}

function render(box, result, base) {
  const { normalised, matches } = result;
  const list = box.querySelector(".kb-paste__results");
  const status = box.querySelector(".kb-paste__status");
  list.replaceChildren(...matches.map((m) => renderResult(m, normalised.flat, base)));
  status.textContent = !normalised.flat ? ""
    : matches.length ? `${matches.length} ${matches.length === 1 ? "entry matches" : "entries match"} this log, best first.`
      : "No entry matches this log. Try the search box with the error line, or browse the categories below.";
}

export function mount() {
  const box = document.getElementById("kb-paste");
  if (!box || box.dataset.mounted) return;
  box.dataset.mounted = "1";
  const base = siteBase();
  const input = el("textarea", { id: "kb-paste-input", rows: "8", spellcheck: "false", autocomplete: "off",
    "aria-describedby": "kb-paste-help", placeholder: "Traceback (most recent call last): ..." });
  const form = el("form", { class: "kb-paste__form", "aria-label": "Match an error log" },
    el("label", { for: "kb-paste-input", class: "kb-paste__label" }, "Paste your error"),
    el("p", { id: "kb-paste-help", class: "kb-paste__help" },
      "Paste the whole log or traceback, as it is. It is matched in your browser and never sent anywhere."),
    input,
    el("p", { class: "kb-paste__actions" },
      el("button", { type: "submit", class: "md-button md-button--primary" }, "Find the fix"), " ",
      el("button", { type: "reset", class: "md-button" }, "Clear")));
  box.replaceChildren(form, el("p", { class: "kb-paste__status", role: "status", "aria-live": "polite" }),
    el("ol", { class: "kb-paste__results", "aria-label": "Matching entries" }));
  let timer = 0;
  const run = () => {
    clearTimeout(timer);
    loadIndex(base).then((entries) => render(box, match(input.value, entries), base)).catch((error) => {
      box.querySelector(".kb-paste__status").textContent = `The matcher could not load (${error.message}).`;
    });
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
  form.addEventListener("reset", () => { clearTimeout(timer); setTimeout(run, 0); });
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 300); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); run(); }
  });
  input.addEventListener("focus", () => loadIndex(base).catch(() => {}), { once: true });
  // Arriving from the header link: focus the box once the browser has scrolled to it
  // (scrolling to a fragment resets the focus, so doing it earlier does not hold).
  const focusIfTarget = () => { if (location.hash === "#kb-paste") input.focus(); };
  window.addEventListener("hashchange", focusIfTarget);
  if (document.readyState === "complete") setTimeout(focusIfTarget, 0);
  else window.addEventListener("load", () => setTimeout(focusIfTarget, 0), { once: true });
}

if (typeof window !== "undefined" && window.document$) window.document$.subscribe(() => mount());
