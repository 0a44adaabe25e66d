"""ROC413 (xformers-attention-flag): flags `--enable_xformers_memory_efficient_attention` passed to
a training or inference script from shell scripts, Dockerfiles and CI files (the diffusers
example scripts' flag)."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._shell import iter_lines
from ._opt_in import _FACT, _MESSAGE

_FLAG = re.compile(r"(?<![\w-])--enable[_-]xformers[_-]memory[_-]efficient[_-]attention(?![\w-])")


class XformersAttentionFlag(TextRule):
    """
    ## What it does
    Flags `--enable_xformers_memory_efficient_attention` passed to a training or inference
    script from shell scripts, Dockerfiles and CI files (the diffusers example scripts' flag).

    ## Why it breaks on ROCm
    The script then calls `enable_xformers_memory_efficient_attention()` (ROC412): it stops
    with "xformers is not available" unless the experimental ROCm xformers wheel is installed.

    ## Example
    ```python
    # train.sh
    accelerate launch train_text_to_image.py --mixed_precision fp16 \\
      --enable_xformers_memory_efficient_attention
    ```

    ## Manual migration
    Drop the flag on ROCm: the scripts use torch SDPA by default.

    ## References
    - facebookresearch/xformers README (ROCm wheels)
    """

    code = "ROC413"
    name = "xformers-attention-flag"
    category = "xformers"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", effort_hours=0.1, aggregate="file")
    message = _MESSAGE.replace("xformers attention switched on", "xformers attention flag")
    fact = _FACT
    parsing = Parsing(
        triggers=("xformers",), file_kinds=frozenset({"shell", "dockerfile", "ci-yaml"})
    )
    valid = [
        Valid("# add --enable_xformers_memory_efficient_attention on NVIDIA\n", path="t.sh"),
        Valid("python train.py --enable_xformers_memory_efficient_attention_v2\n", path="t.sh"),
    ]
    invalid = [
        Invalid(
            "accelerate launch train.py \\\n  --enable_xformers_memory_efficient_attention \\\n"
            "  --mixed_precision fp16\n",
            path="train.sh",
            line=2,
            column=3,
        ),
        Invalid(
            "jobs:\n  t:\n    steps:\n"
            "      - run: python train.py --enable_xformers_memory_efficient_attention\n",
            path=".github/workflows/t.yml",
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "xformers" not in code:
                continue
            for match in _FLAG.finditer(code):
                self.report((offset + match.start(), offset + match.end()))
