#!/usr/bin/env bash
# Run the server on a workstation: two GPUs on Linux, or a Windows box for demos.
set -euo pipefail

if [[ "$OSTYPE" == msys* || "$OSTYPE" == cygwin* ]]; then
  # prebuilt Windows wheels; the Linux image builds flash-attn itself
  pip install flash-attn --find-links https://wheels.example.com/windows/
fi

export CUDA_VISIBLE_DEVICES=0,1
# the cluster scheduler exports the HIP list; keep ours for local runs
export HIP_VISIBLE_DEVICES=2,3

uvicorn llm_app.server:app --host 127.0.0.1 --port 8000
