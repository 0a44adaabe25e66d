"""hip-on-nvidia's comparison and planning with torch on the CPU (CI has no nvcc and no GPU):
outputs compared per dtype with the first differing element named, a planted swapped index
in a "translation" fails with the op and element named, in-place outputs are compared, an op
whose original does not repeat itself is not judged, and the real fixture's hipified copy is
planned as nvcc builds it (``.hip`` sources as CUDA, migrate's patched HIP headers and torch's
header shim first)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from migrator.kernels.hip_nvidia.compare import compare_values
from migrator.kernels.hip_nvidia.run import MAPPING_FILE, _shim, _translate, plan, summarise
from migrator.kernels.hip_nvidia.runner import make_argument, run_call

ROOT = Path(__file__).resolve().parents[1]


def test_float16_within_its_tolerance_matches_and_int_compares_exactly() -> None:
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16)
    near = compare_values("return", a, a + 0.0009)
    assert near[0].equal
    ints = compare_values("return", torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    assert not ints[0].equal and ints[0].first_index == [2] and ints[0].mismatched == 1


def test_nan_at_the_same_place_is_equal_and_shapes_must_agree() -> None:
    a = torch.tensor([float("nan"), 1.0])
    assert compare_values("return", a, a.clone())[0].equal
    wrong = compare_values("return", a, torch.zeros(3))[0]
    assert not wrong.equal and "float32[2]" in wrong.note


def _dequant(swap: bool) -> Any:
    def dequant(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        rows, cols = q.shape
        out = torch.empty(q.shape, dtype=torch.float16)
        for row in range(rows):
            for col in range(cols):
                out[row, col] = q[row, col].float() * scale[col if swap else row].float()
        return out

    return SimpleNamespace(dequant=dequant)


CALL = {
    "extension": "quant_kernels._dequant",
    "op": "dequant",
    "device": "cpu",
    "args": [
        {"randint": [6, 6], "low": -128, "high": 128, "dtype": "int8"},
        {"rand": [6], "low": 0.001, "high": 0.05, "dtype": "float16"},
    ],
}


def test_identical_code_matches() -> None:
    record = run_call(CALL, _dequant(False), _dequant(False))
    assert record["status"] == "match", record
    assert record["outputs"][0]["name"] == "return"


def test_a_planted_swapped_index_fails_with_the_op_and_element_named() -> None:
    record = run_call(CALL, _dequant(False), _dequant(True))
    assert record["status"] == "mismatch"
    line = record["differences"][0]
    assert line.startswith("dequant: return[")
    assert "original" in line and "translated" in line and "element(s) outside" in line
    # the named element is off the diagonal (row == col reads the same scale either way)
    row, col = record["outputs"][0]["first_index"]
    assert row != col and line.startswith(f"dequant: return[{row}, {col}] original ")


def test_outputs_written_into_arguments_are_compared() -> None:
    def forward(swap: bool) -> Any:
        def op(x: torch.Tensor, out: torch.Tensor) -> int:
            out.copy_(x.flip(0) if swap else x)
            return 0

        return SimpleNamespace(forward=op)

    call = {
        "extension": "e",
        "op": "forward",
        "device": "cpu",
        "args": [{"arange": [4]}, {"zeros": [4]}],
    }
    assert run_call(call, forward(False), forward(False))["status"] == "match"
    record = run_call(call, forward(False), forward(True))
    assert record["status"] == "mismatch"
    assert record["differences"][0].startswith("forward: arg 1[0] original 0.0 vs translated 3.0")


def test_an_original_that_does_not_repeat_itself_is_not_judged() -> None:
    counter = iter(range(100))

    def noisy(x: torch.Tensor) -> torch.Tensor:
        return x + next(counter)

    call = {"extension": "e", "op": "noisy", "device": "cpu", "args": [{"zeros": [2]}]}
    record = run_call(call, SimpleNamespace(noisy=noisy), SimpleNamespace(noisy=noisy))
    assert record["status"] == "not judged"
    assert "different outputs on the same inputs" in record["error"]


def test_declared_inputs_are_the_same_for_the_same_seed() -> None:
    spec = {"randint": [3, 4], "high": 10, "dtype": "int32"}
    first = make_argument(spec, torch.Generator().manual_seed(0), "cpu")
    again = make_argument(spec, torch.Generator().manual_seed(0), "cpu")
    assert first.dtype == torch.int32 and list(first.shape) == [3, 4]
    assert torch.equal(first, again)


def test_a_run_with_an_uncalled_op_or_a_defect_does_not_pass() -> None:
    base = {"calls": [{"status": "match"}], "builds": [{"ok": True}], "uncalled": [], "defects": []}
    assert summarise(dict(base, device="NVIDIA H200", warp_size=32))["passed"]
    summary = summarise(dict(base, uncalled=[{"extension": "e", "op": "x"}]))
    assert not summary["passed"]
    assert not summarise(dict(base, defects=[{"path": "a.cu"}]))["passed"]
    assert summarise(dict(base, device="NVIDIA H200", warp_size=32))["statement"] == (
        "HIP over CUDA on NVIDIA GPU NVIDIA H200, warp size 32: proves the translation, "
        "not AMD behaviour"
    )


def test_the_fixtures_translation_is_planned_for_nvcc(tmp_path: Path) -> None:
    fixture = ROOT / "fixtures" / "quant_kernels"
    extension = {
        "name": "quant_kernels._dequant",
        "sources": ["csrc/dequant_binding.cpp", "csrc/dequant.cu"],
        "files": ["csrc/dequant_binding.cpp", "csrc/dequant.cu"],
    }
    workspace = tmp_path / "ws"
    workspace.mkdir()
    mapping = _translate(fixture, extension["files"], workspace, None, 300)
    assert mapping == {
        "csrc/dequant.cu": "csrc/dequant.hip",
        "csrc/dequant_binding.cpp": "csrc/dequant_binding_hip.cpp",
    }
    assert (workspace / "translated" / MAPPING_FILE).is_file()
    shim = _shim(workspace, 300)
    assert (shim / "ATen" / "hip" / "HIPContext.h").read_text() == (
        "#pragma once\n#include <ATen/cuda/CUDAContext.h>\n"
    )
    hip_include = tmp_path / "include"
    [planned] = plan(workspace, [extension], mapping, hip_include, shim)
    translated = planned["translated"]
    assert [Path(s).name for s in translated["sources"]] == [
        "dequant_binding_hip.cpp",
        "dequant.hip.cu",
    ]
    assert "hipLaunchKernelGGL" in Path(translated["sources"][1]).read_text()
    assert translated["include"][:2] == [str(hip_include), str(shim)]
    assert [Path(s).name for s in planned["original"]["sources"]] == [
        "dequant_binding.cpp",
        "dequant.cu",
    ]
    assert planned["module"] == "quant_kernels__dequant"
