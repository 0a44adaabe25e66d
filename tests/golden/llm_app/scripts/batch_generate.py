#!/usr/bin/env python
"""Batch generation over a JSONL file of prompts (token ids), one GPU per process."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from llm_app.gpu_utils import find_cuda_home, log_gpu_memory, select_gpus, setup_backends  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prompts", required=True)
    p.add_argument("--config", required=True, help="HF config.json of the model")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=64)
    args = p.parse_args()

    select_gpus([args.gpu])  # before torch initialises CUDA
    import torch
    from transformers import AutoConfig

    from llm_app import TinyLM, default_dtype, greedy_generate

    if find_cuda_home() is None:
        print("warning: CUDA_HOME not set; JIT kernels will not build", file=sys.stderr)
    setup_backends()
    config = AutoConfig.from_pretrained(args.config)
    model = TinyLM(config).to("cuda", dtype=default_dtype()).eval()

    with open(args.prompts) as f, torch.backends.cuda.sdp_kernel(
        enable_flash=True, enable_math=False, enable_mem_efficient=False
    ):
        for line in f:
            ids = torch.tensor([json.loads(line)["token_ids"]])
            tokens, _, tps = greedy_generate(model, ids, args.max_new_tokens, "cuda")
            print(json.dumps({"tokens": tokens, "tps": round(tps, 1)}))
    log_gpu_memory("done")


if __name__ == "__main__":
    main()
