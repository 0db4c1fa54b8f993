// "Will it run?" page, its rendering: the verdict, the bar, the limits, the
// command and the working, from one evaluation of the state (render). The
// working's sentences (stepsFor, defaultsFor) are pure and exported for
// node --test; the command is calculator/commands.mjs's, the same text as
// `kb will-it-run` prints.
import * as vram from "./vram.mjs";
import { resolve } from "./will-it-run-state.mjs";

export const gib = (n) => `${(n / vram.GIB).toFixed(2)} GiB`;
export const fmt = (n) => n.toLocaleString("en-US");

/** The working, one sentence per stage, from the numbers of the result. */
export function stepsFor(arch, s, out) {
  const kinds = vram.layerKinds(arch);
  const q = vram.QUANTS[s.quant];
  const bits = q.embed_bpw === q.bpw ? `${q.bpw} bits each` : `${q.bpw} bits each, ${q.embed_bpw} for the embeddings`;
  let where = `: ${gib(out.weights_bytes)} over ${s.gpus} GPU(s).`;
  if (s.engine === "llamacpp" || s.engine === "ollama") {
    where = arch.tie_word_embeddings
      ? `: ${gib(out.weights_bytes)}, all on the GPU (the output layer reuses the embedding matrix).`
      : `: ${gib(vram.weightsBytes(arch, s.quant))}, of which ${gib(out.weights_bytes)} on the GPU (the token embedding stays in system memory).`;
  }
  const steps = [`Weights: ${fmt(arch.params_total)} parameters in ${s.quant} (${bits})${where}`];
  const full = kinds.filter((k) => k !== "sliding").length;
  const sliding = kinds.length - full;
  const [kDim, vDim] = arch.mla ? vram.mlaHeadDims(arch) : [0, 0];
  const perLayer = arch.mla && s.mla_full_heads
    ? `${arch.kv_heads} heads x (${kDim} K + ${vDim} V) values (the GGUF has no MLA keys, as in the Ollama library, so no latent cache)`
    : arch.mla ? `${arch.mla.kv_lora_rank} + ${arch.mla.qk_rope_head_dim} latent values`
      : `2 x ${arch.kv_heads} KV heads x ${arch.head_dim}`;
  if (s.engine === "vllm") {
    steps.push(`vLLM may use ${s.gpu_memory_utilization} of each GPU: ${gib(out.available_bytes / s.gpus)} per GPU.`);
    steps.push(`Left for the KV pool after weights, the profiled activation peak and non-torch memory: ${gib(out.kv_pool_bytes)} per GPU,`
      + ` in blocks of ${vram.C.VLLM_BLOCK} tokens of ${perLayer} (${s.kv_dtype}) per layer: ${fmt(out.kv_pool_tokens)} tokens.`);
    steps.push(`One request of ${fmt(s.context)} tokens needs ${gib(out.kv_one_request_bytes)} per GPU`
      + (sliding ? ` (${sliding} sliding-window layers keep only ${fmt(arch.sliding_window)} tokens + one batch)` : "")
      + `; the pool holds ${out.max_concurrency.toFixed(2)} of them at once.`);
  } else if (s.engine === "sglang") {
    const reserved = Object.entries(out.sglang_reserved_mib).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${fmt(v)}`).join(" + ");
    steps.push(`SGLang keeps ${reserved} MiB outside its static part, so --mem-fraction-static is ${out.mem_fraction_static}`
      + (s.mem_fraction_static ? " (set by you)." : " (its default for this card)."));
    steps.push(`Static part minus weights: a pool of ${gib(out.kv_pool_bytes)} per GPU, one token per page of ${perLayer} (${s.kv_dtype}) x ${arch.layers} layers:`
      + ` ${fmt(out.kv_pool_tokens)} tokens (max_total_num_tokens); --max-running-requests defaults to ${fmt(out.max_running_requests)}.`);
    steps.push(`${fmt(s.seqs)} request(s) of ${fmt(s.context)} tokens need ${gib(out.kv_cache_bytes)}`
      + (sliding ? " (sliding-window layers are counted in full)" : "") + `; the pool holds ${out.max_concurrency.toFixed(2)} of them at once.`);
  } else {
    const cells = s.engine === "ollama" && s.ollama_legacy ? `${fmt(s.context)} tokens x ${s.seqs} (Ollama's estimate)`
      : `${fmt(vram.pad(s.context, s.llamacpp_pad))} cells per sequence (padded to ${s.llamacpp_pad})`;
    steps.push(`KV cache: ${full} layers x ${cells} x ${perLayer} in ${s.kv_dtype}`
      + (sliding ? `, plus ${sliding} sliding-window layers that keep about ${fmt(arch.sliding_window)} tokens` : "")
      + ` x ${s.seqs} sequence(s) = ${gib(out.kv_cache_bytes)}.`);
  }
  for (const [name, size] of Object.entries(out.overhead_parts)) steps.push(`${name[0].toUpperCase()}${name.slice(1)}: ${gib(size)}.`);
  steps.push(`Total ${gib(out.total_bytes)} against ${gib(out.available_bytes)} usable.`);
  if (out.gpu_layers !== null) steps.push(`Only ${out.gpu_layers} of ${out.layers} layers fit on the GPU; the rest would run on the CPU.`);
  return [...steps, ...defaultsFor(arch, s, out)];
}

/** What the engine does by itself, in sentences (the command above pins the choice). */
export function defaultsFor(arch, s, out) {
  const lines = [];
  const layersNote = (n) => (n < arch.layers ? `, ${n} of ${arch.layers} layers on the GPU` : ", every layer on the GPU");
  if (out.llamacpp_defaults) {
    const d = out.llamacpp_defaults;
    lines.push(`With its defaults (no -c, no -ngl, --fit on keeping ${gib(vram.C.LLAMACPP_FIT_MARGIN)} free per GPU) llama.cpp would run`
      + ` ${fmt(d.context)} tokens per sequence${d.context_reduced ? ` instead of the model's ${fmt(arch.native_context)}` : ""}${layersNote(d.gpu_layers)}.`);
    lines.push(`With -c as set and --fit on it keeps the context${layersNote(out.fit_gpu_layers)}; --fit off in the command pins your choice.`);
  }
  if (out.ollama_defaults) {
    const d = out.ollama_defaults;
    lines.push(`Ollama's own default for this much GPU memory is num_ctx ${fmt(d.num_ctx)} with OLLAMA_NUM_PARALLEL=${d.num_parallel};`
      + ` it starts llama-server with -c num_ctx x parallel and lets --fit place the layers${layersNote(out.fit_gpu_layers)} at the context asked.`
      + " When a load with the default context runs out of memory, Ollama retries once with a smaller one (32768, then 4096).");
  }
  if (s.engine === "vllm") lines.push(`--max-model-len auto would pick ${fmt(out.max_context)} tokens, the largest length one request can hold.`);
  lines.push(`These numbers follow ${out.release}.`);
  return lines;
}

const VERDICT = { fits: "Fits", tight: "Tight: it starts, with little to spare", no: "Does not fit" };

export function render(root, $, data, state) {
  const r = resolve(state, data);
  const out = vram.evaluate(r.arch, r.scenario);
  const verdict = $("verdict");
  const result = $("result");
  if (!out.ok) {
    result.dataset.verdict = "error";
    verdict.textContent = "Check the inputs";
    $("messages").replaceChildren(...out.errors.map((m) => Object.assign(document.createElement("li"), { textContent: m })));
    $("answer").hidden = true;
    return;
  }
  const s = out.scenario;
  result.dataset.verdict = out.verdict;
  verdict.textContent = `${VERDICT[out.verdict]}: ${r.title} on ${r.label} with ${vram.ENGINE_NAMES[s.engine]}`;
  $("messages").replaceChildren(...out.warnings.map((m) => Object.assign(document.createElement("li"), { textContent: m })));
  $("answer").hidden = false;
  const scale = Math.max(out.total_bytes, out.available_bytes);
  const seg = { weights: out.weights_bytes, kv: out.kv_cache_bytes, overhead: out.overhead_bytes,
    free: Math.max(0, out.available_bytes - out.total_bytes) };
  for (const [key, bytes] of Object.entries(seg)) {
    $(`bar-${key}`).style.width = `${(100 * bytes) / scale}%`;
    $(`val-${key}`).textContent = gib(bytes);
    $(`val-${key}`).dataset.bytes = String(bytes);
  }
  $("bar-limit").style.left = `${(100 * out.available_bytes) / scale}%`;
  $("val-usable").textContent = gib(out.available_bytes);
  $("bar").setAttribute("aria-label", `Weights ${gib(seg.weights)}, KV cache ${gib(seg.kv)}, overhead ${gib(seg.overhead)}; usable ${gib(out.available_bytes)}`);
  $("max-context").textContent = `${fmt(out.max_context)} tokens`;
  $("max-seqs").textContent = `${fmt(out.max_seqs)} at ${fmt(s.context)} tokens each`;
  const pooled = s.engine === "vllm" || s.engine === "sglang";
  $("pool").textContent = pooled ? `${gib(out.kv_pool_bytes)} per GPU, ${fmt(out.kv_pool_tokens)} tokens` : "";
  $("pool-row").hidden = !pooled;
  $("command").textContent = vram.commandFor(r.name, r.hfRepo, s, out);
  $("command-note").textContent = !out.fits && out.max_context >= 1 ? `With the largest context that fits (${fmt(out.max_context)}):`
    : !out.fits ? "This will not start as set; the command shows the settings for reference:" : "";
  const base = new URL(root.dataset.api, window.location.href);
  $("errors").replaceChildren(...out.error_ids.map((id) => {
    const li = document.createElement("li");
    const a = Object.assign(document.createElement("a"), { href: new URL(`../../${data.errors[id]}`, base).href, textContent: id });
    li.append(a);
    return li;
  }));
  $("errors-block").hidden = out.error_ids.length === 0;
  $("steps").replaceChildren(...stepsFor(r.arch, s, out).map((t) => Object.assign(document.createElement("li"), { textContent: t })));
}
