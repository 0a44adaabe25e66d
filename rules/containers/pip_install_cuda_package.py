"""ROC867: ``pip install`` of CUDA-only or CUDA-build packages in scripts, Dockerfiles and CI files."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Problem, Severity, TextRule, Valid, load_table

from .._dependency_files import cog_file
from .._requirement_rule import RequirementRule
from .._shell import pip_requirements
from ..dependencies.bitsandbytes_without_rocm_binaries import BitsandbytesWithoutRocm
from ..dependencies.cuda_only_package import CudaOnlyPackage
from ..dependencies.cupy_cuda_wheel import CupyCudaWheel
from ..dependencies.deprecated_quantization_package import DeprecatedQuantPackage
from ..dependencies.flash_attn_cuda_wheel import FlashAttnCudaWheel
from ..dependencies.jax_cuda_extra import JaxCudaExtra
from ..dependencies.nvidia_cuda_runtime_wheel import NvidiaRuntimeWheel
from ..dependencies.nvml_bindings import NvmlBindings
from ..dependencies.onnxruntime_gpu import OnnxruntimeGpu
from ..dependencies.pypi_triton import PypiTriton
from ..dependencies.tensorflow_cuda_build import TensorflowCuda
from ..dependencies.vllm_cuda_wheel import VllmCudaWheel
from ..dependencies.xformers_cuda_wheel import XformersCudaWheel
from ._images import image_refs, split_image


class PipInstallCudaPackage(TextRule):
    """
    ## What it does
    Flags `pip install` of CUDA-only or CUDA-build packages in Dockerfiles, shell scripts,
    Makefiles and CI files, and the `python_packages` and `run` commands of Cog's `cog.yaml`:
    `flash-attn`, `xformers`, `tensorrt`, `pycuda`, `cupy-cuda12x`,
    `onnxruntime-gpu`, `nvidia-*-cu12` wheels, `bitsandbytes` older than 0.49, NVML bindings and
    the other packages of the dependency rules (ROC800–ROC813).

    ## Why it breaks on ROCm
    The same as for the dependency rule each finding names: these installs fetch CUDA builds,
    or packages with no ROCm build, so the image or environment cannot use the AMD GPU for that
    feature (or fails to build).

    ## Example
    ```python
    # Dockerfile
    RUN pip install --no-cache-dir flash-attn --no-build-isolation
    ```

    ## Manual migration
    Follow the named dependency rule (`migrate explain ROC808` ...): install the ROCm
    counterpart (for flash-attn, build ROCm/flash-attention), or drop the package.

    ## References
    - rocm-facts.md §9 (package rows), §4a, §5
    """

    code = "ROC867"
    name = "pip-install-cuda-package"
    category = "container"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=1.0)
    message = "`pip install` of a CUDA-only package"
    fact = "§9 package rows, §4a, §5; [K3][F1][B1]"
    parsing = Parsing(
        triggers=FlashAttnCudaWheel.parsing.triggers
        + (
            "nvidia",
            "xformers",
            "tensorrt",
            "pycuda",
            "cuda-python",
            "cuda_python",
            "dali",
            "cupy",
            "onnxruntime",
            "jax",
            "tensorflow",
            "triton",
            "bitsandbytes",
            "nvml",
            "gptq",
            "awq",
            "grouped",
            "transformer-engine",
            "transformer_engine",
            "vllm",
            "vLLM",
        ),
        file_kinds=frozenset({"dockerfile", "shell", "ci-yaml", "cog"}),
    )
    valid = [
        Valid("RUN pip install --no-cache-dir transformers accelerate\n", path="Dockerfile"),
        Valid("# pip install flash-attn\npip install torch\n", path="setup.sh"),
        Valid("pip download flash-attn\n", path="setup.sh"),
        Valid(
            "ARG BASE=rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1\n"
            "FROM ${BASE}\nRUN pip install flash-attn --no-build-isolation\n",
            path="Dockerfile",
        ),
    ]
    invalid = [
        Invalid(
            "RUN pip install --no-cache-dir flash-attn --no-build-isolation\n",
            path="Dockerfile",
            line=1,
            column=32,
        ),
        Invalid("pip install --upgrade vllm==0.2.7\n", path="setup.sh", line=1, column=23),
        Invalid(
            'pip install "onnxruntime-gpu>=1.13.1" xformers tensorrt\n',
            path="setup.sh",
            count=1,
        ),
        Invalid(
            "build:\n  gpu: true\n  python_packages:\n    - torch==2.4.1\n"
            '    - "xformers==0.0.22"\n  run:\n    - pip install flash-attn\n',
            path="cog.yaml",
            line=5,
            column=7,
            count=1,  # one finding per file; the `run` install is a related site
        ),
    ]

    _RULES: tuple[type[RequirementRule], ...] = (
        NvidiaRuntimeWheel,
        CupyCudaWheel,
        OnnxruntimeGpu,
        JaxCudaExtra,
        TensorflowCuda,
        PypiTriton,
        FlashAttnCudaWheel,
        XformersCudaWheel,
        VllmCudaWheel,
        BitsandbytesWithoutRocm,
        CudaOnlyPackage,
        NvmlBindings,
        DeprecatedQuantPackage,
    )

    def check(self) -> None:
        reqs = pip_requirements(self.ctx.text)
        if self.ctx.kind == "cog":
            reqs = cog_file(self.ctx.text) + reqs
        if not reqs:
            return
        examiners = [rule(self.ctx) for rule in self._RULES]
        # A Dockerfile built on a ROCm image that installs flash-attn or vLLM is building it
        # from source for ROCm on purpose: leave that one alone.
        rocm_based = self.ctx.kind == "dockerfile" and any(
            split_image(ref.image)[0].startswith("rocm/")
            for ref in image_refs(self.ctx.text, "dockerfile")
        )
        for req in reqs:
            if not req.on_linux:
                continue
            if rocm_based and req.name in _BUILT_ON_ROCM_IMAGES:
                continue
            for examiner in examiners:
                verdict = examiner.examine(req)
                if verdict is None:
                    continue
                start, end = req.span()
                # an advisory (a deprecated package) stays one where it is installed, and a
                # problem apart from the file's CUDA-only installs
                advisory = examiner.severity < self.severity
                self.report(
                    (start, end),
                    message=f"{verdict.message} ({examiner.code})",
                    problem=Problem(
                        group=verdict.group or ("advisory" if advisory else ""),
                        severity=min(examiner.severity, self.severity),
                    ),
                )
                break


#: Packages a Dockerfile on a ROCm base image installs by building them for ROCm.
_BUILT_ON_ROCM_IMAGES = frozenset([*load_table("packages")["flash_attn"]["names"], "vllm"])
