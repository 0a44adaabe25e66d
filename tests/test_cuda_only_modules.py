"""Modules written on a CUDA-only kernel toolkit (``migrator.reach.cuda_only``, ROC902), on small
projects shaped like FlashAttention-4's ``flash_attn/cute`` next to a ROCm-aware package: one
finding per CUDA-only folder at its toolkit import, the other findings in those modules and in
the tests importing them guarded (hidden, shown marked), never fixed, and followed by a warm
scan when the imported module changes."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write

# a kernel module written on the CuTe DSL, with a per-line finding (an OCP FP8 dtype, ROC120)
KERNEL = """\
import math

import cutlass
import cutlass.cute as cute
import torch

SCALE_DTYPE = torch.float8_e4m3fn


def tile(n):
    return math.ceil(n / 128)
"""
# a second module of the same component, importing the first (a consequence, not a root)
FORWARD = """\
import cutlass
import torch

from mypkg.cute.kernel import SCALE_DTYPE, tile

OUT = torch.float8_e4m3fn
"""
INIT = "from mypkg.cute.forward import OUT\n"
# the portable package: it branches on ROCm builds, and uses the component only lazily
PORTABLE = """\
import torch


def attention(q, k, v):
    if torch.version.hip:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    from mypkg.cute.forward import OUT
    return OUT
"""
TEST = """\
import pynvml

from mypkg.cute.forward import OUT


def test_scale():
    pynvml.nvmlInit()
    assert OUT is not None
