import { test } from "node:test";
import assert from "node:assert/strict";
import { snippetOf, stepUrl, cleanText } from "../../site_src/javascripts/cite.mjs";

test("the snippet is the build's text, kept as it is", () => {
  const text = "T\n\n    cmd --flag \"x\"\n\nhttps://x/errors/a/#step-1\n";
  assert.equal(snippetOf({ dataset: { kbEmail: text } }), text);
});

test("an element without a snippet gives nothing to copy", () => {
  assert.equal(snippetOf({ dataset: {} }), "");
  assert.equal(snippetOf(null), "");
});

test("step links replace any anchor already on the URL", () => {
  assert.equal(stepUrl("https://x/errors/a/#cause", "step-2"), "https://x/errors/a/#step-2");
});

test("permalink signs and runs of space are dropped", () => {
  assert.equal(cleanText("  CUDA   out of memory¶ "), "CUDA out of memory");
});
