// Calculator links in the browser: the twin of hooks/errorkb/calculator/links.py.
// Input: a plan with its verdict and the normalised scenario; output: the ids
// of the KB entries for the failure it runs into, most likely first.
import { F } from "./facts.mjs";

export function predictedErrors(out, s) {
  if (out.verdict === "fits") return [];
  const E = F.error_ids;
  const oom = E[`oom_${s.vendor}`] || E.oom_nvidia;
  const ids = [];
  if (s.engine === "vllm") {
    if (out.available_bytes < out.weights_bytes + out.overhead_bytes) ids.push(oom);
    if (out.kv_pool_bytes <= 0) ids.push(E.vllm_no_blocks);
    else if (!out.starts) ids.push(E.vllm_max_seq_len);
    if (out.starts && !out.fits_all) ids.push(E.vllm_max_seq_len);
    return ids;
  }
  if (s.engine === "sglang") {
    if (out.kv_pool_tokens > 0 && !out.starts) return [oom]; // aiter's decode workspace finds no room after the pool
    if (out.weights_bytes > out.available_bytes - out.overhead_parts["runtime context"]) ids.push(oom);
    ids.push(E.sglang_memory);
    return ids;
  }
  if (s.engine === "llamacpp") ids.push(s.vendor === "nvidia" ? E.llamacpp_malloc : oom);
  else ids.push(E.ollama_memory, oom);
  if (out.kv_cache_bytes > out.weights_bytes && s.vendor === "nvidia") ids.push(E.long_context);
  return ids;
}
