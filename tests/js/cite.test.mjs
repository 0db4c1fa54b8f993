import { test } from "node:test";
import assert from "node:assert/strict";
import { emailText, stepUrl, cleanText } from "../../site_src/javascripts/cite.mjs";

test("email text is title, summary and link on three lines", () => {
  assert.equal(emailText(" T ", "S.", "https://x/errors/a/"), "T\nS.\nhttps://x/errors/a/\n");
});

test("a missing summary leaves no blank line", () => {
  assert.equal(emailText("T", "", "https://x/"), "T\nhttps://x/\n");
});

test("step links replace any anchor already on the URL", () => {
  assert.equal(stepUrl("https://x/errors/a/#cause", "step-2"), "https://x/errors/a/#step-2");
});

test("permalink signs and runs of space are dropped", () => {
  assert.equal(cleanText("  CUDA   out of memory¶ "), "CUDA out of memory");
});
