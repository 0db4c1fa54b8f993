"""Calculator links: the KB entries a plan that does not fit runs into.

Input: a plan with its verdict (see ``verdict.evaluate``) and the normalised
scenario. Output: entry ids, most likely failure first.
"""

from __future__ import annotations

from errorkb.calculator.facts import ERROR_IDS


def predicted_errors(out: dict, s: dict) -> list[str]:
    """Ids of the KB entries for the failure this plan runs into."""
    if out["verdict"] == "fits":
        return []
    oom = ERROR_IDS.get(f"oom_{s['vendor']}", ERROR_IDS["oom_nvidia"])
    ids: list[str] = []
    if s["engine"] == "vllm":
        pool = out["kv_pool_bytes"]
        if out["available_bytes"] < out["weights_bytes"] + out["overhead_bytes"]:
            ids.append(oom)
        if pool <= 0:
            ids.append(ERROR_IDS["vllm_no_blocks"])
        elif not out["starts"]:
            ids.append(ERROR_IDS["vllm_max_seq_len"])
        if out["starts"] and not out["fits_all"]:
            ids.append(ERROR_IDS["vllm_max_seq_len"])
        return ids
    if s["engine"] == "sglang":
        if out["kv_pool_tokens"] > 0 and not out["starts"]:
            return [oom]  # aiter's decode workspace finds no room after the pool
        if out["weights_bytes"] > out["available_bytes"] - out["overhead_parts"]["runtime context"]:
            ids.append(oom)  # the weights alone do not load
        ids.append(ERROR_IDS["sglang_memory"])
        return ids
    if s["engine"] == "llamacpp":
        ids.append(ERROR_IDS["llamacpp_malloc"] if s["vendor"] == "nvidia" else oom)
    else:
        ids.append(ERROR_IDS["ollama_memory"])
        ids.append(oom)
    if out["kv_cache_bytes"] > out["weights_bytes"] and s["vendor"] == "nvidia":
        ids.append(ERROR_IDS["long_context"])
    return ids
