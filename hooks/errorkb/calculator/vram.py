"""The calculator's public face: one import for callers (pages, CLI, bench, tests).

Input/output: see the modules it gathers. facts (constants) · inputs (checks
and defaults) · weights · layers · llamacpp · ollama · vllm · sglang (one module per
engine) · verdict (plan, verdict, limits) · links (KB entries of a failure).
The ES module site_src/javascripts/vram.mjs is the browser twin of this package; its parts in
site_src/javascripts/calculator/ carry the names of the modules here they mirror.
"""

from __future__ import annotations

from errorkb.calculator.facts import *  # noqa: F401,F403 - the constants, by their names
from errorkb.calculator.inputs import check_arch, check_inputs, default_quant  # noqa: F401
from errorkb.calculator.layers import cdiv, layer_kinds, pad, row_bytes  # noqa: F401
from errorkb.calculator.links import predicted_errors  # noqa: F401
from errorkb.calculator.llamacpp import llamacpp_compute, llamacpp_kv  # noqa: F401
from errorkb.calculator.ollama import ollama_graph, ollama_kv  # noqa: F401
from errorkb.calculator.sglang import (sglang_aiter_fraction, sglang_aiter_workspace, sglang_cell,  # noqa: F401
                                      sglang_max_running, sglang_mem_fraction, sglang_prefill_graph_sizes,
                                      sglang_reserved, sglang_tier)
from errorkb.calculator.verdict import assess, evaluate, kv_cache_for, kv_cache_per_token, plan, verdict  # noqa: F401
from errorkb.calculator.vllm import (vllm_batched, vllm_blocks_per_request, vllm_groups, vllm_overhead,  # noqa: F401
                                     vllm_page)
from errorkb.calculator.weights import embedding_params, gguf_gpu_weights, sglang_weights, tensor_classes, vllm_weights, weights_bytes  # noqa: F401,E501
