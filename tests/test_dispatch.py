"""Functions that never run on ROCm because of where they are called: every call of a
module-level function in an NVIDIA-only branch (or after an early return on a ROCm build), and
the functions a build script never calls. Hidden by default, shown marked with the reason."""

from __future__ import annotations

from tests.conftest import write

BUILDER = """\
import torch


def assert_no_cuda_mismatch(name=""):
    torch_cuda_version = ".".join(torch.version.cuda.split(".")[:2])
    return torch_cuda_version


def cuda_flags():
    return torch.version.cuda.split(".")


class OpBuilder:
    def is_rocm_pytorch(self):
        return torch.version.hip is not None

    def compile_flags(self):
        if not self.is_rocm_pytorch():
            assert_no_cuda_mismatch(self.name)
        return cuda_flags()

    def builder(self):
        if self.is_rocm_pytorch():
            return None
        assert_no_cuda_mismatch(self.name)
"""

WHEEL = """\
import torch

IS_ROCM = torch.version.hip is not None


def get_wheel_url():
    if IS_ROCM:
        return get_rocm_wheel_url()
    return get_cuda_wheel_url()


def get_cuda_wheel_url():
    return "cu" + torch.version.cuda.split(".")[0]


def get_rocm_wheel_url():
    return "rocm" + torch.version.hip


def check_cuda_torch_binary_vs_bare_metal():
    return torch.version.cuda.split(".")


print(get_wheel_url())
"""


def _sites(report: dict) -> list[tuple[str, int, str, str]]:
    return [(f["path"], f["line"], f["rule"], f.get("guard", "")) for f in report["findings"]]


def test_a_function_called_only_in_nvidia_branches_is_guarded(tmp_path, scan_json):
    write(tmp_path, "op_builder/builder.py", BUILDER)
    shown = _sites(scan_json("--select", "ROC102", "--show-guarded", str(tmp_path)))
    why = (
        "NVIDIA-only: every call of `assert_no_cuda_mismatch` is in an NVIDIA-only branch"
        " (line 19, 25)"
    )
    assert shown == [
        ("op_builder/builder.py", 5, "ROC102", why),
        # called outside any vendor branch: runs on ROCm and raises there
        ("op_builder/builder.py", 10, "ROC102", ""),
    ]


def test_a_call_after_an_early_return_on_rocm_and_dead_code_of_a_build_script(tmp_path, scan_json):
    write(tmp_path, "hopper/setup.py", WHEEL)
    shown = _sites(scan_json("--select", "ROC102", "--show-guarded", str(tmp_path)))
    assert shown == [
        (
            "hopper/setup.py",
            13,
            "ROC102",
            "NVIDIA-only: every call of `get_cuda_wheel_url` is in an NVIDIA-only branch (line 9)",
        ),
        (
            "hopper/setup.py",
            21,
            "ROC102",
            "never runs: nothing in the project calls `check_cuda_torch_binary_vs_bare_metal`",
        ),
    ]
    assert scan_json("--select", "ROC102", str(tmp_path))["findings"] == []


def test_an_uncalled_function_of_a_module_is_still_reported(tmp_path, scan_json):
    # a library's function nobody in the project calls is its users' to call
    write(tmp_path, "pkg/wheels.py", WHEEL)
    shown = _sites(scan_json("--select", "ROC102", str(tmp_path)))
    assert ("pkg/wheels.py", 21, "ROC102", "") in shown
    assert ("pkg/wheels.py", 13, "ROC102", "") not in shown


def test_a_call_from_another_file_keeps_the_finding(tmp_path, scan_json):
    write(tmp_path, "op_builder/__init__.py", "")
    write(tmp_path, "op_builder/builder.py", BUILDER)
    write(
        tmp_path,
        "op_builder/check.py",
        "from op_builder.builder import assert_no_cuda_mismatch\n\nassert_no_cuda_mismatch()\n",
    )
    shown = _sites(scan_json("--select", "ROC102", str(tmp_path)))
    assert ("op_builder/builder.py", 5, "ROC102", "") in shown


