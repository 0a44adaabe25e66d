#!/usr/bin/env bash
# Launch the llm_app server on the first two GPUs of an NVIDIA node.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0,1
export CUDA_LAUNCH_BLOCKING=0
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

IMAGE=${IMAGE:-registry.example.com/ml/llm_app:latest}

docker run --rm --gpus all \
  -e CUDA_VISIBLE_DEVICES -e HIP_VISIBLE_DEVICES \
  -p 8000:8000 \
  -v /models:/models:ro \
  --shm-size 8g \
  "$IMAGE" \
  uvicorn llm_app.server:app --host 0.0.0.0 --port 8000
