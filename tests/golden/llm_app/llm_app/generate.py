"""Greedy decoding for llm_app models and HF checkpoints."""

import time

import torch

from .model import HAS_FLASH_ATTN, default_dtype


@torch.inference_mode()
def greedy_generate(model, input_ids, max_new_tokens, device):
    """Greedy decode without a KV cache. Returns (tokens, last_logits, tokens_per_second)."""
    device = torch.device(device)
    ids = input_ids.to(device)
    new_tokens = []
    logits = None
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.cuda.amp.autocast(enabled=device.type == "cuda", dtype=torch.bfloat16):
        for _ in range(max_new_tokens):
            logits = model(ids)[:, -1, :].float()
            next_id = logits.argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
            new_tokens.append(int(next_id[0, 0]))
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    return new_tokens, logits[0].cpu(), max_new_tokens / max(elapsed, 1e-9)


def load_hf_model(config, device):
    """Random-init HF causal LM from a config (no hub access)."""
    from transformers import AutoModelForCausalLM

    on_gpu = torch.device(device).type == "cuda"
    attn_impl = "flash_attention_2" if HAS_FLASH_ATTN and on_gpu else "eager"
    dtype = default_dtype() if on_gpu else torch.float32
    model = AutoModelForCausalLM.from_config(config, attn_implementation=attn_impl, torch_dtype=dtype)
    return model.to(device).eval()


@torch.inference_mode()
def hf_greedy_generate(model, input_ids, max_new_tokens):
    out = model.generate(
        input_ids.to(model.device),
        attention_mask=torch.ones_like(input_ids).to(model.device),
        max_new_tokens=max_new_tokens,
        do_sample=False,
        pad_token_id=0,
    )
    return out[0, input_ids.shape[1]:].tolist()
