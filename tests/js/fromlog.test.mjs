// fromlog.mjs against the same real-log cases as tests/test_fromlog.py: what it reads from each
// log and the settings it proposes, with the patterns the build exports (tests/fromlog_patterns.json,
// kept current by test_fromlog.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as vram from "../../site_src/javascripts/vram.mjs";
import * as fromlog from "../../site_src/javascripts/fromlog.mjs";

const read = (name) => JSON.parse(readFileSync(new URL(`../${name}`, import.meta.url), "utf8"));
vram.configure(read("calculator_facts.json"));
fromlog.configure(read("fromlog_patterns.json"));
const CASES = read("fromlog_cases.json").cases;

const same = (a, b) => (typeof a === "number" && typeof b === "number" ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)) : a === b);

for (const c of CASES) {
  test(c.name, () => {
    const r = fromlog.readLog(c.log);
    for (const [key, want] of Object.entries(c.expect)) {
      assert.ok(same(r[key] ?? null, want), `${key}: read ${JSON.stringify(r[key])}, want ${JSON.stringify(want)}`);
    }
    if (!c.proposal) return;
    const arch = c.arch ?? null;
    const out = fromlog.propose(r, arch, null, arch ? arch.native_context : null);
    assert.equal(out.starts, c.proposal.starts);
    assert.deepEqual(out.proposals.map((p) => p.change), c.proposal.changes);
    if (c.proposal.context !== undefined) assert.equal(out.proposals[0].context, c.proposal.context, c.proposal.why);
    if (out.proposals.length && out.proposals[0].change === "context") {
      assert.equal(out.proposals[0].model_limit_unknown ?? false, c.proposal.model_limit_unknown ?? false);
    }
    if (c.proposal.room_gib !== undefined) assert.ok(Math.abs(out.room_bytes / 2 ** 30 / c.proposal.room_gib - 1) <= 0.005, `room ${out.room_bytes}`);
    const budget = fromlog.poolFromTokens(r, arch);
    for (const p of out.proposals) assert.ok(p.fits && fromlog.fits(budget, arch, { ...p, kv0: out.asked.kv }, null), p.change);
  });
}

test("a proposal's command carries its settings", () => {
  const c = CASES.find((x) => x.name.startsWith("vLLM V0"));
  const out = fromlog.propose(fromlog.readLog(c.log));
  const byChange = Object.fromEntries(out.proposals.map((p) => [p.change, p.command]));
  assert.match(byChange.context, /--max-model-len 23648/);
  assert.match(byChange.util, /--max-model-len 29000 --gpu-memory-utilization 0\.93/);
  assert.match(byChange.kv, /--kv-cache-dtype fp8/);
  assert.match(byChange.gpus, /--tensor-parallel-size 2/);
});

test("names resolve like the command line's", () => {
  const models = { "llama-3.1-70b": { hf_repo: "meta-llama/Llama-3.1-70B-Instruct" }, "qwen3-14b": { hf_repo: "Qwen/Qwen3-14B" } };
  assert.equal(fromlog.resolveModel("neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8", models), "llama-3.1-70b");
  assert.equal(fromlog.resolveModel("/home/user/DeepSeek-V2-Lite-Chat/", models), null);
  assert.equal(fromlog.resolveGpu("GeForce RTX 4090", { "rtx-4090": { title: "NVIDIA GeForce RTX 4090" } }), "rtx-4090");
});

test("a llama.cpp log of an MLA GGUF without MLA keys is sized with full heads, as in Python", () => {
  const arch = { layers: 61, kv_heads: 128, head_dim: 192, sliding_window: null, layer_pattern: null,
    mla: { kv_lora_rank: 512, qk_rope_head_dim: 64, qk_nope_head_dim: 128, v_head_dim: 128 } };
  const s = { context: 8192, seqs: 1, kv: "f16", gpus: 1 };
  assert.equal(fromlog.kvNeed({ engine: "llamacpp", n_head_kv: 1 }, arch, s), 61 * 8192 * 576 * 2);
  assert.equal(fromlog.kvNeed({ engine: "llamacpp", n_head_kv: 128 }, arch, s), 61 * 8192 * 128 * (192 + 128) * 2);
});
