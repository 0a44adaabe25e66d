"""Verdicts from the kernels, on small real projects through the command line: a nested ops
library that the project imports is part of its path (its nvcc-only build flags make it "needs
work", not "ready"); an nvcc-only flag folded into its extension's build still names its rule."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write

KERNEL = """#include <cuda_runtime.h>
__global__ void add(float* out, const float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += a[i];
}
void add_launcher(float* out, const float* a, int n) { add<<<(n + 255) / 256, 256>>>(out, a, n); }
"""


def _ops_project(root: Path) -> Path:
    """A model package (own setup.py) whose modules import an ops library that a nested
    setup.py builds as a CUDA extension with nvcc-only flags."""
    write(
        root, "setup.py", "from setuptools import setup\nsetup(name='model', packages=['model'])\n"
    )
    write(root, "model/__init__.py", "")
    write(
        root,
        "model/net.py",
        "import torch\nfrom ops_pkg.modules import Grouping\n\n"
        "class Net(torch.nn.Module):\n    pass\n",
    )
    write(
        root,
        "model/train.py",
        "from model.net import Net\n\nif __name__ == '__main__':\n    Net()\n",
    )
    write(root, "README.md", "# model\n\nTrain with `python model/train.py`.\n")
    write(
        root,
        "ops_lib/setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(\n"
        "    name='ops_pkg',\n"
        "    ext_modules=[\n"
        "        CUDAExtension(\n"
        "            name='ops_pkg._ext',\n"
        "            sources=['ops_pkg/src/add.cpp', 'ops_pkg/src/add_gpu.cu'],\n"
        "            extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '-Xfatbin', '-compress-all']},\n"
        "        )\n"
        "    ],\n"
        "    cmdclass={'build_ext': BuildExtension},\n"
        ")\n",
    )
    write(root, "ops_lib/ops_pkg/__init__.py", "import ops_pkg.modules\n")
    write(
        root,
        "ops_lib/ops_pkg/modules.py",
        "import torch\nimport ops_pkg._ext as _ext\n\n"
        "class Grouping(torch.nn.Module):\n"
        "    def forward(self, x):\n        return _ext.add(x, x)\n",
    )
    write(
        root,
        "ops_lib/ops_pkg/src/add.cpp",
        "#include <torch/extension.h>\nvoid add_launcher(float*, const float*, int);\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n",
    )
    write(root, "ops_lib/ops_pkg/src/add_gpu.cu", KERNEL)
    return root


def test_an_imported_nested_ops_library_with_nvcc_only_flags_needs_work(run_cli, tmp_path):
    root = _ops_project(tmp_path / "proj")
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    assert result.exit_code == 0, result.output
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] == "needs-work", project["verdict_reason"]
    deciding = {rule for item in project["deciding"] for rule in item["rules"]}
    assert deciding & {"ROC600", "ROC603"}
    # the folded flag site still names the rule that found it
    scan = run_cli("scan", "--format", "json", "--no-cache", str(root))
    related = [
        site for finding in json.loads(scan.stdout)["findings"] for site in finding["related"]
    ]
    assert any(site.get("rule") == "ROC603" for site in related), related
    # no internal grouping key reaches a title
    titles = [item["title"] for item in project["work_items"] + project["deciding"]]
    assert not any("problem:" in title for title in titles), titles


def test_a_nested_project_nothing_imports_stays_apart(run_cli, tmp_path):
    root = _ops_project(tmp_path / "proj")
    write(root, "model/net.py", "import torch\n\nclass Net(torch.nn.Module):\n    pass\n")
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] == "ready", project["verdict_reason"]
    assert all(item["tier"] == "peripheral" for item in project["peripheral_work_items"])


def test_extensions_that_build_for_rocm_with_only_docker_work_left_are_ready(run_cli, tmp_path):
    root = tmp_path / "rocmops"
    write(
        root,
        "setup.py",
        "import torch\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension, IS_HIP_EXTENSION\n"
        "flags = ['-O3'] if IS_HIP_EXTENSION else ['-O3', '--use_fast_math']\n"
        "setup(name='rocmops', packages=['rocmops'],\n"
        "      ext_modules=[CUDAExtension('rocmops._C', ['csrc/add.cu'],\n"
        "                                 extra_compile_args={'nvcc': flags})],\n"
        "      cmdclass={'build_ext': BuildExtension})\n",
    )
    write(root, "rocmops/__init__.py", "import torch\nfrom rocmops import _C\n")
    write(root, "csrc/add.cu", KERNEL)
    write(root, "Dockerfile", "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install .\n")
    write(root, "README.md", "# rocmops\n\nBuilds for CUDA and ROCm. Or use the `Dockerfile`.\n")
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    project = json.loads(result.stdout)["projects"][0]
    assert project["amd_path"], project["verdict_reason"]
    assert project["verdict"] == "ready", project["verdict_reason"]
    assert project["verdict_rule_id"] == "deploy-only"
    # the container recipe is still named, as the work item that is left
    assert any("Dockerfile" in item["files"] for item in project["deciding"])


MMA = """#include <torch/extension.h>
__global__ void mma_kernel(const unsigned* a, float* c) {
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\\n"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]),
        "f"(d0), "f"(d1), "f"(d2), "f"(d3));
  c[threadIdx.x] = d0 + d1 + d2 + d3;
}
"""


def _lazy_ptx_project(root: Path, folder: str) -> Path:
    """A package whose tensor-core PTX kernels (four files: weeks of porting) are JIT-built
    when a function of ``pkg/<folder>/ops.py`` first runs."""
    write(root, "pkg/__init__.py", "import torch\n")
    write(
        root, "pkg/cli.py", "from pkg import model\n\nif __name__ == '__main__':\n    model.run()\n"
    )
    write(
        root,
        "pkg/model.py",
        f"import torch\n\n\ndef run(fast=False):\n    from pkg.{folder.replace('/', '.')} import ops\n"
        "    return ops.gemm(torch.ones(4))\n",
    )
    write(root, f"pkg/{folder}/__init__.py", "")
    sources = [f"pkg/{folder}/csrc/mma{n}.cu" for n in range(4)]
    write(
        root,
        f"pkg/{folder}/ops.py",
        "import os\nfrom torch.utils.cpp_extension import load\n\n\ndef gemm(x):\n"
        "    here = os.path.dirname(__file__)\n"
        "    mod = load('mma', [os.path.join(here, 'csrc', f'mma{n}.cu') for n in range(4)])\n"
        "    return mod.gemm(x)\n",
    )
    for source in sources:
        write(root, source, MMA)
    write(
        root,
        "pyproject.toml",
        "[project]\nname = 'pkg'\nversion = '1'\n[project.scripts]\npkg = 'pkg.cli:main'\n",
    )
    return root


def test_weeks_of_ptx_porting_block_the_path_they_are_on_but_not_a_plugin(run_cli, tmp_path):
    core = _lazy_ptx_project(tmp_path / "core", "kernels")
    result = run_cli("report", "--format", "json", "--no-cache", str(core))
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] == "blocked", project["verdict_reason"]
    assert {rule for item in project["deciding"] for rule in item["rules"]} == {"ROC311"}
    assert all(item["class"] == "port" for item in project["deciding"])
    # the same kernels in a plugin a user enables run only then: not the project's blocker
    plugin = _lazy_ptx_project(tmp_path / "plugin", "integrations/moe")
    result = run_cli("report", "--format", "json", "--no-cache", str(plugin))
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] != "blocked", project["verdict_reason"]


def _nvml_project(root: Path, *, computes: bool) -> Path:
    head = "import torch\n" if computes else ""
    write(
        root,
        "pyproject.toml",
        "[project]\nname = 'gmon'\nversion = '1'\ndependencies = ['nvidia-ml-py']\n"
        "[project.scripts]\ngmon = 'gmon.cli:main'\n",
    )
    write(root, "gmon/__init__.py", "")
    write(
        root,
        "gmon/cli.py",
        head + "import pynvml\n\n\ndef main():\n    pynvml.nvmlInit()\n"
        "    handle = pynvml.nvmlDeviceGetHandleByIndex(0)\n"
        "    print(pynvml.nvmlDeviceGetMemoryInfo(handle).used)\n",
    )
    return root


def test_nvml_decides_by_its_class_and_the_page_says_which(run_cli, tmp_path):
    verdicts = {}
    for computes in (False, True):
        root = _nvml_project(tmp_path / f"gmon{computes}", computes=computes)
        result = run_cli("report", "--format", "json", "--no-cache", str(root))
        project = json.loads(result.stdout)["projects"][0]
        (item,) = [item for item in project["deciding"] if item["title"] == "`nvml`"]
        verdicts[computes] = (project["verdict"], item["class"], item["summary"])
    tool, trainer = verdicts[False], verdicts[True]
    assert tool[:2] == ("blocked", "port")
    assert "GPU tool built on nvml" in tool[2]  # why this NVML item is a port
    assert trainer[:2] == ("needs-work", "breaks")
    assert "GPU tool" not in trainer[2]


WMMA_KERNEL = """#include <mma.h>
using namespace nvcuda;
__global__ void tile(half* out, const half* a, const half* b) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> acc;
  fill_fragment(acc, __float2half(0.0));
  load_matrix_sync(fa, a, 16);
  load_matrix_sync(fb, b, 16);
  mma_sync(acc, fa, fb, acc);
  store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
