"""Smoke test: greedy decode with the tiny model, timing via CUDA events from PyCUDA.

The serving prototype measures device time with PyCUDA and checks the TensorRT
runtime version, so both are hard requirements here (no fallback).
"""

import json
import os
import sys
import time

import pycuda.driver as cuda  # hard dependency: CUDA driver API, no ROCm build
import tensorrt as trt  # hard dependency: engine builder used by the server
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_llm import TinyCausalLM  # noqa: E402

PROMPT = [1, 15, 42, 7, 99, 311, 5, 27, 400, 13, 8, 256]
MAX_NEW_TOKENS = 32


def main():
    cuda.init()
    gpu_name = cuda.Device(0).name() if cuda.Device.count() else "none"
    trt_logger = trt.Logger(trt.Logger.WARNING)
    print(f"driver={cuda.get_driver_version()} trt={trt.__version__} gpu={gpu_name}", file=sys.stderr)
    del trt_logger

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyCausalLM().to(device).eval()
    ids = torch.tensor([PROMPT], device=device)
    tokens = []
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(MAX_NEW_TOKENS):
            logits = model(ids)[0, -1].float()
            nxt = int(logits.argmax())
            tokens.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]], device=device)], dim=1)
    tps = MAX_NEW_TOKENS / (time.perf_counter() - start)

    result = {
        "tokens": tokens,
        "logits_checksum": float(logits.double().sum()),
        "logits": [round(float(x), 6) for x in logits[:16].cpu()],
        "tokens_per_second": tps,
        "device": device,
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