"""
FP8 = "`torch.float8_e4m3fn`"


def _project(root: Path) -> None:
    write(root, "mypkg/__init__.py", "")
    write(root, "mypkg/attention.py", PORTABLE)
    write(root, "mypkg/cute/__init__.py", INIT)
    write(root, "mypkg/cute/kernel.py", KERNEL)
    write(root, "mypkg/cute/forward.py", FORWARD)
    write(root, "tests/test_cute.py", TEST)


def _sites(report: dict) -> list[tuple[str, int, int, str, str]]:
    return [
        (f["path"], f["line"], f["column"], f["rule"], f.get("guard", ""))
        for f in report["findings"]
    ]


def test_a_cuda_only_component_is_one_finding_at_its_toolkit_import(tmp_path, scan_json):
    _project(tmp_path)
    report = scan_json("--select", "ROC120,ROC201,ROC902", str(tmp_path))
    assert _sites(report) == [("mypkg/cute/kernel.py", 3, 1, "ROC902", "")]
    (finding,) = report["findings"]
    # nothing outside imports it at top level and the project has a ROCm path: info
    assert finding["severity"] == "info"
    assert "`cutlass`" in finding["message"]
    # nothing imports it at top level, the portable package only where it is asked for, and
    # the project has a ROCm path: NVIDIA-only by design, info
    assert "only where it is asked for (`mypkg/attention.py:7`)" in finding["message"]
    assert "ROCm code path (mypkg/attention.py:5)" in finding["message"]
    assert finding["related"] == []


def test_a_standalone_script_on_a_toolkit_is_an_error(tmp_path, scan_json):
    _project(tmp_path)
    script = "import tensorrt as trt\nimport torch\n\nX = torch.float8_e4m3fn\n"
    write(tmp_path, "examples/trt_export.py", script)
    write(tmp_path, "examples/trt_serve.py", "import os\n\n" + script)
    for name in ("train", "generate", "evaluate"):
        write(tmp_path, f"examples/{name}.py", "import torch\n")
    report = scan_json("--select", "ROC120,ROC201,ROC902", str(tmp_path))
    trt = [f for f in report["findings"] if f["path"].startswith("examples/")]
    # one finding for the folder's TensorRT scripts, the other as a related site
    assert [(f["path"], f["line"], f["severity"]) for f in trt] == [
        ("examples/trt_export.py", 1, "error")
    ]
    assert [(r["path"], r["line"]) for r in trt[0]["related"]] == [("examples/trt_serve.py", 3)]
    assert "port it to MIGraphX" in trt[0]["message"]


def test_findings_in_cuda_only_modules_are_guarded_and_shown_marked(tmp_path, scan_json):
    _project(tmp_path)
    shown = _sites(scan_json("--select", "ROC120,ROC201,ROC902", "--show-guarded", str(tmp_path)))
    assert (
        "mypkg/cute/kernel.py",
        7,
        15,
        "ROC120",
        "never runs on ROCm: the module imports `cutlass` at line 3",
    ) in shown
    via = "which needs `cutlass` (mypkg/cute/kernel.py:3)"
    assert (
        "mypkg/cute/forward.py",
        6,
        7,
        "ROC120",
        f"never runs on ROCm: the module imports `mypkg.cute.kernel` at line 4, {via}",
    ) in shown
    # the test of the component imports it at top level: CUDA-only by design too
    assert (
        "tests/test_cute.py",
        7,
        5,
        "ROC201",
        f"never runs on ROCm: the module imports `mypkg.cute.forward` at line 3, {via}",
    ) in shown
    # the portable package is not touched
    assert not [site for site in shown if site[0] == "mypkg/attention.py"]


def test_an_import_inside_try_does_not_make_a_module_cuda_only(tmp_path, scan_json):
    write(
        tmp_path,
        "mypkg/fp4.py",
        "import torch\n\ntry:\n    import cutlass\nexcept ImportError:\n    cutlass = None\n\n"
        "SCALE = torch.float8_e4m3fn\n",
    )
    write(
        tmp_path,
        "mypkg/doc.py",
        '"""Usage:\nimport cutlass\n"""\nimport torch\n\nX = torch.float8_e4m3fn\n',
    )
    sites = _sites(scan_json("--select", "ROC120,ROC201,ROC902", str(tmp_path)))
    assert sites == [("mypkg/doc.py", 6, 5, "ROC120", ""), ("mypkg/fp4.py", 8, 9, "ROC120", "")]


def test_a_portable_module_importing_it_at_top_level_is_named_not_hidden(tmp_path, scan_json):
    _project(tmp_path)
    write(
        tmp_path,
        "mypkg/train.py",
        "import torch\n\nfrom mypkg.cute.kernel import tile\n\nX = torch.float8_e4m3fn\n",
    )
    report = scan_json("--select", "ROC120,ROC201,ROC902", str(tmp_path))
    sites = _sites(report)
    assert ("mypkg/train.py", 5, 5, "ROC120", "") in sites
    (module,) = [f for f in report["findings"] if f["rule"] == "ROC902"]
    assert module["severity"] == "error"
    assert "`mypkg/train.py:3` imports it at top level" in module["message"]


def test_a_warm_scan_follows_a_change_of_the_imported_module(tmp_path, scan_json):
    _project(tmp_path)
    select = ("--select", "ROC120,ROC201,ROC902")
    assert [s[0] for s in _sites(scan_json(*select, str(tmp_path)))] == ["mypkg/cute/kernel.py"]
    # the kernel module is ported (no toolkit any more): its importers' findings come back,
    # though their own text (and so their cache entry) did not change
    write(
        tmp_path,
        "mypkg/cute/kernel.py",
        KERNEL.replace("import cutlass\nimport cutlass.cute as cute\n", ""),
    )
    write(tmp_path, "mypkg/cute/forward.py", FORWARD.replace("import cutlass\n", "\n"))
    sites = _sites(scan_json(*select, str(tmp_path)))
    assert ("tests/test_cute.py", 7, 5, "ROC201", "") in sites
    assert ("mypkg/cute/forward.py", 6, 7, "ROC120", "") in sites
    assert not [s for s in sites if s[3] == "ROC902"]


def test_fix_leaves_a_cuda_only_module_as_it_is(tmp_path, run_cli):
    _project(tmp_path)
    amp = "import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n"
    kernel = write(tmp_path, "mypkg/cute/kernel.py", KERNEL + amp.replace("import torch\n", ""))
    portable = write(tmp_path, "mypkg/amp.py", amp)
    before = kernel.read_text()
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert result.exit_code in (0, 1), result.output
    assert kernel.read_text() == before
    assert 'torch.amp.autocast("cuda")' in portable.read_text()


CONFTEST = """\
import os


