"""A kernel that compiles to nothing on AMD is a blocker (issue #48): each ``__global__`` and
``__device__`` function is read as nvcc's device pass reads it for sm_80 and sm_90 and as hipcc
reads it for AMD; a body with code under CUDA and none (or a stub: ``#pragma message``, an
assertion, a constant ``return``) under HIP is reported by ``scan``, ``kernels`` and ``report``,
the PTX its guard held is no longer hidden, and ``kernels --compile`` does not pass its unit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from migrator.kernels import preproc
from migrator.kernels.archs import archs_in
from migrator.kernels.differential import empty_on_amd
from migrator.kernels.kept_bodies import empty_functions
from migrator.kernels.source import parse
from migrator.kernels.stubs import holds_code
from tests.attacks.conftest import migrate
from tests.conftest import FIXTURES, write

FIXTURE = FIXTURES / "quant_kernels"

#: The one-file probe of the issue: tensor-core PTX under an arch guard whose ``#else`` is a
#: ``#pragma message``, in an extension the package imports at module level.
PROBE_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void mma_gemm(float* c) {\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750\n"
    "  float d = 0.f;\n"
    '  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0}, {%1}, {%2}, {%0};"\n'
    '               : "+f"(d) : "r"(0), "r"(0));\n'
    "  c[threadIdx.x] = d;\n"
    "#else\n"
    '#pragma message("mma_gemm needs sm_75 or newer")\n'
    "#endif\n"
    "}\n"
    "void launch(float* c, cudaStream_t s) { mma_gemm<<<1, 32, 0, s>>>(c); }\n"
)


def _probe(root: Path) -> Path:
    write(root, "csrc/mma.cu", PROBE_KERNEL)
    write(root, "csrc/bind.cpp", "#include <torch/extension.h>\n")
    write(
        root,
        "setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        'setup(name="pk", packages=["pk"], ext_modules=[CUDAExtension("pk._mma", '
        'sources=["csrc/bind.cpp", "csrc/mma.cu"])], cmdclass={"build_ext": BuildExtension})\n',
    )
    write(root, "pk/__init__.py", "from pk import _mma\n")
    return root


def _empty(text: str) -> list[tuple[str, int]]:
    source = parse(text.encode())
    return [(item.name, source.line_of(item.start)) for item in empty_on_amd(source)]


# --- what counts as code --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ('#pragma message("needs sm_75")\n', False),
        ("#warning needs sm_75\n", False),
        ('printf("unsupported\\n");\nreturn;\n', False),
        ("assert(false);\n", False),
        ("(void)a; (void)b;\n", False),
        ("return 0.f;\n", False),
        ("return static_cast<half>(0);\n", False),
        ("x[i] = 0.f;\n", True),
        ("#define TILE 64\n", True),
        ("return a + b;\n", True),
        ("return std::numeric_limits<float>::infinity();\n", True),
        ("__syncthreads();\n", True),
    ],
)
def test_a_stub_is_not_code(body, code):
    assert holds_code(body.encode()) is code


def test_the_evaluator_reads_each_nvidia_architecture():
    source = parse(b"#if __CUDA_ARCH__ >= 900\nhopper();\n#else\nampere();\n#endif\n")
    assert preproc.platform_values(source, hip=False, arch=800) == [[0, 1]]
    assert preproc.platform_values(source, hip=False, arch=900) == [[1, 0]]
    assert preproc.platform_values(source, hip=True) == [[0, 1]]
    assert preproc.platform_values(source, hip=False) == [[None, None]]


# --- which functions compile to nothing ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # no #else: nothing for AMD
        (
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = 1;\n#endif\n}\n",
            [("k", 1)],
        ),
        # the only AMD branch is a #pragma message (the issue's shape)
        (PROBE_KERNEL, [("mma_gemm", 2)]),
        # a device helper whose AMD branch returns a dummy
        (
            "__device__ float ex2(float v) {\n#if __CUDA_ARCH__ >= 750\n"
            '  float y; asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(v)); return y;\n'
            "#else\n  return 0.f;\n#endif\n}\n",
            [("ex2", 1)],
        ),
        # an #if around whole definitions, the AMD one a stub: reported at the stub
        (
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
            "__global__ void k(float* x) { x[0] = 1; }\n#else\n"
            '__global__ void k(float* x) { printf("unsupported\\n"); }\n#endif\n',
            [("k", 4)],
        ),
        # the AMD branch is a macro of the file that only prints
        (
            '#define UNSUPPORTED printf("needs sm_80");\n'
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = 1;\n#else\n"
            "  UNSUPPORTED\n#endif\n}\n",
            [("k", 2)],
        ),
        # a kernel a macro declares, named by the macro's first argument
        (
            "#define DEFINE_KERNEL(name, ...) template <__VA_ARGS__> __global__ void name(float* x)\n"
            "DEFINE_KERNEL(fwd_kernel, int N) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = N;\n#endif\n}\n",
            [("fwd_kernel", 2)],
        ),
        # excluded from ROCm builds, with an assertion in its place
        (
            "__global__ void k(float* x) {\n#ifndef USE_ROCM\n  x[0] = 1;\n#else\n"
            "  assert(false);\n#endif\n}\n",
            [("k", 1)],
        ),
        # only sm_90 gives it code
        (
            "__global__ void k(float* x) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
            "  x[0] = 1;\n#endif\n}\n",
            [("k", 1)],
        ),
        # a portable #else, an AMD #elif, a condition true on HIP: code on AMD
        (
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = 1;\n#else\n"
            "  x[0] = 2;\n#endif\n}\n",
            [],
        ),
        (
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = 1;\n"
            "#elif defined(__HIP_PLATFORM_AMD__)\n  x[0] = 3;\n#endif\n}\n",
            [],
        ),
        (
            "__global__ void k(float* x) {\n#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n"
            "  x[0] = 1;\n#endif\n}\n",
            [],
        ),
        # empty for the NVIDIA architectures built too (sm_100 only; older than sm_70 only)
        (
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 1000\n  x[0] = 1;\n#endif\n}\n",
            [],
        ),
        (
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ < 700\n  x[0] = 1;\n#endif\n}\n",
            [],
        ),
        # a project macro whose value is unknown: never taken for empty on AMD
        (
            "__global__ void k(float* x) {\n#ifdef ENABLE_FAST\n  x[0] = 1;\n#endif\n}\n",
            [],
        ),
        # a constant answer on both sides; a host path hipcc compiles
        (
            "__device__ bool bf16() {\n#if __CUDA_ARCH__ >= 800\n  return true;\n#else\n"
            "  return false;\n#endif\n}\n",
            [],
        ),
        (
            "__host__ __device__ int f() {\n#ifndef __CUDA_ARCH__\n  return std::rand();\n"
            "#else\n  return threadIdx.x;\n#endif\n}\n",
            [],
        ),
        # a host function is no kernel
        ("void f(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = 1;\n#endif\n}\n", []),
    ],
)
def test_functions_with_code_for_nvidia_and_none_for_amd(text, found):
    assert _empty(text) == found


def test_an_else_with_only_a_pragma_no_longer_hides_the_ptx_it_guards():
    source = parse(PROBE_KERNEL.encode())
    ptx = source.data.index(b"asm volatile")
    assert not any(start <= ptx < end for start, end, _ in preproc.skipped_on_hip(source))
    assert preproc.no_amd_path(source, ptx) is not None


def test_an_else_with_only_the_projects_assertion_macro_is_no_amd_path():
    """SageAttention's mma.cuh: ldmatrix PTX under a macro CUDA >= 11 defines, ``#else`` a
    ``RUNTIME_ASSERT("Unsupported CUDA architecture ...")``: on AMD the function is an assert."""
    source = parse(
        b"#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 750)\n#define LDMATRIX_ENABLED\n#endif\n"
        b"#ifdef DEBUG_BREAK\n#define RUNTIME_ASSERT(x) __brkpt()\n#else\n"
        b"#define RUNTIME_ASSERT(x) assert(0 && x)\n#endif\n"
        b"__device__ void ld(unsigned* r, unsigned p) {\n#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 750)\n"
        b'  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"'
        b' : "=r"(r[0]), "=r"(r[1]) : "r"(p));\n'
        b'#else\n  RUNTIME_ASSERT("Unsupported CUDA architecture for ldmatrix");\n#endif\n}\n'
    )
    assert [empty.name for empty in empty_on_amd(source)] == ["ld"]
    assert not holds_code(b'RUNTIME_ASSERT("unsupported");')
    assert holds_code(b"ASSERT_SIZE(x);\nx[0] = 1;")


@pytest.mark.parametrize(
    ("text", "archs"),
    [
        ('cc_flag += ["-gencode", "arch=compute_80,code=sm_80"]', (800,)),
        ('os.environ["TORCH_CUDA_ARCH_LIST"] = "7.5;8.0;8.6+PTX;9.0a"', (750, 800, 860, 900)),
        ("set(CMAKE_CUDA_ARCHITECTURES 80 86 90a)", (800, 860, 900)),
        (
            'set_target_properties(k PROPERTIES CUDA_ARCHITECTURES "80-real;100-virtual")',
            (800, 1000),
        ),
        ('extra_compile_args={"nvcc": ["-arch=sm_90a"]}', (900,)),
        ("setup(name='x')", ()),
    ],
)
def test_the_architectures_come_from_the_build(text, archs):
    assert archs_in([text]) == archs


def test_a_kernel_with_code_only_for_the_architecture_the_build_names(tmp_path):
    """sm_100 only: empty under the default sm_80/sm_90, reported once the build says sm_100."""
    kernel = (
        "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 1000\n  x[0] = 1;\n#endif\n}\n"
        "void launch(float* x) { k<<<1, 1>>>(x); }\n"
    )
    write(tmp_path, "csrc/k.cu", kernel)
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(name='k')\n")
    assert "ROC361" not in migrate("scan", "--no-cache", ".", cwd=tmp_path).stdout
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\n"
        'NVCC = ["-gencode", "arch=compute_100,code=sm_100"]\nsetup(name="k")\n',
    )
    done = migrate("scan", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    (finding,) = [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "ROC361"]
    assert "(sm_100)" in finding["message"]
    # the reading says what read it: our evaluator, not a compiler's preprocessor
    assert "own preprocessor evaluator" in finding["message"]


# --- scan, kernels, report: the real command line ------------------------------------------


def test_scan_reports_the_fixture_kernel_as_a_blocker_with_its_ptx():
    done = migrate("scan", "--no-cache", "--format", "json", ".", cwd=FIXTURE)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    (kernel,) = [f for f in findings if f["path"] == "csrc/mma_gemm.cu"]
    assert (kernel["rule"], kernel["line"], kernel["severity"]) == ("ROC361", 6, "error")
    assert "compiles to nothing" in kernel["message"] and "`mma_tile`" in kernel["message"]
    # the tensor-core PTX and the guard are sites of the one problem, not hidden as guarded
    assert {(r["rule"], r["line"]) for r in kernel["related"]} == {("ROC311", 9), ("ROC360", 7)}


def test_the_issue_probe_is_blocked_not_ported_mechanically(tmp_path):
    project = _probe(tmp_path / "probe")
    done = migrate("kernels", "--no-hipify", "--format", "json", str(project))
    assert done.returncode == 1, done.stderr
    (extension,) = json.loads(done.stdout)["extensions"]
    assert extension["label"] == "blocked"
    assert extension["blockers"] == {"compiles-to-nothing": 1}
    (site,) = extension["sites"]
    assert (site["path"], site["line"], site["rule"]) == ("csrc/mma.cu", 2, "ROC361")
    text = migrate("kernels", "--no-hipify", str(project))
    assert "pk._mma (setup.py:3, no ROCm branch): blocked" in text.stdout
    assert "on AMD it compiles to nothing" in text.stdout


def test_kernels_lists_the_fixture_extension_as_blocked():
    done = migrate("kernels", "--no-hipify", "--format", "json", str(FIXTURE))
    assert done.returncode == 1, done.stderr
    extensions = {e["name"]: e for e in json.loads(done.stdout)["extensions"]}
    assert extensions["quant_kernels._mma"]["label"] == "blocked"
    assert extensions["quant_kernels._mma"]["blockers"] == {"compiles-to-nothing": 1}


def test_report_blocks_the_project_on_the_kernel_that_compiles_to_nothing(tmp_path):
    project = _probe(tmp_path / "probe")
    done = migrate("report", "--format", "json", "--no-cache", str(project))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    data = document["projects"][0] if "projects" in document else document
    assert data["verdict"] == "blocked"
    assert any("ROC361" in item["rules"] for item in data["deciding"])
    markdown = migrate("report", "--format", "md", "--no-cache", str(FIXTURE))
    assert "kernel-compiles-to-nothing-on-amd (ROC361)" in markdown.stdout
    assert "| `quant_kernels._mma` | setup.py:20 | blocked |" in markdown.stdout


# --- the compile check: a unit passes only if its kernels kept their bodies -----------------


def test_a_unit_whose_kernel_compiles_to_nothing_has_an_empty_function():
    units = ["csrc/dequant.cu", "csrc/lane_ptx.cu", "csrc/mma_gemm.cu"]
    files = sorted(
        p.relative_to(FIXTURE).as_posix() for p in (FIXTURE / "csrc").iterdir() if p.is_file()
    )
    found = empty_functions(FIXTURE, units, files)
    assert list(found) == ["csrc/mma_gemm.cu"]
    (item,) = found["csrc/mma_gemm.cu"]
    assert (item.path, item.line) == ("csrc/mma_gemm.cu", 6)
    assert "`mma_tile` compiled to nothing" in item.message


def test_an_empty_kernel_in_an_included_header_holds_its_unit_back(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    write(root, "csrc/tile.cuh", PROBE_KERNEL.replace("void launch", "inline void launch"))
    write(root, "csrc/user.cu", '#include "tile.cuh"\n')
    found = empty_functions(root, ["csrc/user.cu"], ["csrc/tile.cuh", "csrc/user.cu"])
    assert [(i.path, i.line) for i in found["csrc/user.cu"]] == [("csrc/tile.cuh", 2)]
