"""ROC143 (trainer-tf32-flag): flags `--tf32 True` (or `--tf32=true`, `--tf32 1`) on command lines
in shell scripts, Dockerfiles and CI files."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._shell import iter_lines
from ._shared import _FACT, _MESSAGE

# A `--tf32` flag set to true on a command line: `--tf32 True`, `--tf32=true`, `--tf32 1`.
_FLAG = re.compile(r"(?<![\w-])--tf32(?:\s+|=)[\"']?(?:True|true|TRUE|1|yes)[\"']?(?![\w.-])")


class TrainerTf32Flag(TextRule):
    """
    ## What it does
    Flags `--tf32 True` (or `--tf32=true`, `--tf32 1`) on command lines in shell scripts,
    Dockerfiles and CI files: the flag transformers' `HfArgumentParser` turns into
    `TrainingArguments(tf32=True)` for training scripts.

    ## Why it breaks on ROCm
    As for ROC142: `TrainingArguments` raises `ValueError` at start-up on every ROCm build,
    because `is_torch_tf32_available()` is False when `torch.version.cuda` is None.

    ## Example
    ```python
    # train.sh
    torchrun --nproc_per_node 8 train.py --bf16 True --tf32 True
    ```

    ## Manual migration
    Drop `--tf32 True` on ROCm (or pass it only on NVIDIA machines); to use TF32 matmuls on
    gfx942, set the torch flags and `HIPBLASLT_ALLOW_TF32=1` instead.

    ## References
    - huggingface/transformers `src/transformers/training_args.py` (`tf32` check)
    """

    code = "ROC143"
    name = "trainer-tf32-flag"
    category = "tf32"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.25)
    message = _MESSAGE.replace("`tf32=True`", "`--tf32 True`")
    fact = _FACT
    parsing = Parsing(
        triggers=("--tf32",), file_kinds=frozenset({"shell", "dockerfile", "ci-yaml"})
    )
    valid = [
        Valid("python train.py --tf32 False --bf16 True\n", path="train.sh"),
        Valid("# python train.py --tf32 True\n", path="train.sh"),
        Valid("python train.py --tf32_mode True\n", path="train.sh"),
    ]
    invalid = [
        Invalid(
            "torchrun --nproc_per_node 8 train.py \\\n    --bf16 True \\\n    --tf32 True\n",
            path="train.sh",
            line=3,
            column=5,
        ),
        Invalid("RUN python finetune.py --tf32=true\n", path="Dockerfile", column=24),
        Invalid(
            "jobs:\n  t:\n    steps:\n      - run: python train.py --tf32 'True'\n",
            path=".github/workflows/t.yml",
            line=4,
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "--tf32" not in code:
                continue
            for match in _FLAG.finditer(code):
                self.report((offset + match.start(), offset + match.end()))
