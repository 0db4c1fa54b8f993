// Calculator verdict in the browser: the twin of hooks/errorkb/calculator/verdict.py.
// Input: an architecture and a scenario; output: the memory plan of the engine,
// the verdict, the largest context and concurrency that fit, and the KB errors
// it predicts ({ok: false, errors} for nonsense input). Both languages run over
// tests/calculator_cases.json.
import { C, F } from "./facts.mjs";
import { checkInputs } from "./inputs.mjs";
import { predictedErrors } from "./links.mjs";
import {
  cdiv, fitLayers, ggufGpuWeights, llamacppCompute, llamacppFit, llamacppKv, ollamaDefaultCtx, ollamaGraph, ollamaKv,
  sglangAiterFraction, sglangAiterWorkspace, sglangCell, sglangMaxRunning, sglangMemFraction, sglangReserved, vllmBatched, vllmBlocksPerRequest, vllmGroups,
  sglangWeights, vllmOverhead, vllmPage, vllmWeights,
} from "./engines.mjs";

const sum = (obj) => Object.values(obj).reduce((a, b) => a + b, 0);

/** llama.cpp, and Ollama since it runs llama-server: llama.cpp's cells; Ollama before 0.30: its own estimate. */
function ggufParts(arch, s, ctx, seqs) {
  const n = s.gpus;
  const weights = ggufGpuWeights(arch, s.quant);
  let kv, parts;
  if (s.engine === "ollama" && s.ollama_legacy) {
    kv = ollamaKv(arch, ctx, seqs, s.kv_dtype);
    parts = { "graph (Ollama estimate)": ollamaGraph(arch, ctx, seqs) };
  } else {
    kv = llamacppKv(arch, ctx, seqs, s.kv_dtype, s.llamacpp_pad, Boolean(s.llamacpp_mla_v), s.mla_full_heads);
    parts = { "compute buffer": llamacppCompute(arch) * n };
  }
  if (s.vendor !== "apple") {
    if (s.engine === "llamacpp") parts["runtime context"] = C.RUNTIME_CONTEXT * n;
    else parts["minimum free memory"] = C.OLLAMA_RESERVE * n;
  }
  return { weights, kv, parts };
}

export const fitApplies = (s) => s.engine === "llamacpp" || (s.engine === "ollama" && !s.ollama_legacy);
/** What the engine does on its own (errorkb.calculator.verdict.engine_defaults). */
export function engineDefaults(arch, s, out) {
  if (!fitApplies(s)) return {};
  const budget = out.available_bytes - C.LLAMACPP_FIT_MARGIN * s.gpus;
  const useAt = (ctx) => { const p = ggufParts(arch, s, ctx, s.seqs); return [p.weights + p.kv, sum(p.parts)]; };
  const found = { fit_gpu_layers: fitLayers(arch.layers, budget, out.weights_bytes + out.kv_cache_bytes, out.overhead_bytes) };
  if (s.engine === "llamacpp") found.llamacpp_defaults = llamacppFit(arch.layers, arch.native_context, budget, useAt);
  else found.ollama_defaults = { num_ctx: ollamaDefaultCtx(s.usable_bytes, arch.native_context), num_parallel: C.OLLAMA_NUM_PARALLEL };
  return found;
}