def test_a_mention_outside_a_call_keeps_the_finding(tmp_path, scan_json):
    text = BUILDER + "\nCHECKS = [assert_no_cuda_mismatch]\n"
    write(tmp_path, "op_builder/builder.py", text)
    shown = _sites(scan_json("--select", "ROC102", str(tmp_path)))
    assert ("op_builder/builder.py", 5, "ROC102", "") in shown


TEST_UTILS = """\
import unittest

import pytest
import torch


def is_hopper():
    return torch.cuda.get_device_capability() == (9, 0)


def require_hopper(test_case):
    return unittest.skipUnless(is_hopper(), "test requires h100")(test_case)


def supports_fp8(test_case):
    major = torch.cuda.get_device_capability()[0]
    return unittest.skipUnless(major >= 9, "test requires h100 or newer")(test_case)


@pytest.fixture
def sm90():
    return torch.cuda.get_device_capability() == (9, 0)


def test_capability():
    assert torch.cuda.get_device_capability() == (9, 0)
"""


def test_test_helpers_nothing_calls_never_run(tmp_path, scan_json):
    write(tmp_path, "tests/e2e/utils.py", TEST_UTILS)
    write(
        tmp_path,
        "tests/e2e/test_fp8.py",
        "from tests.e2e.utils import supports_fp8\n\n\n@supports_fp8\ndef test_x():\n    pass\n",
    )
    shown = _sites(scan_json("--select", "ROC110", "--show-guarded", str(tmp_path)))
    assert shown == [
        (
            "tests/e2e/utils.py",
            8,
            "ROC110",
            "never runs: only `require_hopper`, which never run, call `is_hopper`",
        ),
        # used by a test in another file: runs
        ("tests/e2e/utils.py", 17, "ROC110", ""),
        # a fixture and a test: the test runner calls them
        ("tests/e2e/utils.py", 22, "ROC110", ""),
        ("tests/e2e/utils.py", 26, "ROC110", ""),
    ]


SCRIPT = """\
import argparse


def replace_attention(q, k, v):
    import xformers.ops

    return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None)


def replace_vae(vae, xformers):
    if xformers:
        # replace_attention(vae)  # errors at some resolutions
        vae.set_attention("sdpa")


def main():
    parser = argparse.ArgumentParser()
    replace_vae(None, parser.parse_args().xformers)


if __name__ == "__main__":
    main()
"""


def test_a_top_level_script_function_nothing_calls_never_runs(tmp_path, scan_json):
    """A script at the top of the repository (a ``__main__`` block, outside any package) is run,
    not imported: a function nothing calls (a commented-out call calls nothing) never runs; the
    same module inside a package is its users' to call."""
    write(tmp_path / "scripts", "gen_img.py", SCRIPT)
    write(tmp_path / "library", "pkg/gen_img.py", SCRIPT)
    shown = _sites(
        scan_json("--select", "ROC410,ROC411", "--show-guarded", str(tmp_path / "scripts"))
    )
    guard = "never runs: nothing in the project calls `replace_attention`"
    assert ("scripts/gen_img.py", 5, "ROC411", guard) in shown
    shown = _sites(
        scan_json("--select", "ROC410,ROC411", "--show-guarded", str(tmp_path / "library"))
    )
    assert ("library/pkg/gen_img.py", 5, "ROC411", "") in shown
    # a sibling script defining and calling its own function of that name changes nothing
    write(tmp_path / "scripts", "gen_img_sdxl.py", SCRIPT + "\nreplace_attention(1, 2, 3)\n")
    shown = _sites(
        scan_json("--select", "ROC410,ROC411", "--show-guarded", str(tmp_path / "scripts"))
    )
    assert ("scripts/gen_img.py", 5, "ROC411", guard) in shown
    # a sibling script that imports and calls it keeps the finding
    write(
        tmp_path / "scripts",
        "other.py",
        "from gen_img import replace_attention\n\nreplace_attention(1, 2, 3)\n",
    )
    shown = _sites(
        scan_json("--select", "ROC410,ROC411", "--show-guarded", str(tmp_path / "scripts"))
    )
    assert ("scripts/gen_img.py", 5, "ROC411", "") in shown
