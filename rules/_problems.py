"""Problem keys that rules of several families declare (``Rule.problem``): findings of every
rule with the same key are one problem, anchored where the user acts."""

from __future__ import annotations

#: "This project needs ROCm/flash-attention": the flash-attn dependency (ROC808) and the places
#: where the user asks for FlashAttention explicitly (ROC403).
FLASH_ATTN_BUILD = "flash-attn-rocm-build"

#: "This project needs bitsandbytes' ROCm binaries": the dependency (ROC810), its imports and API
#: uses (ROC510) and transformers' quantization configs (ROC511).
BITSANDBYTES_BINARIES = "bitsandbytes-rocm-binaries"
