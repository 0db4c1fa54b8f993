// "Copy for email" on every entry and "Copy link" on every step: the same plain
// text as `kb cite` and the API's `email` field (title, summary, link).

/** The text a support engineer pastes into a reply. */
export function emailText(title, summary, url) {
  return [title.trim(), summary.trim(), url.trim()].filter(Boolean).join("\n") + "\n";
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
  const title = cleanText(root.querySelector("article h1")?.textContent ?? "");
  const summary = cleanText(root.querySelector(".kb-summary")?.textContent ?? "");
  cite.append(button("Copy for email", () => copy(emailText(title, summary, url)), status));
  cite.append(button("Copy short link", () => copy(cite.dataset.kbShort), status));
  cite.append(status);
  for (const links of root.querySelectorAll(".kb-step-links")) {
    const anchor = links.querySelector("a.kb-step-anchor")?.getAttribute("href")?.slice(1);
    if (!anchor) continue;
    const b = button("Copy link", () => copy(stepUrl(url, anchor)), status);
    b.setAttribute("aria-label", `Copy link to ${cleanText(links.querySelector("a.kb-step-anchor").textContent).replace(/^Link to /, "")}`);
    links.append(" ", b);
  }
}

if (typeof document !== "undefined" && typeof window !== "undefined" && window.document$) {
  window.document$.subscribe(() => mount(document));
}
