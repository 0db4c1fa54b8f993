// The "Paste your error" box: mount() runs on every page load and does nothing
// on pages without <div id="kb-paste">. The matcher (matcher.mjs, with its
// RE2 engine) and its index are fetched only when the box is used. Nothing
// leaves the page.

import { el, siteBase } from "./dom.mjs";

let indexPromise = null; // one download per page load, shared by every mount

function fetchJson(url) {
  return fetch(url).then((r) => {
    if (!r.ok) throw new Error(`${url.pathname}: HTTP ${r.status}`);
    return r.json();
  });
}

function loadIndex(base) {
  indexPromise ??= Promise.all([import("./matcher.mjs"), fetchJson(new URL("api/v1/matcher.json", base)),
    fetchJson(new URL("api/v1/related.json", base))])
    .then(([matcher, index, related]) => ({ matcher, bundle: matcher.compileBundle(index, related) }));
  return indexPromise;
}

function label(m) {
  if (m.confident) return ["kb-paste__badge--confident", "Strong match"];
  if (m.wrapper) return ["kb-paste__badge--wrapper", "Reported by an earlier error"];
  return ["kb-paste__badge--possible", "Possible match"];
}

function renderResult(excerpt, m, flat, base, versions, hints, facts) {
  const [cls, text] = label(m);
  const link = el("a", { href: new URL(m.url, base).href, class: "kb-paste__link" }, m.title);
  const parts = el("p", { class: "kb-paste__meta" }, el("span", { class: `kb-paste__badge ${cls}` }, text),
    ` score ${m.score.toFixed(2)}`);
  const item = el("li", { class: "kb-paste__result" }, link, parts);
  for (const span of m.spans.filter((s) => s.kind === "signature").slice(0, 2)) {
    const [before, marked, after] = excerpt(flat, span);
    item.append(el("pre", { class: "kb-paste__excerpt" }, el("code", {}, before, el("mark", {}, marked), after)));
  }
  if (versions[m.id] === false) {
    item.append(el("p", { class: "kb-paste__note" }, "The version in this log is outside the versions this entry was written for: read its notes on older and newer releases."));
  }
  item.append(...renderSteps(m, hints[m.id] || [], facts, base));
  return item;
}

/** The entry's steps for the version in the log first (as kb match prints them), then those for other versions. */
function renderSteps(m, hints, facts, base) {
  const found = (tool) => { const f = facts.find((x) => x.kind === tool); return f ? `${f.label} ${f.value}` : tool; };
  const parts = [];
  for (const fits of [true, false]) {
    const chosen = hints.filter((h) => h.fits === fits);
    if (!chosen.length) continue;
    const tools = [...new Set(chosen.map((h) => found(h.tool)))].join(", ");
    parts.push(el("p", { class: "kb-paste__steps-heading" }, fits ? `For ${tools} (in this log), start with:` : `Not for ${tools}:`),
      el("ul", { class: `kb-paste__steps${fits ? "" : " kb-paste__steps--other"}` }, ...chosen.map((h) =>
        el("li", {}, el("a", { href: new URL(`${m.url}#step-${h.number}`, base).href }, `Step ${h.number}: ${h.title}`)))));
  }
  return parts;
}

function renderRelated(r, base) {
  return el("li", { class: "kb-paste__related" }, el("a", { href: new URL(r.url, base).href }, r.title),
    el("span", { class: "kb-paste__words" }, ` (in common: ${r.words.join(", ")})`));
}

function renderFacts(facts) {
  const list = el("dl", { class: "kb-paste__facts" });
  for (const f of facts) list.append(el("dt", {}, f.label), el("dd", {}, f.value));
  return list;
}

function render(box, excerpt, result, base) {
  const { normalised, matches, related, lines, facts, versions, steps } = result;
  const list = box.querySelector(".kb-paste__results");
  const status = box.querySelector(".kb-paste__status");
  const more = box.querySelector(".kb-paste__more");
  list.replaceChildren(...matches.map((m) => renderResult(excerpt, m, normalised.flat, base, versions, steps, facts)));
  const parts = [];
  if (facts.length) parts.push(el("p", { class: "kb-paste__heading" }, "What the log says"), renderFacts(facts));
  if (related.length) {
    parts.push(el("p", { class: "kb-paste__heading" }, matches.length ? "Also possibly related" : "Possibly related"),
      el("ul", { class: "kb-paste__related-list" }, ...related.map((r) => renderRelated(r, base))));
  }
  if (lines.length) {
    const search = new URL(base);
    search.searchParams.set("q", lines[0].slice(0, 200));
    parts.push(el("p", { class: "kb-paste__search" }, "Search the site for the error line: ",
      el("a", { href: search.href }, lines[0].length > 120 ? `${lines[0].slice(0, 120)}\u2026` : lines[0])));
  }
  more.replaceChildren(...parts);
  status.textContent = !normalised.flat ? ""
    : matches.length ? `${matches.length} ${matches.length === 1 ? "entry matches" : "entries match"} this log, best first.`
      : related.length ? "No entry's signature matches this log; these entries share words with its error lines."
        : "No entry matches this log. Search the site with the error line, or browse the categories below.";
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
    el("ol", { class: "kb-paste__results", "aria-label": "Matching entries" }), el("div", { class: "kb-paste__more" }));
  let timer = 0;
  const run = () => {
    clearTimeout(timer);
    loadIndex(base).then(({ matcher, bundle }) => render(box, matcher.excerpt, matcher.analyse(input.value, bundle), base)).catch((error) => {
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
