#!/usr/bin/env bash
# Fine-tune on one 8-GPU NVIDIA node, then render the model-card images.
set -euo pipefail

conda install -y -c pytorch -c nvidia pytorch-cuda=12.1

torchrun --nproc_per_node 8 scripts/finetune.py \
  --bf16 True \
  --tf32 True

python scripts/render_samples.py --enable_xformers_memory_efficient_attention
