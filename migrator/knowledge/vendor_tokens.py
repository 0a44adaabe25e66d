"""The words that name a GPU vendor's build or device in identifiers and text (``is_hip``,
``IS_ROCM``, ``torch.version.hip``, ``nvidia``): one home for the guard facility (on libcst)
and the text scans that must not load libcst."""

from __future__ import annotations

import re

#: Tokens of an identifier that mean "this is a ROCm/AMD build or device" / "an NVIDIA one".
ROCM_TOKENS = frozenset({"hip", "rocm", "amd", "amdgpu", "gfx"})
NVIDIA_TOKENS = frozenset({"nvidia"})
#: Path words naming one NVIDIA GPU model or architecture (``t4_smoke/run_t4.py``,
#: ``hopper/setup.py``): a file for that GPU.
NVIDIA_GPU_MODEL_TOKENS = frozenset(
    {"t4", "v100", "p100", "a100", "a10g", "h100", "h200", "b200", "gb200", "hopper", "blackwell"}
)
#: Path words naming a hosted notebook service whose GPUs are all NVIDIA (Google Colab: T4, L4,
#: A100 and TPUs, <https://research.google.com/colaboratory/faq.html>; Kaggle: P100, T4 and TPUs,
#: <https://www.kaggle.com/docs/notebooks>): a script, notebook or install extra for it never
#: runs on an AMD GPU.
NVIDIA_HOSTED_TOKENS = frozenset({"colab", "kaggle"})
#: Tokens of an identifier naming another vendor's accelerator (Ascend NPU, Intel XPU, Apple
#: MPS, Habana HPU, Cambricon MLU, Moore Threads MUSA): never a ROCm device.
OTHER_DEVICE_TOKENS = frozenset({"npu", "xpu", "mps", "hpu", "mlu", "musa"})
#: Path words naming another vendor's accelerator or its software stack (``backends/gaudi/``,
#: ``requirements_intel.txt``, ``Dockerfile_gaudi``, ``tpu/``): a file for that hardware, which
#: never runs on an AMD GPU.
OTHER_DEVICE_PATH_TOKENS = OTHER_DEVICE_TOKENS | frozenset(
    {"gaudi", "habana", "ascend", "intel", "ipex", "tpu", "neuronx", "inferentia", "trainium"}
)
#: One of ``ROCM_TOKENS`` as a word of text, in any case (``if torch.version.hip``, ``elif
#: IS_ROCM:``, ``if is_hip():``), not inside a longer word (``chip``, ``gfxinfo``).
ROCM_WORD = re.compile(
    r"(?<![A-Za-z])(?i:"
    + "|".join(sorted(ROCM_TOKENS, key=lambda token: (-len(token), token)))
    + r")(?![a-z])"
)


#: The characters beyond ASCII that ``ROCM_WORD``'s case-insensitive matching pairs with a
#: token's letters (dotted and dotless i); a test derives the set from the regex engine.
CASEFOLDED_INTO_TOKENS = frozenset("\u0130\u0131")


def names_rocm(text: str) -> bool:
    """Whether ``ROCM_WORD`` occurs in ``text``, without running the regex (whose look-behind
    reads every position of the text) on a text that holds no token in any case: apart from
    ``CASEFOLDED_INTO_TOKENS``, only ASCII letters match a token's, and those keep their place
    in the lower-cased text."""
    if not any(char in text for char in CASEFOLDED_INTO_TOKENS):
        lowered = text.lower()
        if not any(token in lowered for token in ROCM_TOKENS):
            return False
    return ROCM_WORD.search(text) is not None
