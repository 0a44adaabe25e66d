"""ROC811: dependencies that exist only for NVIDIA GPUs."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import no_equivalent

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class CudaOnlyPackage(RequirementRule):
    """
    ## What it does
    Flags dependencies that exist only for NVIDIA GPUs and have no ROCm build: TensorRT
    (`tensorrt`, `torch-tensorrt`), CUDA driver bindings (`pycuda`, `cuda-python`), NVIDIA
    DALI, CUDA-only kernel packages (`eetq`, `deepspeed-kernels`, `grouped-gemm`) and NVIDIA's
    Transformer Engine (`transformer-engine`; AMD's fork is built from source).

    ## Why it breaks on ROCm
    These packages need the CUDA driver and NVIDIA libraries: they fail to install or to import
    on an AMD machine, and whatever imports them stops there.

    ## Example
    ```python
    # requirements.txt
    pycuda==2024.1
    tensorrt==10.0.1
    ```

    ## Manual migration
    TensorRT → MIGraphX (`torch-migraphx`) or `torch.compile`; PyCUDA / cuda-python →
    `hip-python` (`hip-python-interop` keeps CUDA-style names); DALI → AMD rocAL / MIVisionX.
    Make the import optional where the feature is not essential.

    ## References
    - rocm-facts.md §9 (tensorrt, pycuda, nvidia-dali rows)
    """

    code = "ROC811"
    name = "cuda-only-package"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", port=True, effort_hours=8.0, blocker=True)
    message = "CUDA-only package with no ROCm build"
    fact = "§9 tensorrt/pycuda/dali/eetq/transformer-engine rows; [R1][K3][K6]"
    # every name of the table's [no_equivalent] section, in the spellings files use
    parsing = Parsing(
        triggers=_cases(
            *sorted(
                {
                    spelling
                    for name in _table("no_equivalent")
                    for spelling in (name, name.replace("-", "_"))
                }
            ),
            "TensorRT",
            "PyCUDA",
            "EETQ",
        )
    )
    valid = [
        Valid("torch-migraphx\n", path="requirements.txt"),
        Valid("hip-python\n", path="requirements.txt"),
        Valid("tensorrt; sys_platform == 'win32'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("pycuda==2024.1\ntensorrt==10.0.1\n", path="requirements.txt", count=2),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch-tensorrt>=2.3"]\n',
            path="pyproject.toml",
        ),
        Invalid("nvidia-dali-cuda120\n", path="requirements.txt"),
        # built on NVIDIA's CuTe DSL
        Invalid(
            '[project]\nname = "x"\ndependencies = ["quack-kernels>=0.3.4", "torch"]\n',
            path="pyproject.toml",
            line=3,
        ),
        Invalid(
            "eetq\ndeepspeed-kernels ; sys_platform == 'linux'\n", path="requirements.txt", count=2
        ),
        Invalid(
            "from setuptools import setup\n\n"
            "setup(name='x', extras_require={'moe': ['grouped-gemm==0.3.0',"
            " 'transformer-engine[pytorch]>=1.13']})\n",
            path="setup.py",
            count=2,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        why = no_equivalent(req.name)
        if why is None:
            return None
        return Verdict(f"`{req.parsed.raw_name}` is CUDA-only: {why}")
