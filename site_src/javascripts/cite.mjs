// "Copy for email" on every entry and every step, and "Copy link" on every step.
// The text is not made here: the build writes it into the page (data-kb-email),
// from the same function as `kb cite` and the API's snippets, so the three agree.

/** The snippet the build wrote into an element, or "" when there is none. */
export function snippetOf(element) {
  return element?.dataset?.kbEmail ?? "";
}

/** The absolute link to one step: the entry's URL with the step's anchor. */
export function stepUrl(entryUrl, anchor) {
  return entryUrl.replace(/#.*$/, "") + "#" + anchor;
}

/** Visible text of an element without Material's permalink sign. */
export function cleanText(text) {
  return text.replace(/¶\s*$/, "").replace(/\s+/g, " ").trim();
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

function button(label, onClick, status) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "md-button kb-copy";
  b.textContent = label;
  b.addEventListener("click", async () => {
    const ok = await onClick();
    status.textContent = ok ? "Copied to the clipboard." : "Could not copy; select the text by hand.";
  });
  return b;
}

export function mount(root = document) {
  const cite = root.querySelector(".kb-cite");
  if (!cite || cite.dataset.kbMounted) return;
  cite.dataset.kbMounted = "1";
  const status = document.createElement("p");
  status.className = "kb-copy-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  const url = cite.dataset.kbUrl;
  if (snippetOf(cite)) cite.append(button("Copy for email", () => copy(snippetOf(cite)), status));
  cite.append(button("Copy short link", () => copy(cite.dataset.kbShort), status));
  cite.append(status);
  for (const links of root.querySelectorAll(".kb-step-links")) {
    const anchor = links.querySelector("a.kb-step-anchor")?.getAttribute("href")?.slice(1);
    if (!anchor) continue;
    const what = cleanText(links.querySelector("a.kb-step-anchor").textContent).replace(/^Link to /, "");
    const b = button("Copy link", () => copy(stepUrl(url, anchor)), status);
    b.setAttribute("aria-label", `Copy link to ${what}`);
    links.append(" ", b);
    if (snippetOf(links)) {
      const e = button("Copy for email", () => copy(snippetOf(links)), status);
      e.setAttribute("aria-label", `Copy ${what} for email`);
      links.append(" ", e);
    }
  }
}

/** A table wider than the page scrolls sideways; keyboard users must be able to reach it to scroll it. */
export function focusableScrollers(root) {
  for (const wrap of root.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])")) {
    wrap.setAttribute("tabindex", "0");
    wrap.setAttribute("role", "region");
    wrap.setAttribute("aria-label", "Table (scrolls sideways)");
  }
}

if (typeof document !== "undefined" && typeof window !== "undefined" && window.document$) {
  window.document$.subscribe(() => {
    mount(document);
    // The theme wraps tables after the page is swapped in, so look again once it has.
    focusableScrollers(document);
    window.requestAnimationFrame(() => focusableScrollers(document));
  });
}