"""


def test_a_sub_folder_extension_the_package_modules_import_is_on_the_core_path(run_cli, tmp_path):
    """A library package (no console script, no root script) whose public modules import at
    module level an extension built by a sub-folder setup.py (beside its own tests and
    benchmark): the extension's WMMA kernels are the package's path, not "shown apart"."""
    root = tmp_path / "quant"
    write(root, "requirements.txt", "torch\n")
    write(root, "lib/__init__.py", "")
    write(root, "lib/codebook/__init__.py", "import torch\nimport tiles_cuda\n")
    write(
        root,
        "lib/linear/quantized.py",
        "import torch\nimport tiles_cuda\n\ndef forward(x):\n    return tiles_cuda.tile(x)\n",
    )
    write(root, "lib/linear/__init__.py", "from .quantized import forward\n")
    write(
        root,
        "tiles/setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='tiles_cuda',\n"
        "      ext_modules=[CUDAExtension('tiles_cuda', ['tiles_wrapper.cpp', 'tiles.cu',\n"
        "                                                'tiles_8x32.cu', 'tiles_gemv.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n",
    )
    write(
        root,
        "tiles/tiles_wrapper.cpp",
        "#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n",
    )
    for name in ("tiles.cu", "tiles_8x32.cu", "tiles_gemv.cu"):
        write(root, f"tiles/{name}", WMMA_KERNEL)
    write(root, "tiles/test_tiles.py", "import tiles_cuda\n\ndef test_tile():\n    pass\n")
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] == "blocked", project["verdict_reason"]
    deciding = {rule for item in project["deciding"] for rule in item["rules"]}
    assert "ROC320" in deciding, project["deciding"]
    apart = {rule for item in project["peripheral_work_items"] for rule in item["rules"]}
    assert "ROC320" not in apart, project["peripheral_work_items"]


def _jit_project(root: Path, kernel: str) -> Path:
    """A package whose ``__init__`` builds its one CUDA extension with ``load()`` at import."""
    write(root, "requirements.txt", "torch\n")
    write(
        root,
        "knnpkg/__init__.py",
        "import os\nimport torch\nfrom torch.utils.cpp_extension import load\n\n"
        "def _load(name):\n"
        "    here = os.path.join(os.path.dirname(__file__), 'csrc')\n"
        "    return load(name=name, sources=[os.path.join(here, name + '.cpp'),\n"
        "                                    os.path.join(here, name + '.cu')], with_cuda=True)\n\n"
        "_ext = _load('knn')\n",
    )
    write(
        root,
        "knnpkg/csrc/knn.cpp",
        "#include <torch/extension.h>\nvoid add_launcher(float*, const float*, int);\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n",
    )
    write(root, "knnpkg/csrc/knn.cu", kernel)
    return root


def test_a_jit_extension_whose_kernels_port_mechanically_is_ready_with_a_build_to_check(
    run_cli, tmp_path
):
    root = _jit_project(tmp_path / "knn", KERNEL)
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    project = json.loads(result.stdout)["projects"][0]
    assert [ext["label"] for ext in project["extensions"]] == ["ports mechanically"]
    assert project["verdict"] == "ready", project["verdict_reason"]
    assert project["verdict_rule_id"] == "build-check"
    assert "ROC600" in {rule for item in project["deciding"] for rule in item["rules"]}
    # the same build with a kernel that needs a port is not ready
    ptx = KERNEL.replace("out[i] += a[i];", 'asm volatile("mov.u32 %0, %%laneid;" : "=r"(n));')
    blocked = _jit_project(tmp_path / "knn_ptx", ptx)
    result = run_cli("report", "--format", "json", "--no-cache", str(blocked))
    project = json.loads(result.stdout)["projects"][0]
    assert project["verdict"] != "ready", project["verdict_reason"]
