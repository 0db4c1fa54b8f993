// The header's search box, on Pagefind's index (built by hooks/errorkb/build/search.py).
// Pagefind is loaded on the first focus of the box, and each search downloads
// only the index chunks its words need; it indexes identifiers, flags and
// key:value pairs whole and by part, so queries go to it as typed. Facets: tool, platform, category,
// severity. Keyboard: "/" or "s" opens the box, arrows move through the
// results, Escape closes. mount() is bound to Material's document$.

import { el, siteBase } from "./dom.mjs";

export const FACETS = [["tool", "Tool"], ["platform", "Platform"], ["category", "Category"], ["severity", "Severity"]];
const SHOWN = 10;
const RERANKED = 20; // results whose data is read before the best SHOWN are chosen

/** Lower-cased words of a query or title: identifiers, versions and flags stay whole ("llama.cpp", "--fit"). */
export function words(text) {
  return (String(text ?? "").toLowerCase().match(/[a-z0-9_+.-]+/g) || []).map((w) => w.replace(/^[.]+|[.]+$/g, "")).filter(Boolean);
}

/**
 * For a query of two or more words: results whose title holds the query's words in a row come first, then
 * those whose title holds every word apart, each in Pagefind's order; the rest keep theirs. Pagefind matches
 * words by prefix too, so "cuda" also scores "CUDA0" and "cudaMalloc" in a page's text; a visitor who types
 * an error's words means the page named by them, and most of all the page named by that very message.
 */
export function titleFirst(query, shown) {
  const asked = words(query);
  const wanted = [...new Set(asked)];
  if (wanted.length < 2) return shown;
  const phrase = ` ${asked.join(" ")} `;
  const tiers = [[], [], []];
  for (const data of shown) {
    const title = words(data?.meta?.title);
    const have = new Set(title);
    tiers[` ${title.join(" ")} `.includes(phrase) ? 0 : wanted.every((w) => have.has(w)) ? 1 : 2].push(data);
  }
  return tiers.flat();
}

/** Only the selected facets, as Pagefind's filters option wants them. */
export function activeFilters(selected) {
  return Object.fromEntries(Object.entries(selected).filter(([, value]) => value));
}

/** Pagefind's excerpt (HTML with <mark>) as plain text parts: [text, marked, text, ...]. */
export function excerptParts(html) {
  return String(html ?? "").split(/<mark>|<\/mark>/).map((part) => part.replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&amp;/g, "&"));
}

let pagefindPromise = null;

function loadPagefind(base) {
  pagefindPromise ??= import(new URL("pagefind/pagefind.js", base).href).then(async (pagefind) => {
    await pagefind.options({ baseUrl: base.pathname, excerptLength: 24 });
    await pagefind.init();
    return pagefind;
  });
  return pagefindPromise;
}

function renderFacets(box, filters, onChange) {
  const group = box.querySelector(".kb-search__facets");
  const controls = FACETS.filter(([key]) => filters[key] && Object.keys(filters[key]).length).map(([key, name]) => {
    const select = el("select", { id: `kb-facet-${key}`, "data-facet": key }, el("option", { value: "" }, `Any ${name.toLowerCase()}`));
    for (const [value, count] of Object.entries(filters[key]).sort(([a], [b]) => a.localeCompare(b))) {
      select.append(el("option", { value }, `${value} (${count})`));
    }
    select.addEventListener("change", onChange);
    return el("span", { class: "kb-search__facet" }, el("label", { for: `kb-facet-${key}` }, name), select);
  });
  group.replaceChildren(...controls);
}

function renderResult(data) {
  const article = el("article", { class: "md-search-result__article md-typeset" }, el("h1", {}, data.meta?.title || data.url));
  const tags = [...(data.filters?.category || []), ...(data.filters?.tool || [])];
  if (tags.length) article.append(el("p", { class: "kb-search__tags" }, tags.join(" · ")));
  const excerpt = el("p", {});
  excerptParts(data.excerpt).forEach((part, i) => excerpt.append(i % 2 ? el("mark", {}, part) : part));
  article.append(excerpt);
  return el("li", { class: "md-search-result__item" }, el("a", { href: data.url, class: "md-search-result__link" }, article));
}

export function mount() {
  const box = document.querySelector("[data-kb-search]");
  if (!box || box.dataset.mounted) return;
  box.dataset.mounted = "1";
  const base = siteBase();
  const toggle = document.getElementById("__search");
  const input = box.querySelector(".md-search__input");
  const meta = box.querySelector(".md-search-result__meta");
  const list = box.querySelector(".md-search-result__list");
  const selected = {};
  let generation = 0;
  const open = (state) => { if (toggle) toggle.checked = state; };

  async function run() {
    const mine = ++generation;
    const query = input.value.trim();
    const filters = activeFilters(selected);
    if (!query && !Object.keys(filters).length) {
      list.replaceChildren();
      meta.textContent = "Type an error message, a flag or an identifier";
      return;
    }
    const pagefind = await loadPagefind(base);
    const search = await pagefind.debouncedSearch(query || null, { filters }, 150);
    if (search === null || mine !== generation) return;
    const read = await Promise.all(search.results.slice(0, RERANKED).map((r) => r.data()));
    if (mine !== generation) return;
    const shown = titleFirst(query, read).slice(0, SHOWN);
    list.replaceChildren(...shown.map(renderResult));
    const count = search.results.length;
    meta.textContent = count ? `${count} matching ${count === 1 ? "page" : "pages"}${count > SHOWN ? `, the best ${SHOWN} shown` : ""}` : "No matching pages";
  }
  const fail = (error) => { meta.textContent = `Search could not load (${error.message}).`; };
  const search = () => run().catch(fail);

  // The facets' indexes are loaded only when the visitor opens them: the first search stays small.
  let facetsShown = false;
  box.querySelector(".kb-search__filters")?.addEventListener("toggle", (event) => {
    if (!event.target.open || facetsShown) return;
    facetsShown = true;
    loadPagefind(base).then((pagefind) => pagefind.filters()).then((filters) => renderFacets(box, filters, (change) => {
      selected[change.target.dataset.facet] = change.target.value;
      search();
    })).catch((error) => { facetsShown = false; fail(error); });
  });
  input.addEventListener("focus", () => {
    open(true);
    loadPagefind(base).catch(fail);
  });
  input.addEventListener("input", search);
  box.querySelector("form").addEventListener("submit", (event) => { event.preventDefault(); search(); });
  box.querySelector("form").addEventListener("reset", () => setTimeout(search, 0));
  toggle?.addEventListener("change", () => { if (toggle.checked) input.focus(); });
  // A link such as "Search the site for this line" (?q=...) opens the box with its query.
  const asked = new URLSearchParams(location.search).get("q");
  if (asked) {
    input.value = asked.slice(0, 300);
    open(true);
    search();
  }
  list.addEventListener("click", (event) => { if (event.target.closest("a")) open(false); });
  box.addEventListener("keydown", (event) => {
    const links = [...list.querySelectorAll("a")];
    const at = links.indexOf(document.activeElement);
    if (event.key === "Escape") {
      open(false);
      input.blur();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && links.length && (at >= 0 || event.target === input)) {
      event.preventDefault();
      const next = event.key === "ArrowDown" ? at + 1 : at - 1;
      (next < 0 ? input : links[Math.min(next, links.length - 1)]).focus();
    }
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
    if (typing || event.ctrlKey || event.metaKey || event.altKey || (event.key !== "/" && event.key !== "s")) return;
    event.preventDefault();
    open(true);
    input.focus();
  });
}

if (typeof window !== "undefined" && window.document$) window.document$.subscribe(() => mount());