export function plan(arch, s) {
  const { engine, context: ctx, seqs, gpus: n } = s;
  const out = { engine, layers: arch.layers, kv_pool_bytes: null, kv_pool_tokens: null, gpu_layers: null, max_concurrency: null };
  let weights, kv, parts, usable;
  if (engine === "vllm") {
    usable = Math.floor(s.vram_bytes * s.gpu_memory_utilization);
    let [batched, maxSeqs] = vllmBatched(s.vram_bytes, s.gpu_id);
    batched = s.max_num_batched_tokens || batched;
    maxSeqs = s.max_num_seqs || maxSeqs;
    parts = vllmOverhead(arch, batched, maxSeqs, n, Boolean(s.vllm_v0));
    weights = cdiv(vllmWeights(arch, s.quant), n);
    const pool = usable - weights - sum(parts);
    const page = vllmPage(arch, s.kv_dtype, n);
    const [groupSize, gFull, gSlide] = vllmGroups(arch);
    const blocks = Math.floor(Math.floor(Math.max(pool, 0) / page) / groupSize);
    const perReq = vllmBlocksPerRequest(arch, ctx, batched);
    const one = groupSize * page * perReq;
    Object.assign(out, { kv_pool_bytes: Math.max(pool, 0), kv_pool_tokens: Math.floor(blocks / (gFull + gSlide)) * C.VLLM_BLOCK,
      max_concurrency: blocks / perReq, kv_one_request_bytes: one, batched_tokens: batched });
    kv = one * seqs;
    const starts = pool > 0 && one <= pool;
    out.fits_all = starts && perReq * seqs <= blocks;
    out.starts = starts;
    weights *= n; kv *= n; usable *= n;
    parts = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v * n]));
  } else if (engine === "sglang") {
    const graphs = s.vendor === "nvidia";
    const aiter = s.vendor === "amd"; // the default attention backend on AMD Instinct
    const mla = Boolean(arch.mla);
    const fraction = s.mem_fraction_static || sglangMemFraction(s.vram_bytes, n, mla, graphs);
    const effective = aiter ? sglangAiterFraction(fraction, ctx) : fraction;
    const freeAtStart = s.vram_bytes - C.RUNTIME_CONTEXT;
    const staticBytes = Math.floor(freeAtStart * effective);
    weights = cdiv(sglangWeights(arch, s.quant, s.vendor, s.compute_capability), n);
    const pool = staticBytes - weights;
    const cell = sglangCell(arch, s.kv_dtype, n);
    const tokens = Math.floor(Math.max(pool, 0) / cell);
    const running = sglangMaxRunning(tokens, ctx);
    const workspace = aiter ? sglangAiterWorkspace(arch, running, ctx, n) : 0; // allocated after the pool
    Object.assign(out, { kv_pool_bytes: Math.max(pool, 0), kv_pool_tokens: tokens, kv_one_request_bytes: cell * ctx,
      mem_fraction_static: fraction, mem_fraction_effective: effective, max_running_requests: running,
      sglang_reserved_mib: sglangReserved(s.vram_bytes / C.MIB, n, mla, graphs), aiter_workspace_bytes: workspace,
      max_concurrency: tokens / ctx });
    out.starts = tokens > 0 && workspace <= freeAtStart - staticBytes;
    out.fits_all = out.starts && tokens >= ctx * seqs && seqs <= running;
    parts = { "kept outside --mem-fraction-static": Math.max(freeAtStart - staticBytes - workspace, 0) * n,
      "runtime context": C.RUNTIME_CONTEXT * n };
    if (aiter && workspace) parts["aiter decode workspace"] = workspace * n;
    kv = cell * ctx * seqs * n;
    weights *= n;
    usable = s.vram_bytes * n;
  } else {
    ({ weights, kv, parts } = ggufParts(arch, s, ctx, seqs));
    usable = s.usable_bytes;
    out.mla_full_heads = s.mla_full_heads;
  }
  const overhead = sum(parts);
  const total = weights + kv + overhead;
  Object.assign(out, { weights_bytes: weights, kv_cache_bytes: kv, overhead_bytes: overhead, overhead_parts: parts,
    total_bytes: total, available_bytes: usable });
  if (engine === "vllm") {
    out.fits = out.starts;
  } else if (engine === "sglang") {
    out.fits = out.starts && out.kv_pool_tokens >= ctx;
  } else {
    out.fits = total <= usable;
    if (!out.fits) {
      const perLayer = (weights + kv) / arch.layers;
      out.gpu_layers = Math.max(0, Math.min(arch.layers, Math.floor((usable - overhead) / perLayer)));
    }
  }
  return out;
}

