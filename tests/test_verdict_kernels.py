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
