// matcher.mjs and normalise.mjs against the cases tests/test_matcher.py runs
// through the Python matcher, plus the browser-only helpers and bounded time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compileIndex, excerpt, match, rank, round3 } from "../../site_src/javascripts/matcher.mjs";
import { MAX_INPUT, normalise } from "../../site_src/javascripts/normalise.mjs";
import { activeFilters, excerptParts } from "../../site_src/javascripts/search.mjs";

const CASES = JSON.parse(readFileSync(new URL("../matcher_cases.json", import.meta.url), "utf8"));
const entries = compileIndex(CASES.index);

for (const c of CASES.normalise) {
  test(`normalise: ${c.name}`, () => assert.equal(normalise(c.log).flat, c.flat));
}

for (const c of CASES.rank) {
  test(`rank: ${c.name}`, () => {
    assert.deepEqual(match(c.log, entries).matches.map((m) => [m.id, m.score, m.confident]), c.expect);
  });
}

for (const c of CASES.spans) {
  test(`spans: ${c.name}`, () => {
    const found = match(c.log, CASES.index).matches.find((m) => m.id === c.id);
    assert.deepEqual(found.spans.map((s) => [s.start, s.end, s.kind]), c.spans);
  });
}

test("the weights and the threshold are read from the index, not from the module", () => {
  const log = "CUDA out of memory. Tried to allocate";
  const base = match(log, entries).matches[0];
  const raised = compileIndex({ ...CASES.index, weights: { ...CASES.index.weights, base: CASES.index.weights.base + 0.1 } });
  assert.equal(match(log, raised).matches[0].score, round3(base.score + 0.1));
  const strict = compileIndex({ ...CASES.index, confident: 0.99 });
  assert.equal(match(log, strict).matches[0].confident, false);
  assert.throws(() => compileIndex({ ...CASES.index, weights: undefined }), /no weights/);
});

test("rounding is half up, as in Python's round3", () => {
  assert.equal(round3(0.7465), 0.747);
  assert.equal(round3(0.1234), 0.123);
});

test("top limits the answer; nothing matched means an empty list", () => {
  assert.deepEqual(match("CUDA out of memory. Tried to allocate", entries, 1).matches.map((m) => m.id), ["oom-load"]);
  assert.deepEqual(rank(entries, normalise("nothing to see")), []);
});

test("an excerpt marks the match and cuts at word boundaries", () => {
  const flat = "one two three four CUDA out of memory five six seven";
  const [before, marked, after] = excerpt(flat, { start: 19, end: 37 }, 8);
  assert.equal(marked, "CUDA out of memory");
  assert.equal(before, "\u2026four ");
  assert.equal(after, " five\u2026");
});

test("pathological pastes return in bounded time", () => {
  const noise = Array.from({ length: 2_000_000 }, (_, i) => String.fromCharCode((i * 7919) % 256)).join("");
  const pastes = {
    "one 100 KB line": "ab/:_-0 ".repeat(12_500),
    "2 MB of binary noise": noise,
    "a message repeated without end": "nccl error ".repeat(50_000),
    "escapes and entities": "\\n\\u001b[&amp;".repeat(60_000),
    "one long path": "/" + "/a".repeat(200_000),
  };
  for (const [name, text] of Object.entries(pastes)) {
    const started = performance.now();
    const { normalised } = match(text, entries);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 2000, `${name}: ${elapsed.toFixed(0)} ms`);
    assert.ok(normalised.flat.length <= MAX_INPUT + 1, name);
  }
});

test("search helpers: only chosen facets, excerpts as text", () => {
  assert.deepEqual(activeFilters({ tool: "vLLM", platform: "", severity: undefined }), { tool: "vLLM" });
  assert.deepEqual(excerptParts("a &lt;b&gt; <mark>CUDA_ERROR</mark> &amp; c<script>x</script>"), ["a <b> ", "CUDA_ERROR", " & cx"]);
});

test("patterns that would hang a backtracking engine run in linear time on 1 MB logs", async () => {
  const { RE2JS } = await import("re2js");
  const cases = JSON.parse(readFileSync(new URL("../adversarial_signatures.json", import.meta.url), "utf8"));
  const [unit, count] = Object.values(cases.logs)[0];
  const logs = [unit.repeat(count)];
  const started = performance.now();
  for (const p of cases.patterns.slice(0, 2)) {
    const rx = RE2JS.compile(p, RE2JS.CASE_INSENSITIVE);
    for (const log of logs) rx.matcher(log).find();
  }
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 60_000, `${elapsed.toFixed(0)} ms`);
});