function largest(lo, hi, ok) {
  if (hi < lo || !ok(lo)) return lo - 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The normalised scenario and its plan, or the input problems as {ok: false, ...} (verdict._checked_plan). */
function checkedPlan(arch, scenario) {
  const [s, errors, warnings] = checkInputs(arch, scenario);
  if (errors.length) return [s, { ok: false, errors, warnings }];
  const out = plan(arch, s);
  Object.assign(out, { ok: true, errors: [], warnings });
  return [s, out];
}

/** Plan and verdict without the searches for the limits (what the fit tables of the pages need). */
export function assess(arch, scenario) {
  const [s, out] = checkedPlan(arch, scenario);
  if (out.ok) out.verdict = verdict(out, s);
  return out;
}

/** The whole answer: plan, verdict, limits, failure it predicts. */
export function evaluate(arch, scenario) {
  const [s, out] = checkedPlan(arch, scenario);
  if (!out.ok) return out;
  const fitsWith = (ctx, seqs) => {
    const p = plan(arch, { ...s, context: ctx, seqs });
    return s.engine === "vllm" ? p.fits_all : p.fits;
  };
  const limit = arch.native_context;
  if (s.engine === "sglang" && s.vendor === "amd") { // aiter: the fraction and the workspace follow the context
    out.max_context = Math.max(0, largest(1, Math.min(limit, out.kv_pool_tokens), (c) => fitsWith(c, 1)));
    out.max_seqs = Math.min(Math.floor(out.kv_pool_tokens / s.context), out.max_running_requests);
  } else if (s.engine === "sglang") {
    out.max_context = Math.min(limit, out.kv_pool_tokens);
    out.max_seqs = Math.min(Math.floor(out.kv_pool_tokens / s.context), out.max_running_requests);
  } else if (s.engine === "vllm") {
    out.max_context = Math.max(0, largest(1, limit, (c) => plan(arch, { ...s, context: c, seqs: 1 }).starts));
    out.max_seqs = out.starts ? Math.floor(out.max_concurrency) : 0;
  } else {
    out.max_context = Math.max(0, largest(1, limit, (c) => fitsWith(c, s.seqs)));
    out.max_seqs = Math.max(0, largest(1, C.MAX_SEQS, (k) => fitsWith(s.context, k)));
  }
  out.verdict = verdict(out, s);
  out.error_ids = predictedErrors(out, s);
  out.release = F.releases[s.engine].release;
  Object.assign(out, engineDefaults(arch, s, out));
  out.scenario = s;
  return out;
}

export function verdict(out, s) {
  if (!out.fits) return "no";
  if ((s.engine === "vllm" || s.engine === "sglang") && !out.fits_all) return "tight";
  if (s.engine === "sglang") return out.kv_cache_bytes > out.kv_pool_bytes * s.gpus * (1 - C.TIGHT_MARGIN) ? "tight" : "fits";
  if (out.total_bytes > out.available_bytes * (1 - C.TIGHT_MARGIN)) return "tight";
  if (fitApplies(s) && out.total_bytes > out.available_bytes - C.LLAMACPP_FIT_MARGIN * s.gpus) return "tight";
  return "fits";
}

/** KV bytes one GPU holds for `seqs` sequences of `context` tokens, as the engine sizes them. */
export function kvCacheFor(arch, engine, kv, context, seqs = 1) {
  if (engine === "llamacpp" || engine === "ollama") return llamacppKv(arch, context, seqs, kv);
  if (engine === "sglang") return sglangCell(arch, kv, 1) * context * seqs;
  const groupSize = vllmGroups(arch)[0];
  return groupSize * vllmPage(arch, kv, 1) * vllmBlocksPerRequest(arch, context, C.VLLM_BATCHED_SMALL) * seqs;
}

/** What one more token of context costs once sliding windows are full. */
export function kvCachePerToken(arch, engine, kv) {
  const n = C.PER_TOKEN_PROBE;
  return (kvCacheFor(arch, engine, kv, 2 * n) - kvCacheFor(arch, engine, kv, n)) / n;
}
