// DOM helpers shared by the page scripts (paste.mjs, search.mjs): building
// elements from text (never HTML) and finding the site's root.

/** An element with attributes and children; children given as strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

/** The site's root URL, from the base Material writes into the page's configuration. */
export function siteBase() {
  const config = document.getElementById("__config");
  const base = config ? JSON.parse(config.textContent).base : ".";
  return new URL(base.replace(/\/?$/, "/"), location.href);
}