def pytest_configure(config):
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
"""
DRIVER = """\
import os
import subprocess

TEST_TARGET = "tests/cute/test_cute.py"
PACKAGE = "mypkg/cute"


def free_gpus():
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).stdout
"""
PORTABLE_DRIVER = """\
import subprocess

TARGETS = ["tests/cute/test_cute.py", "mypkg/attention.py", "tests/test_attention.py"]


def free_gpus():
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).stdout
"""
PYPROJECT = """\
[project]
name = "mypkg-cute"
dependencies = ["nvidia-cutlass-dsl>=4.6", "torch"]

[[tool.uv.index]]
name = "pytorch-cu130"
url = "https://download.pytorch.org/whl/cu130"
"""
IMAGE = """\
FROM ubuntu:24.04
RUN pip install torch --index-url https://download.pytorch.org/whl/cu130
COPY mypkg/cute/ /tmp/cute/
"""


def test_files_serving_a_cuda_only_folder_are_guarded_with_the_reason(tmp_path, scan_json):
    _project(tmp_path)
    write(tmp_path, "tests/cute/test_cute.py", TEST)
    write(tmp_path, "tests/cute/test_cute_more.py", TEST)
    write(tmp_path, "tests/cute/conftest.py", CONFTEST)
    write(tmp_path, "tools/ci/run_ci.py", DRIVER)
    write(tmp_path, "tools/ci/run_all.py", PORTABLE_DRIVER)
    write(tmp_path, "tests/test_attention.py", "import torch\n")
    write(tmp_path, "mypkg/cute/pyproject.toml", PYPROJECT)
    write(tmp_path, "tools/ci/docker/Dockerfile", IMAGE)
    write(tmp_path, "docker/Dockerfile", IMAGE.replace("mypkg/cute/", "mypkg/"))
    select = ("--select", "ROC210,ROC700,ROC802,ROC865")
    shown = _sites(scan_json(*select, "--show-guarded", str(tmp_path)))
    root = "(mypkg/cute/kernel.py:3)"
    assert sorted(shown) == [
        ("docker/Dockerfile", 2, 35, "ROC865", ""),
        (
            "mypkg/cute/pyproject.toml",
            7,
            8,
            "ROC802",
            f"never runs on ROCm: it packages `mypkg/cute`, whose modules need `cutlass` {root}",
        ),
        (
            "tests/cute/conftest.py",
            5,
            5,
            "ROC700",
            "never runs on ROCm: it configures only the tests of `tests/cute`, which need"
            f" `cutlass` {root}",
        ),
        (
            "tools/ci/docker/Dockerfile",
            2,
            35,
            "ROC865",
            f"never runs on ROCm: the image is built for `mypkg/cute`, which needs `cutlass` {root}",
        ),
        # names a portable module and test besides the CUDA-only one: reported
        ("tools/ci/run_all.py", 7, 12, "ROC210", ""),
        (
            "tools/ci/run_ci.py",
            9,
            12,
            "ROC210",
            "never runs on ROCm: it runs or edits `tests/cute/test_cute.py` (CUDA-only), which"
            f" needs `cutlass` {root}",
        ),
    ]


REPRO = '''\
"""Minimal reproducer: cp.async.bulk triggers a racecheck hazard.

  python AI/repro_bulk.py                                             # correctness
  compute-sanitizer --tool=racecheck python AI/repro_bulk.py          # 1 error
