"""Behaviour checks for the safe fixes of the detection, device-gate and sdpa rules: the rewritten
code must do on NVIDIA and CPU builds exactly what the original did (run on the installed torch)."""

from __future__ import annotations

import itertools

import pytest

from migrator.engine.engine import analyze
from migrator.engine.registry import rule_by_code
from migrator.model import Applicability
from tests.lazy_modules import LazyModule

torch = LazyModule("torch")


def _fix(code: str, source: str) -> str:
    analysis = analyze(
        source, "example.py", "python", (rule_by_code(code),), fix=Applicability.SAFE
    )
    assert analysis.fix_error is None, analysis.fix_error
    assert analysis.new_text is not None, f"{code} offered no safe fix for:\n{source}"
    return analysis.new_text


# ---------------------------------------------------------------------------------------------
# ROC101: `torch.version.cuda` truth tests widened with `torch.version.hip`

VERSION_TESTS = [
    "result = bool(torch.version.cuda)",
    "result = 'gpu' if torch.version.cuda else 'cpu'",
    "result = 'cpu' if not torch.version.cuda else 'gpu'",
    "result = torch.version.cuda is not None",
    "result = torch.version.cuda is None",
    "result = torch.version.cuda != None",
    "result = torch.version.cuda and torch.cuda.is_available() is not None",
    "result = not torch.version.cuda or True",
    "result = (torch.version.cuda is None) == False",
    "result = 1\nif torch.version.cuda:\n    result = 2",
    "result = 1\nif torch.version.cuda is None:\n    result = 2",
    "result = 1\nif x and torch.version.cuda:\n    result = 2",
    "result = 1\nwhile torch.version.cuda is not None and result < 3:\n    result += 1",
]

BUILDS = {"nvidia": ("12.4", None), "cpu": (None, None), "rocm": (None, "6.3.42131")}


def _run(source: str, monkeypatch: pytest.MonkeyPatch, build: str) -> object:
    cuda, hip = BUILDS[build]
    monkeypatch.setattr(torch.version, "cuda", cuda)
    monkeypatch.setattr(torch.version, "hip", hip)
    scope: dict[str, object] = {"x": True}
    exec(compile(source, "example.py", "exec"), scope)  # noqa: S102 - test input we wrote
    return scope["result"]


@pytest.mark.parametrize("body", VERSION_TESTS)
def test_cuda_version_fix_preserves_nvidia_and_cpu_behaviour(body, monkeypatch):
    source = f"import torch\n{body}\n"
    fixed = _fix("ROC101", source)
    assert "torch.version.hip" in fixed
    for build in ("nvidia", "cpu"):
        assert _run(fixed, monkeypatch, build) == _run(source, monkeypatch, build), build
    # on ROCm the fixed test now answers as on NVIDIA (a GPU build)
    assert _run(fixed, monkeypatch, "rocm") == _run(source, monkeypatch, "nvidia")


def test_cuda_version_fix_is_not_offered_for_version_guards():
    source = "import torch\nif torch.version.cuda:\n    v = float(torch.version.cuda)\n"
    analysis = analyze(
        source, "example.py", "python", (rule_by_code("ROC101"),), fix=Applicability.SAFE
    )
    assert analysis.findings == [] and analysis.new_text is None
    guard = analyze(source, "example.py", "python", (rule_by_code("ROC103"),))
    assert [f.rule for f in guard.findings] == ["ROC103"]


# ---------------------------------------------------------------------------------------------
# ROC150: sdp_kernel(...) -> sdpa_kernel([...]) selects the same backends

FLAGS = ("flash", "mem_efficient", "math", "cudnn")


def _state() -> tuple[bool, ...]:
    cuda = torch.backends.cuda
    return (
        cuda.flash_sdp_enabled(),
        cuda.mem_efficient_sdp_enabled(),
        cuda.math_sdp_enabled(),
        cuda.cudnn_sdp_enabled(),
    )


def _sdp_calls() -> list[str]:
    keywords = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
    calls = [""]
    for values in itertools.product((True, False), repeat=4):
        calls.append(", ".join(f"{k}={v}" for k, v in zip(keywords, values, strict=True)))
    calls += ["enable_flash=False", "enable_math=False, enable_mem_efficient=False", "True, False"]
    return calls


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("arguments", _sdp_calls())
def test_sdp_kernel_fix_selects_the_same_backends(arguments):
    source = (
        "import torch\n"
        f"with torch.backends.cuda.sdp_kernel({arguments}) as bound:\n"
        "    result = (state(), bound)\n"
    )
    fixed = _fix("ROC150", source)
    assert "sdp_kernel(" not in fixed.replace("sdpa_kernel(", "")
    before = _state()
    results = []
    for text in (source, fixed):
        scope: dict[str, object] = {"state": _state}
        exec(compile(text, "example.py", "exec"), scope)  # noqa: S102 - test input we wrote
        results.append(scope["result"])
        assert _state() == before  # both restore the previous flags on exit
    assert results[0] == results[1]


def test_fixed_sdpa_kernel_runs_attention_on_cpu():
    source = (
        "import torch\nimport torch.nn.functional as F\n"
        "def attend(q, k, v):\n"
        "    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):\n"
        "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
    )
    fixed = _fix("ROC150", source)
    assert "sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION])" in fixed
    scope: dict[str, object] = {}
    exec(compile(fixed, "example.py", "exec"), scope)  # noqa: S102 - test input we wrote
    q = torch.randn(1, 2, 4, 8, generator=torch.Generator().manual_seed(0))
    out = scope["attend"](q, q, q)  # type: ignore[operator]
    expected = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    # the math backend and CPU's default kernel round differently: float32 tolerance, not 1e-8
    assert torch.allclose(out, expected, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# ROC113: gcnArchName.split(':')[0]


@pytest.mark.parametrize(
    ("arch", "expected"),
    [("gfx942:sramecc+:xnack-", True), ("gfx942", True), ("NVIDIA H100 80GB HBM3", False)],
)
def test_gcn_arch_name_fix(arch, expected):
    source = "import torch\nresult = props.gcnArchName == 'gfx942'\n"
    fixed = _fix("ROC113", source)

    class Props:
        gcnArchName = arch

    scope: dict[str, object] = {"props": Props()}
    exec(compile(fixed, "example.py", "exec"), scope)  # noqa: S102 - test input we wrote
    assert scope["result"] is expected
