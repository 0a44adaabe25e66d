"""ROC607 (cuda-only-link-library): an extension build that links a library only the CUDA
toolkit ships (``-lcublas_static``, ``libraries=['cudart', 'nvrtc']``)."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import LINK

from ._build_notes import BuildNoteRule


class CudaOnlyLinkLibrary(BuildNoteRule):
    """
    ## What it does
    Flags the libraries only the CUDA toolkit ships (`cudart`, `cudart_static`, `cuda`,
    `cublas`/`cublasLt` and their static forms, `culibos`, `nvrtc`, `cufft`, `curand`,
    `cusparse`, `cusolver`, `nvToolsExt`, `nvjitlink`, `cudnn`, `nccl`) named in an extension's
    `extra_link_args`, `libraries` or `extra_ldflags`, also when they reach `cpp_extension`
    through the project's own wrapper function; one finding per file, each library a site.

    ## Why it breaks on ROCm
    On ROCm `cpp_extension` links `amdhip64`, `c10_hip` and `torch_hip` itself and passes the
    project's own link arguments on unchanged; a ROCm install ships none of the CUDA libraries,
    so the link fails and the extension does not build.

    ## Example
    ```python
    CUDAExtension("ops", ["ops.cu"], extra_link_args=["-lcublas_static", "-lcudart_static"])
    ```

    ## Manual migration
    Link them only in the CUDA build (`if not IS_HIP_EXTENSION:`), and the HIP counterparts
    (`-lhipblas`, `-lhipblaslt`, `-lhiprtc`) where the code needs them on ROCm; the HIP runtime
    itself comes with `cpp_extension`.

    ## Known problems
    Libraries named through a variable the static reading cannot follow are not seen.

    ## References
    - pytorch `torch/utils/cpp_extension.py` (`CUDAExtension` on ROCm)
    """

    code = "ROC607"
    name = "cuda-only-link-library"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", blocker=True, aggregate="file", effort_hours=1.0)
    message = "links a library only the CUDA toolkit ships"
    fact = "§7 CUDA toolkit libraries row; [P9]"
    parsing = Parsing(
        triggers=(
            "cudart",
            "cublas",
            "culibos",
            "nvrtc",
            "cufft",
            "curand",
            "cusparse",
            "cusolver",
            "nvToolsExt",
            "nvjitlink",
            "cudnn",
            "nccl",
            "cuda",
        ),
        requires=("extra_link_args", "extra_ldflags", "libraries"),
    )
    note_kinds = frozenset({LINK})
    valid = [
        Valid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'], extra_link_args=['-lpthread', '-ldl'])\n",
            path="setup.py",
        ),
        Valid("LIBS = ['-lcublas_static']  # documented for users\n", path="setup.py"),
    ]
    invalid = [
        Invalid(
            "from torch.utils import cpp_extension\n"
            "ext = cpp_extension.CUDAExtension(\n"
            "    name='pkg._CUDA', sources=['kernels/gemm.cu'],\n"
            "    extra_link_args=['-lcublas_static', '-lcudart_static', '-lrt'])\n",
            path="setup.py",
            line=4,
            count=1,
            sites=2,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('pkg._C', ['csrc/api.cpp'], libraries=['cudart', 'nvrtc'])\n",
            path="setup.py",
            line=2,
            count=1,
        ),
    ]