"""
import cutlass
import torch

X = torch.float8_e4m3fn
'''


def test_a_reproducer_for_an_nvidia_debugging_tool_is_not_reported(tmp_path, scan_json):
    _project(tmp_path)
    write(tmp_path, "AI/repro_bulk.py", REPRO)
    # the same script without the usage line: a standalone script on the toolkit, an error
    write(tmp_path, "AI2/repro_bulk.py", REPRO.replace("compute-sanitizer", "time"))
    report = scan_json("--select", "ROC120,ROC902", "--show-guarded", str(tmp_path))
    shown = [site for site in _sites(report) if site[0].startswith("AI")]
    why = (
        "never runs on ROCm: a reproducer for `compute-sanitizer` (its docstring runs it under"
        " that NVIDIA tool) (AI/repro_bulk.py:6)"
    )
    assert shown == [
        ("AI/repro_bulk.py", 6, 1, "ROC902", why),
        ("AI/repro_bulk.py", 9, 5, "ROC120", why),
        ("AI2/repro_bulk.py", 6, 1, "ROC902", ""),
        (
            "AI2/repro_bulk.py",
            9,
            5,
            "ROC120",
            "never runs on ROCm: the module imports `cutlass` at line 6",
        ),
    ]


def test_the_rocm_word_gate_agrees_with_the_regex() -> None:
    """``names_rocm`` skips the regex on texts holding no token in any case: the characters
    beyond ASCII that case-insensitive matching pairs with a token's letters are exactly
    ``CASEFOLDED_INTO_TOKENS`` (derived here from the regex engine), and on texts built to sit
    at the edges the gate and the regex agree."""
    import re

    from migrator.knowledge.vendor_tokens import (
        CASEFOLDED_INTO_TOKENS,
        ROCM_TOKENS,
        ROCM_WORD,
        names_rocm,
    )

    letters = "".join(sorted(set("".join(ROCM_TOKENS))))
    beyond_ascii = "".join(
        chr(point) for point in range(0x80, 0x110000) if not 0xD800 <= point < 0xE000
    )
    assert set(re.findall(f"(?i)[{letters}]", beyond_ascii)) == CASEFOLDED_INTO_TOKENS
    texts = [
        "",
        "relationship = ship",
        "if torch.version.hip:",
        "elif IS_ROCM:",
        "if is_HIP():",
        "chip gfxinfo",
        "h\u0131p = 1",
        "\u0130S_H\u0130P = 1  # caf\u00e9",
        "caf\u00e9 = 'amdgpu'",
        "r\u00f6cm",
    ]
    for text in texts:
        assert names_rocm(text) is (ROCM_WORD.search(text) is not None), text


def test_modules_whose_findings_are_all_guarded_are_not_analysed(tmp_path, scan_json, monkeypatch):
    """A default scan hides guarded findings, and in a CUDA-only module every finding but the
    module's own is guarded: the other rules are not run there (the failing ROC120 proves it),
    and what the scan shows is what it showed when they ran; ``--show-guarded`` runs them."""
    from migrator.rules.fp8.ocp_fp8_dtype import OcpFp8Dtype

    _project(tmp_path)
    expected = scan_json("--no-cache", str(tmp_path))
    assert ("mypkg/cute/kernel.py", 3, 1, "ROC902", "") in _sites(expected)

    def fail(self, node):
        raise RuntimeError("ROC120 ran")

    monkeypatch.setattr(OcpFp8Dtype, "leave_Module", fail)
    for options in (("--no-cache",), (), ()):  # the second scan fills the cache, the third reads it
        report = scan_json(*options, str(tmp_path))
        assert report["findings"] == expected["findings"] and report["files"] == expected["files"]
    shown = scan_json("--show-guarded", str(tmp_path))
    assert [failure["path"] for failure in shown["files"]["failed"]] == [
        "mypkg/cute/forward.py",
        "mypkg/cute/kernel.py",
    ]
    # a suppression comment may name a rule left out: the file is analysed with every rule
    write(
        tmp_path,
        "mypkg/cute/kernel.py",
        KERNEL.replace("e4m3fn\n", "e4m3fn  # migrate: ignore[ROC120]\n"),
    )
    report = scan_json("--no-cache", str(tmp_path))
    assert [failure["path"] for failure in report["files"]["failed"]] == ["mypkg/cute/kernel.py"]
