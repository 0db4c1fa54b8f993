// The header search box's own logic (site_src/javascripts/search.mjs): the order it shows Pagefind's results in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { titleFirst, words } from "../../site_src/javascripts/search.mjs";

const page = (url, title) => ({ url, meta: { title } });

test("words keep identifiers, versions and flags whole", () => {
  assert.deepEqual(words("CUDA out of memory"), ["cuda", "out", "of", "memory"]);
  assert.deepEqual(words("llama.cpp: cudaMalloc failed (--fit)."), ["llama.cpp", "cudamalloc", "failed", "--fit"]);
});

test("a page whose title holds every word of the query comes first, others keep Pagefind's order", () => {
  const shown = [
    page("/malloc/", "llama.cpp: cudaMalloc failed: out of memory / failed to allocate CUDA0 buffer"),
    page("/unknown/", "CUDA error: unknown error"),
    page("/long/", "CUDA out of memory with long prompts or long context"),
    page("/load/", "CUDA out of memory while loading the model weights"),
  ];
  assert.deepEqual(titleFirst("CUDA out of memory", shown).map((d) => d.url), ["/long/", "/load/", "/malloc/", "/unknown/"]);
  assert.deepEqual(titleFirst("cuda   OUT of Memory", shown).map((d) => d.url), ["/long/", "/load/", "/malloc/", "/unknown/"]);
});

test("a title that holds the query's words in a row comes before one that holds them apart", () => {
  const shown = [
    page("/ct2/", "faster-whisper / WhisperX / CTranslate2: RuntimeError: CUDA failed with error out of memory"),
    page("/unknown/", "CUDA error: unknown error"),
    page("/train/", "CUDA out of memory during training or fine-tuning"),
    page("/load/", "CUDA out of memory while loading the model weights"),
  ];
  assert.deepEqual(titleFirst("CUDA out of memory", shown).map((d) => d.url), ["/train/", "/load/", "/ct2/", "/unknown/"]);
  assert.deepEqual(titleFirst("CUDA failed with error out of memory", shown).map((d) => d.url), ["/ct2/", "/unknown/", "/train/", "/load/"]);
  // "out of" in a row is not "out of memory": the words must follow each other whole
  assert.deepEqual(titleFirst("out of memory", [page("/x/", "out of memoryless"), page("/y/", "out of memory")]).map((d) => d.url), ["/y/", "/x/"]);
});

test("one-word queries and queries no title holds leave the order alone", () => {
  const shown = [page("/a/", "NCCL error"), page("/b/", "nccl")];
  assert.deepEqual(titleFirst("nccl", shown), shown);
  assert.deepEqual(titleFirst("expandable_segments:True", shown), shown);
  assert.deepEqual(titleFirst("segmentation fault", shown), shown);
  assert.deepEqual(titleFirst("", []), []);
});
