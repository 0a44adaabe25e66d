"""migrate: find and rewrite CUDA-only code so PyTorch projects run on AMD GPUs with ROCm."""

__version__ = "0.1.0"
