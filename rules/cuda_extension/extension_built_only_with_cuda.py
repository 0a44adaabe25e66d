"""ROC606 (extension-built-only-with-cuda): a Python build that makes its GPU extension only
where it finds the CUDA toolkit (``if CUDA_HOME is not None:``), with no ROCm branch."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import GATE

from ._build_notes import BuildNoteRule
from ._shared import EXTENSION_BUILD


class ExtensionBuiltOnlyWithCuda(BuildNoteRule):
    """
    ## What it does
    Flags the test in a `setup.py` (or any module that builds an extension) that gives an
    extension its GPU sources, `CUDAExtension` or CUDA macros only where the CUDA toolkit is
    found (`CUDA_HOME`, `CUDA_PATH`, `nvcc`, `torch.version.cuda`), when no ROCm branch sits
    beside it.

    ## Why it breaks on ROCm
    `torch.utils.cpp_extension.CUDA_HOME` is None on a ROCm machine without a CUDA toolkit (it
    comes from `CUDA_HOME`/`CUDA_PATH`, the `nvcc` on the `PATH` or `/usr/local/cuda`), and
    `torch.version.cuda` is None on ROCm builds of torch. The build then makes the CPU-only
    extension (or none): it imports, and every GPU call raises at run time ("not compiled with
    GPU support").

    ## Example
    ```python
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

    extension, sources, macros = CppExtension, ["ops.cpp"], []
    if CUDA_HOME is not None:
        extension = CUDAExtension
        sources += ["ops_cuda.cu"]
        macros += [("WITH_CUDA", None)]
    ext = extension("ops", sources, define_macros=macros)
    ```

    ## Manual migration
    Build the GPU extension for ROCm too: test `torch.cuda.is_available()` or
    `CUDA_HOME is not None or ROCM_HOME is not None` (`from torch.utils.cpp_extension import
    ROCM_HOME`); `CUDAExtension` hipifies the `.cu` sources on ROCm.

    ## Known problems
    A test of a name bound from a toolkit probe counts (`_, major, _ = cuda_version(CUDA_HOME)`
    then `if major != -1:`, or a call of a function of the same file whose body looks for the
    toolkit); a test inside a helper function the build calls by a name the reading does not
    follow is not seen. An environment switch that forces the build (`FORCE_CUDA=1`) still
    counts, as the default build is the CPU-only one. The gated build, the nvcc-only flags it
    passes (ROC603) and its `CUDA_HOME` paths (ROC604) are one finding, at the test.

    ## References
    - pytorch `torch/utils/cpp_extension.py` (`CUDA_HOME`, `ROCM_HOME`, `_find_cuda_home`)
    """

    code = "ROC606"
    name = "extension-built-only-with-cuda"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", blocker=True, effort_hours=2.0)
    message = "the extension gets its GPU code only where the CUDA toolkit is found"
    fact = "§7 gated build row; [P9]"
    parsing = Parsing(
        triggers=(
            "CUDA_HOME",
            "CUDA_PATH",
            "CUDA_ROOT",
            "CUDACXX",
            "nvcc",
            "version.cuda",
            "cuda_home",
        )
    )
    note_kinds = frozenset({GATE})
    #: the gated build, its nvcc-only flags and CUDA_HOME paths are one problem of the file,
    #: anchored at the test (where the user acts)
    note_problem = EXTENSION_BUILD
    valid = [
        Valid(
            "from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CppExtension, CUDAExtension\n"
            "sources = ['ops.cpp']\n"
            "if CUDA_HOME is not None:\n    sources += ['ops_cuda.cu']\n"
            "elif ROCM_HOME is not None:\n    sources += ['ops_cuda.cu']\n"
            "ext = CUDAExtension('ops', sources)\n",
            path="setup.py",
        ),
        Valid(  # a test that builds the GPU extension for ROCm too
            "import os\nimport torch\n"
            "from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CppExtension, CUDAExtension\n"
            "is_rocm = torch.version.hip is not None and ROCM_HOME is not None\n"
            "extension, sources = CppExtension, ['ops.cpp']\n"
            "if (torch.cuda.is_available() and (CUDA_HOME is not None or is_rocm)) or os.getenv('FORCE_CUDA'):\n"
            "    extension = CUDAExtension\n    sources += ['ops_cuda.cu']\n"
            "ext = extension('ops', sources)\n",
            path="setup.py",
        ),
        Valid(
            "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "if torch.cuda.is_available():\n    ext = CUDAExtension('ops', ['ops.cpp', 'ops_cuda.cu'])\n",
            path="setup.py",
        ),
    ]
    invalid = [
        # the test reads a name bound from a helper that probes the toolkit: the ROCm build
        # takes the CPU stub
        Invalid(
            "import subprocess\nimport torch\n"
            "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n"
            "def cuda_version(cuda_dir):\n"
            "    if cuda_dir is None or torch.version.cuda is None:\n"
            "        return None, -1, 0\n"
            "    out = subprocess.check_output([cuda_dir + '/bin/nvcc', '-V'], text=True)\n"
            "    return out, int(out.split('release ')[1][0:2]), 0\n"
            "_, major, _ = cuda_version(CUDA_HOME)\n"
            "if major != -1:\n"
            "    ext = CUDAExtension('ops', ['ops.cpp', 'ops_kernel.cu'])\n"
            "else:\n"
            "    ext = CppExtension('ops', ['ops.cpp', 'ops_stub.cpp'])\n",
            path="setup.py",
            line=10,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n"
            "extension, sources, macros = CppExtension, ['ops.cpp'], []\n"
            "if CUDA_HOME is not None:\n"
            "    extension = CUDAExtension\n"
            "    sources += ['ops_cuda.cu']\n"
            "    macros += [('WITH_CUDA', None)]\n"
            "ext = extension('ops', sources, define_macros=macros)\n",
            path="setup.py",
            line=3,
        ),
        Invalid(
            "import os\nfrom setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
            "ext_modules = []\n"
            "if os.getenv('FORCE_CUDA') or CUDA_HOME:\n"
            "    ext_modules.append(CUDAExtension('pkg._ops', ['csrc/ops.cu']))\n"
            "setup(name='pkg', ext_modules=ext_modules)\n",
            path="setup.py",
            line=5,
        ),
    ]
