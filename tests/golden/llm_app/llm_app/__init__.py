"""llm_app: small decoder-only LLM inference stack (CUDA-first)."""

from .model import TinyLM, CausalSelfAttention, RMSNorm, HAS_FLASH_ATTN, default_dtype
from .generate import greedy_generate

__all__ = [
    "TinyLM",
    "CausalSelfAttention",
    "RMSNorm",
    "HAS_FLASH_ATTN",
    "default_dtype",
    "greedy_generate",
]
__version__ = "0.3.1"
