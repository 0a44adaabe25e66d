"""HTTP inference server: POST /generate, GET /health."""

import subprocess

import torch
from fastapi import FastAPI
from pydantic import BaseModel

from .generate import greedy_generate
from .gpu_utils import cuda_toolkit_version, flash_sdp_only, gpu_stats, setup_backends
from .model import TinyLM

app = FastAPI(title="llm_app")
_state = {}


class GenerateRequest(BaseModel):
    token_ids: list[int]
    max_new_tokens: int = 32


@app.on_event("startup")
def _load():
    from transformers import AutoConfig

    setup_backends()
    config = AutoConfig.from_pretrained("/models/llm_app/config.json")
    _state["model"] = TinyLM(config).cuda().to(torch.bfloat16).eval()


@app.post("/generate")
def generate(req: GenerateRequest):
    prompt = torch.tensor([req.token_ids], dtype=torch.long)
    with flash_sdp_only():
        tokens, _, tps = greedy_generate(_state["model"], prompt, req.max_new_tokens, "cuda")
    return {"tokens": tokens, "tokens_per_second": tps}


@app.get("/health")
def health():
    smi = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=True,
    )
    used, total = (int(x) for x in smi.stdout.splitlines()[0].split(","))
    return {
        "status": "ok",
        "gpu": torch.cuda.get_device_name(0),
        "cuda": "%d.%d" % cuda_toolkit_version(),
        "mem_used_mib": used,
        "mem_total_mib": total,
        "nvml": gpu_stats(0),
    }
