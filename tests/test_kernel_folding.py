"""Kernel sites that belong to a larger problem are reported once, with it (issue #38): the
sites of an optional extension with no ROCm build fold into its build finding, those of a file
written on CUTLASS into the CUTLASS finding; the sites of an extension every run loads stay
findings of their own. Scans of small real projects, through the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, write

FIXTURE = FIXTURES / "quant_kernels"
_PTX_KERNEL = (
    "__device__ unsigned lane() {\n"
    "  unsigned i;\n"
    '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(i));\n'
    "  return i;\n"
    "}\n"
)


def _guarded_copy(tmp_path: Path) -> Path:
    """The bundled kernel fixture with its PTX extension imported behind an import guard."""
    copy = tmp_path / "quant_kernels"
    shutil.copytree(FIXTURE, copy)
    (copy / "quant_kernels" / "__init__.py").write_text(
        '"""Guarded."""\n\nfrom quant_kernels import _dequant\n\ntry:\n'
        "    from quant_kernels import _lane, _mma\nexcept ImportError:\n    _lane = _mma = None\n"
    )
    return copy


def _kernel_rows(report: dict) -> list[tuple[str, str, int]]:
    return sorted(
        (f["rule"], f["path"], f["line"])
        for f in report["findings"]
        if f["rule"].startswith(("ROC3", "ROC6"))
    )


def test_an_extension_every_run_loads_keeps_its_kernel_sites(scan_json):
    report = scan_json("--no-cache", ".", cwd=FIXTURE)
    assert ("ROC310", "csrc/lane_ptx.cu", 6) in _kernel_rows(report)


def test_an_optional_extension_is_one_finding_at_its_build_with_its_sites(tmp_path, scan_json):
    project = _guarded_copy(tmp_path)
    report = scan_json("--no-cache", ".", cwd=project)
    rows = _kernel_rows(report)
    assert [row for row in rows if row[0] == "ROC310"] == []
    build = [f for f in report["findings"] if f["rule"] == "ROC600"]
    assert [(f["path"], f["line"]) for f in build] == [("setup.py", 12)]
    assert {"path": "csrc/lane_ptx.cu", "line": 6, "rule": "ROC310"}.items() <= {
        **next(r for r in build[0]["related"] if r.get("rule"))
    }.items()
    assert (
        "its sources hold 4 kernel sites of this port "
        "(inline-ptx, kernel-compiles-to-nothing-on-amd)" in build[0]["message"]
    )
    # an optional extension stays work for the project: the build finding keeps its severity
    assert build[0]["severity"] == "warning"


def test_folding_changes_the_listing_not_the_verdict(tmp_path, run_cli):
    project = _guarded_copy(tmp_path)
    result = run_cli("report", "--format", "json", "--no-cache", str(project))
    document = json.loads(result.stdout)
    data = document["projects"][0] if "projects" in document else document
    assert data["verdict"] == "needs-work"


def test_sites_inside_a_cutlass_file_are_part_of_the_cutlass_port(tmp_path, scan_json):
    write(
        tmp_path,
        "csrc/gemm.cu",
        '#include "cutlass/gemm/device/gemm.h"\n'
        "__device__ float warp_sum(float v) {\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);\n"
        "  return v;\n"
        "}\n"
        "__global__ void reduce(float* x) { x[0] = warp_sum(x[threadIdx.x]); }\n",
    )
    write(tmp_path, "csrc/plain.cu", "__device__ float sum(float v) {\n" + _PTX_KERNEL + "}\n")
    report = scan_json("--no-cache", ".", cwd=tmp_path)
    rows = _kernel_rows(report)
    assert ("ROC303", "csrc/gemm.cu", 3) not in rows
    cutlass = next(f for f in report["findings"] if f["rule"] == "ROC330")
    assert (cutlass["path"], cutlass["line"]) == ("csrc/gemm.cu", 1)
    assert {"path": "csrc/gemm.cu", "line": 3, "rule": "ROC303"}.items() <= next(
        r for r in cutlass["related"] if r.get("rule") == "ROC303"
    ).items()
    # a file without CUTLASS keeps its own finding
    assert any(row[:2] == ("ROC310", "csrc/plain.cu") for row in rows)


def test_a_jit_extension_loaded_in_a_function_folds_the_sources_under_its_folder(
    tmp_path, scan_json
):
    write(
        tmp_path,
        "pkg/lanes/__init__.py",
        "import os\n"
        "from torch.utils.cpp_extension import load\n"
        "HERE = os.path.dirname(__file__)\n\n\n"
        "def build():\n"
        "    return load(name='lanes', sources=[os.path.join(HERE, 'csrc', 'lanes.cu')])\n",
    )
    write(tmp_path, "pkg/__init__.py", '"""A package."""\n')
    write(tmp_path, "pkg/lanes/csrc/lanes.cu", _PTX_KERNEL)
    report = scan_json("--no-cache", ".", cwd=tmp_path)
    rows = _kernel_rows(report)
    assert rows == [("ROC600", "pkg/lanes/__init__.py", 7)]
    build = report["findings"][[f["rule"] for f in report["findings"]].index("ROC600")]
    assert [(r["path"], r["line"], r.get("rule")) for r in build["related"]] == [
        ("pkg/lanes/csrc/lanes.cu", 3, "ROC310")
    ]


def test_sarif_names_the_rule_of_a_folded_site(tmp_path, run_cli):
    project = _guarded_copy(tmp_path)
    result = run_cli("scan", "--no-cache", "--format", "sarif", ".", cwd=project)
    sarif = json.loads(result.stdout)
    texts = [
        location["message"]["text"]
        for run in sarif["runs"]
        for entry in run["results"]
        for location in entry.get("relatedLocations", [])
    ]
    assert "ROC310: a site of this problem" in texts


def test_a_leftover_build_of_sources_another_extension_compiles_is_never_built(tmp_path, scan_json):
    setup = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(\n"
        "    ext_modules=[CUDAExtension('{name}', [{sources}])],\n"
        "    cmdclass={{'build_ext': BuildExtension}},\n"
        ")\n"
    )
    write(
        tmp_path,
        "kernels/setup.py",
        setup.format(name="engine", sources="'csrc/attn/attn.cu', 'csrc/norm.cu'"),
    )
    write(
        tmp_path, "kernels/csrc/attn/setup.py", setup.format(name="attn_only", sources="'attn.cu'")
    )
    write(tmp_path, "kernels/csrc/attn/attn.cu", "__global__ void attn(float* x) { x[0] = 1; }\n")
    write(tmp_path, "kernels/csrc/norm.cu", "__global__ void norm(float* x) { x[0] = 2; }\n")
    write(tmp_path, "app/__init__.py", "import engine\n")
    shown = scan_json("--no-cache", ".", cwd=tmp_path)
    assert [f["path"] for f in shown["findings"] if f["rule"] == "ROC600"] == ["kernels/setup.py"]
    everything = scan_json("--no-cache", "--show-guarded", ".", cwd=tmp_path)
    leftover = [f for f in everything["findings"] if f["path"] == "kernels/csrc/attn/setup.py"]
    assert leftover and all(
        "a second build of sources that `engine` (kernels/setup.py) compiles" in f["guard"]
        for f in leftover
    )


def test_the_build_finding_names_the_imports_that_fail_on_rocm(scan_json):
    report = scan_json("--no-cache", ".", cwd=FIXTURE)
    build = next(f for f in report["findings"] if f["rule"] == "ROC600")
    sites = {(r["path"], r["line"]) for r in build["related"] if not r.get("rule")}
    assert {("quant_kernels/__init__.py", 3), ("quant_kernels/quantizer.py", 5)} <= sites
    assert (
        "modules every run loads import it at module level (quant_kernels/__init__.py:3"
        in build["message"]
    )


def test_imports_through_a_namespace_package_are_followed(tmp_path, scan_json):
    """``awq/`` has no ``__init__.py``: ``awq.quant.linear`` still names ``awq/quant/linear.py``,
    which a script imports at module level, so the extension it imports is the run's own."""
    write(
        tmp_path,
        "kernels/setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('engine', ['gemm.cu'])], "
        "cmdclass={'build_ext': BuildExtension})\n",
    )
    write(tmp_path, "kernels/gemm.cu", _PTX_KERNEL)
    write(tmp_path, "awq/quant/__init__.py", "")
    write(tmp_path, "awq/quant/linear.py", "import torch\nimport engine\n")
    write(tmp_path, "awq/entry.py", "from awq.quant.linear import torch\n")
    report = scan_json("--no-cache", ".", cwd=tmp_path)
    rows = _kernel_rows(report)
    assert ("ROC310", "kernels/gemm.cu", 3) in rows  # the run's own extension: a site of its own
    build = next(f for f in report["findings"] if f["rule"] == "ROC600")
    assert ("awq/quant/linear.py", 2) in {(r["path"], r["line"]) for r in build["related"]}


# --- code nothing uses ----------------------------------------------------------------------


def test_unused_definitions_are_found_and_used_ones_are_not():
    from migrator.kernels.dead import dead_definitions

    files = {
        "a.h": b"#define FINAL_MASK 0xffffffff\n#define FULL 0xffffffff\n"
        b"template <typename T>\n__device__ T lanes(T v)  // sum\n{\n  return v;\n}\n"
        b"#define LAUNCH(name) name##_kernel<<<1, 1>>>()\n"
        b"__global__ void scale_kernel() {}\n__global__ void by_python() {}\n",
        "b.cu": b'#include "a.h"\nvoid f() { unsigned m = FULL; LAUNCH(scale); }\n',
    }
    dead = dead_definitions(files, ["mod = RawModule(code=SRC).get_function('by_python')\n"])
    assert {(span.name, span.first, span.last, span.emitted) for span in dead["a.h"]} == {
        ("FINAL_MASK", 1, 1, False),
        ("lanes", 4, 7, False),
    }
    # a plain function nothing calls is unused too, but the compiler still builds it
    assert [(span.name, span.emitted) for span in dead["b.cu"]] == [("f", True)]
