"""Inference smoke test: tiny random-init LM, fixed seed, greedy decode of 32 tokens.

Output: JSON to $MIGRATE_SMOKE_OUTPUT (or stdout) plus a `tokens_per_second=` line.
"""

import json
import os
import sys

import torch
from transformers import LlamaConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from llm_app.generate import greedy_generate, hf_greedy_generate, load_hf_model  # noqa: E402
from llm_app.gpu_utils import log_gpu_memory, setup_backends  # noqa: E402
from llm_app.model import TinyLM, default_dtype  # noqa: E402

PROMPT = [1, 15, 42, 7, 99, 311, 5, 27, 400, 13, 8, 256]
MAX_NEW_TOKENS = int(os.environ.get("SMOKE_NEW_TOKENS", "32"))


def main():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        setup_backends()
    dtype = default_dtype() if device == "cuda" else torch.float32
    if os.environ.get("SMOKE_DTYPE"):  # e.g. float32 for a bit-for-bit kernel comparison on GPU
        dtype = getattr(torch, os.environ["SMOKE_DTYPE"])

    config = LlamaConfig(
        vocab_size=512,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-5,
    )
    model = TinyLM(config).to(device=device, dtype=dtype).eval()
    prompt = torch.tensor([PROMPT], dtype=torch.long)
    if device == "cuda":
        greedy_generate(model, prompt, 4, device)  # warm-up: kernel selection and caches
    tokens, last_logits, tps = greedy_generate(model, prompt, MAX_NEW_TOKENS, device)
    log_gpu_memory("after generate")

    torch.manual_seed(0)
    hf_model = load_hf_model(config, device)
    hf_tokens = hf_greedy_generate(hf_model, prompt, 8)

    result = {
        "tokens": tokens,
        "logits_checksum": float(last_logits.double().sum()),
        "logits": [round(float(x), 6) for x in last_logits[:16]],
        "tokens_per_second": tps,
        "device": device,
        "dtype": str(dtype).replace("torch.", ""),
        "hf_tokens": hf_tokens,
    }
    out_path = os.environ.get("MIGRATE_SMOKE_OUTPUT")
    if out_path:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=2)
    else:
        print(json.dumps(result))
    print(f"tokens_per_second={tps:.2f}")


if __name__ == "__main__":
    main()
