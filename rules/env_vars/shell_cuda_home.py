"""ROC712: ``CUDA_HOME`` / ``CUDA_PATH`` set or expanded in shell, Docker, compose or CI files."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from ._settings import find_reads, find_settings
from ._text_rules import _TextVariables


class ShellCudaHome(_TextVariables):
    """
    ## What it does
    Flags `CUDA_HOME` / `CUDA_PATH` set or expanded (`$CUDA_HOME/bin/nvcc`) in shell scripts,
    Dockerfiles, compose and CI files.

    ## Why it breaks on ROCm
    ROCm is not located through these variables: PyTorch's extension builder looks at
    `ROCM_HOME`, then `ROCM_PATH`, then `hipcc`, then `/opt/rocm`, and paths below a CUDA root
    (`bin/nvcc`, `lib64`) do not exist in a ROCm install.

    ## Example
    ```python
    # Dockerfile
    ENV CUDA_HOME=/usr/local/cuda
    ENV PATH=$CUDA_HOME/bin:$PATH
    ```

    ## Manual migration
    Set `ROCM_PATH` (usually `/opt/rocm`) in ROCm images and put `$ROCM_PATH/bin` on `PATH`;
    replace `nvcc` invocations with `hipcc` or let `torch.utils.cpp_extension` hipify.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py` (`_find_rocm_home`)
    """

    code = "ROC712"
    name = "shell-cuda-home"
    category = "env-var"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path", aggregate="file", container_image="part", effort_hours=0.25
    )
    message = "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm; ROCm uses `ROCM_PATH` (/opt/rocm)"
    fact = "§6 CUDA_HOME / CUDA_PATH; [P9]"
    parsing = Parsing(triggers=("CUDA_HOME", "CUDA_PATH"))
    valid = [
        Valid("export ROCM_PATH=/opt/rocm\n", path="run.sh"),
        Valid("# CUDA_HOME=/usr/local/cuda\n", path="run.sh"),
        Valid("echo set CUDA_HOME first\n", path="run.sh"),
    ]
    invalid = [
        Invalid("FROM x\nENV CUDA_HOME=/usr/local/cuda\n", path="Dockerfile", line=2, column=5),
        Invalid("export PATH=$CUDA_HOME/bin:$PATH\n", path="run.sh", column=13),
        Invalid(
            "export CUDA_PATH=/usr/local/cuda LD_LIBRARY_PATH=$CUDA_PATH/lib64\n",
            path="run.sh",
            count=1,
        ),
    ]

    def check(self) -> None:
        seen_lines: set[int] = set()
        hits: list[tuple[int, str, str]] = []
        for name in ("CUDA_HOME", "CUDA_PATH"):
            for setting in find_settings(self.ctx.text, name):
                hits.append((setting.start, name, "set"))
            for offset in find_reads(self.ctx.text, name):
                hits.append((offset, name, "read"))
        for start, name, kind in sorted(hits):
            line, _ = self.ctx.position(start)
            if line in seen_lines:
                continue
            seen_lines.add(line)
            if kind == "set":
                message = (
                    f"`{name}` does not locate ROCm (torch reads `ROCM_HOME`/`ROCM_PATH`, "
                    "default /opt/rocm); set `ROCM_PATH` in ROCm images"
                )
            else:
                message = (
                    f"`${name}` does not locate ROCm; paths below a CUDA root (bin/nvcc, lib64) "
                    "do not exist there: use `$ROCM_PATH` (/opt/rocm) and hipcc"
                )
            end = start + len(name) + (1 if kind == "read" else 0)
            self.report((start, end), message=message)
