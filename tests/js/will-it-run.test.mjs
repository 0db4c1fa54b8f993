// vram.mjs against the same hand-computed cases as tests/test_vram.py, and the
// URL state of the page round-tripping through its query string.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as vram from "../../site_src/javascripts/vram.mjs";
import { readState, writeState, resolve, DEFAULTS } from "../../site_src/javascripts/will-it-run-state.mjs";

const CASES = JSON.parse(readFileSync(new URL("../calculator_cases.json", import.meta.url), "utf8"));
// The facts the build exports (errorkb.calculator.facts); test_vram.py keeps this copy current.
const FACTS = vram.configure(JSON.parse(readFileSync(new URL("../calculator_facts.json", import.meta.url), "utf8")));
const archOf = (c) => (typeof c.arch === "string" ? CASES.archs[c.arch] : c.arch);

for (const c of CASES.cases) {
  test(c.name, () => {
    const call = c.call || "evaluate";
    const out = call === "kv_cache_for" ? { value: vram.kvCacheFor(archOf(c), ...c.args) }
      : call === "scenario" ? { value: vram.scenario(...c.args) }
      : vram[call](archOf(c), c.scenario);
    const { errors_contain: text, ...expect } = c.expect;
    if (text !== undefined) assert.ok(out.errors.some((m) => m.includes(text)), JSON.stringify(out.errors));
    for (const [key, value] of Object.entries(expect)) assert.deepEqual(out[key], value, `${key} (${c.why})`);
  });
}

test("more context never needs less memory", () => {
  for (const [name, arch] of Object.entries(CASES.archs)) {
    for (const engine of vram.ENGINES) {
      let previous = null;
      for (const context of [1, 255, 257, 4096, 5000, 16385, 65536, 131072]) {
        if (context > arch.native_context) continue;
        const out = vram.evaluate(arch, { engine, context, seqs: 2, vram_bytes: 80 * vram.GIB });
        assert.ok(out.ok, `${name} ${engine}: ${out.errors}`);
        if (previous) assert.ok(out.total_bytes >= previous.total_bytes, `${name} ${engine} ${context}`);
        previous = out;
      }
    }
  }
});

test("a smaller cache type never needs more", () => {
  const order = { vllm: ["fp8", "bf16"], llamacpp: ["q4_0", "q8_0", "f16"], ollama: ["q4_0", "q8_0", "f16"], sglang: ["fp8", "bf16"] };
  for (const arch of Object.values(CASES.archs)) {
    for (const [engine, kinds] of Object.entries(order)) {
      const sizes = kinds.map((kv_dtype) => vram.evaluate(arch, { engine, kv_dtype, context: 8192, vram_bytes: 80 * vram.GIB }).kv_cache_bytes);
      assert.deepEqual([...sizes].sort((a, b) => a - b), sizes);
    }
  }
});

test("nonsense never turns into NaN", () => {
  const arch = CASES.archs["llama-3.1-8b"];
  for (const context of [NaN, Infinity, -1, 0, 1.5, "8192", undefined, null]) {
    const out = vram.evaluate(arch, { engine: "llamacpp", context, vram_bytes: 24 * vram.GIB });
    assert.equal(out.ok, false);
    assert.ok(out.errors.length > 0);
    assert.ok(!JSON.stringify(out).includes("NaN"));
  }
});

test("the page state survives its own URL", () => {
  const state = { ...DEFAULTS, model: "gemma-3-27b", engine: "ollama", quant: "Q5_K_M", kv: "q8_0", context: 32768, seqs: 3,
    gpu: "", vram: 12.5, gpus: 2, util: 0.85 };
  const query = writeState(state);
  assert.deepEqual(readState(new URLSearchParams(query)), state);
});

test("custom architectures survive the URL too", () => {
  const state = { ...DEFAULTS, model: "custom", custom: { layers: 40, hidden_size: 5120, attention_heads: 40, kv_heads: 8,
    head_dim: 128, vocab_size: 151936, params_total: 14800000000, native_context: 40960, sliding_window: null,
    layer_pattern: null, kv_lora_rank: null, qk_rope_head_dim: null } };
  assert.deepEqual(readState(new URLSearchParams(writeState(state))), state);
});

test("the MLA cache choice survives the URL and reaches the scenario", () => {
  const state = { ...DEFAULTS, model: "deepseek-r1", engine: "ollama", mla: "latent" };
  const query = writeState(state);
  assert.ok(query.includes("mla=latent"));
  assert.deepEqual(readState(new URLSearchParams(query)), state);
  assert.ok(!writeState({ ...state, mla: "auto" }).includes("mla="));
  const data = { models: { "deepseek-r1": { arch: { native_dtype: "fp8" }, title: "DeepSeek R1", hf_repo: "x/y" } }, gpus: {} };
  assert.equal(resolve(state, data).scenario.mla_full_heads, false);
  assert.equal(resolve({ ...state, mla: "heads" }, data).scenario.mla_full_heads, true);
  assert.equal("mla_full_heads" in resolve({ ...state, mla: "auto" }, data).scenario, false);
});

test("a hand-edited URL cannot inject anything but known values", () => {
  const state = readState(new URLSearchParams("e=<script>&q=Q4_K_M&ctx=-3&n=abc&kv=nope&mla=yes"));
  assert.equal(state.engine, DEFAULTS.engine);
  assert.equal(state.kv, DEFAULTS.kv);
  assert.equal(state.mla, DEFAULTS.mla);
  assert.ok(Number.isNaN(state.context) || state.context === -3);
});

test("the page's default utilisation is the engine default the facts give", () => {
  assert.equal(DEFAULTS.util, FACTS.numbers.VLLM_DEFAULT_UTIL);
});
