"""The pre-flight checks. Each returns pass, fail (with the fix) or n/a, and cites its facts.

Fact ids (``[P1]``, ``[E5]``, …) are sources of the facts document shipped with the package
(``docs/rocm-facts.md`` §11, ``migrator/data/rocm-facts.md``); a test checks that each one exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.doctor.system import (
    Agent,
    Host,
    ToolResult,
    parse_agents,
    rocm_runtime_version,
    torch_report,
    version_tuple,
)

PASS, FAIL, NA = "pass", "fail", "n/a"

TORCH_ROCM = {
    (2, 0): "5.4",
    (2, 1): "5.6",
    (2, 2): "5.7",
    (2, 3): "6.0",
    (2, 4): "6.1",
    (2, 5): "6.2",
    (2, 6): "6.2.4",
    (2, 7): "6.3",
    (2, 8): "6.4",
    (2, 9): "6.4",
    (2, 10): "7.1",
    (2, 11): "7.2",
    (2, 12): "7.2",
    (2, 13): "7.2",
    (2, 14): "7.14",
}
"""Stable ROCm version of each torch release's wheels [P17][K1] (rocm-facts.md §9)."""

OVERRIDES = {"gfx103": "10.3.0", "gfx110": "11.0.0"}
"""``HSA_OVERRIDE_GFX_VERSION`` values for RDNA2/RDNA3 families [E5] (rocm-facts.md §6)."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of one check."""

    id: str
    title: str
    status: str
    detail: str
    fix: str | None = None
    facts: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "facts": list(self.facts),
        }


@dataclass(slots=True)
class Facts:
    """What was read from the machine once, shared by the checks."""

    host: Host
    rocminfo: ToolResult
    smi: ToolResult
    agents: list[Agent]
    torch: dict[str, Any]
    runtime_version: str | None
    runtime_source: str
    needs: dict[str, list[str]] = field(default_factory=dict)
    project: Path | None = None

    @property
    def gpus(self) -> list[Agent]:
        return [agent for agent in self.agents if agent.is_gpu]

    @property
    def torch_ok(self) -> bool:
        return "error" not in self.torch


def gather(host: Host, needs: dict[str, list[str]], project: Path | None) -> Facts:
    """Run the tools and the torch subprocess once."""
    rocminfo = host.run("rocminfo")
    smi = host.run("amd-smi", "list") if host.which("amd-smi") else host.run("rocm-smi")
    version, source = rocm_runtime_version(host)
    return Facts(
        host=host,
        rocminfo=rocminfo,
        smi=smi,
        agents=parse_agents(rocminfo.stdout) if rocminfo.found else [],
        torch=torch_report(host, sorted(needs)),
        runtime_version=version,
        runtime_source=source,
        needs=needs,
        project=project,
    )


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def check_tools(facts: Facts) -> CheckResult:
    """rocminfo and amd-smi (or the older rocm-smi) are installed."""
    title = "ROCm tools installed (rocminfo, amd-smi / rocm-smi)"
    missing = []
    if not facts.rocminfo.found:
        missing.append("rocminfo")
    if not facts.smi.found:
        missing.append("amd-smi (or rocm-smi)")
    if missing:
        return CheckResult(
            "rocm-tools",
            title,
            FAIL,
            f"not on PATH: {', '.join(missing)}",
            "install ROCm (AMD's install guide for your distribution) and put "
            "/opt/rocm/bin on PATH",
            ("A3", "A4"),
        )
    return CheckResult(
        "rocm-tools",
        title,
        PASS,
        f"{facts.host.which('rocminfo')}, {facts.host.which(facts.smi.name)}",
        facts=("A3", "A4"),
    )


def check_driver(facts: Facts) -> CheckResult:
    """The amdgpu kernel driver is loaded (rocminfo / the smi tool can talk to it)."""
    title = "amdgpu driver loaded"
    if not facts.rocminfo.found and not facts.smi.found:
        return CheckResult("amdgpu-driver", title, NA, "no ROCm tool to ask (see rocm-tools)")
    problems = []
    info_text = facts.rocminfo.text
    if facts.rocminfo.found and ("NOT loaded" in info_text or facts.rocminfo.exit_code != 0):
        said = _first_line(_strip(facts.rocminfo.stdout)) or _first_line(facts.rocminfo.stderr)
        problems.append(f"rocminfo exited {facts.rocminfo.exit_code}: {said}")
    smi_text = facts.smi.text
    if facts.smi.found and ("Driver not initialized" in smi_text or facts.smi.exit_code != 0):
        line = next(
            (ln for ln in smi_text.splitlines() if "Driver" in ln or "ERROR" in ln),
            _first_line(smi_text),
        )
        problems.append(f"{facts.smi.name}: {line.strip()}")
    if problems:
        return CheckResult(
            "amdgpu-driver",
            title,
            FAIL,
            "; ".join(problems),
            "install the amdgpu kernel driver (amdgpu-dkms) and reboot; in a "
            "container pass --device /dev/kfd --device /dev/dri",
            ("C1",),
        )
    return CheckResult("amdgpu-driver", title, PASS, "rocminfo and the smi tool reach the driver")


def _strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def check_gpu_visible(facts: Facts) -> CheckResult:
    """rocminfo lists at least one GPU agent (``Name: gfx…``)."""
    title = "AMD GPU visible (gfx agent in rocminfo)"
    if not facts.rocminfo.found:
        return CheckResult("gpu-visible", title, NA, "rocminfo not installed (see rocm-tools)")
    gpus = facts.gpus
    if not gpus:
        return CheckResult(
            "gpu-visible",
            title,
            FAIL,
            "rocminfo lists no GPU agent",
            "check the driver (amdgpu-driver), HIP_VISIBLE_DEVICES / "
            "ROCR_VISIBLE_DEVICES, and the container's --device flags",
            ("E1", "E2", "C1"),
        )
    listed = ", ".join(f"{gpu.name} ({gpu.marketing_name})" for gpu in gpus)
    return CheckResult("gpu-visible", title, PASS, listed, facts=("D1",))


def check_groups(facts: Facts) -> CheckResult:
    """The user is in the ``video`` and ``render`` groups (device file access)."""
    title = "user in the video and render groups"
    if facts.host.user_id() == 0:
        return CheckResult("groups", title, PASS, "running as root (device files accessible)")
    groups = set(facts.host.groups())
    missing = [name for name in ("video", "render") if name not in groups]
    if missing:
        return CheckResult(
            "groups",
            title,
            FAIL,
            f"not in: {', '.join(missing)}",
            f"sudo usermod -aG {','.join(missing)} $USER, then log in again",
            ("C1",),
        )
    return CheckResult("groups", title, PASS, "video, render")


def _wheel_advice(torch_version: str | None) -> str:
    numbers = version_tuple(torch_version)
    rocm = TORCH_ROCM.get(numbers) if numbers else None
    if rocm and numbers:
        return (
            f"install the ROCm wheel of torch {numbers[0]}.{numbers[1]} (built for ROCm "
            f"{rocm}): pip install torch --index-url "
            f"https://download.pytorch.org/whl/rocm{rocm}"
        )
    return "install a ROCm wheel of torch (index https://download.pytorch.org/whl/rocmX.Y)"


def check_torch_build(facts: Facts) -> CheckResult:
    """torch is a ROCm build (``torch.version.hip`` is a string)."""
    title = "torch is a ROCm build (torch.version.hip)"
    torch = facts.torch
    if not facts.torch_ok:
        return CheckResult(
            "torch-rocm-build",
            title,
            FAIL,
            str(torch.get("error")),
            _wheel_advice(None),
            ("P1", "P17"),
        )
    if torch.get("hip"):
        return CheckResult(
            "torch-rocm-build",
            title,
            PASS,
            f"torch {torch.get('torch')}, HIP {torch.get('hip')}",
            facts=("P1",),
        )
    kind = f"CUDA {torch.get('cuda')}" if torch.get("cuda") else "CPU-only"
    return CheckResult(
        "torch-rocm-build",
        title,
        FAIL,
        f"torch {torch.get('torch')} is a {kind} build (torch.version.hip is None)",
        _wheel_advice(str(torch.get("torch"))),
        ("P1", "P17"),
    )


def check_version_match(facts: Facts) -> CheckResult:
    """torch's ROCm (HIP) version matches the installed ROCm runtime (major.minor)."""
    title = "torch's ROCm version matches the ROCm runtime"
    hip = facts.torch.get("hip") if facts.torch_ok else None
    if not hip:
        return CheckResult("rocm-version-match", title, NA, "torch is not a ROCm build")
    runtime = version_tuple(facts.runtime_version)
    if runtime is None:
        return CheckResult(
            "rocm-version-match",
            title,
            NA,
            f"ROCm runtime version not found ({facts.host.rocm_root()}/.info/"
            "version, amd-smi version)",
        )
    built = version_tuple(str(hip))
    detail = f"torch HIP {hip}; runtime {facts.runtime_version} ({facts.runtime_source})"
    if built == runtime:
        return CheckResult("rocm-version-match", title, PASS, detail, facts=("P17",))
    return CheckResult(
        "rocm-version-match",
        title,
        FAIL,
        detail,
        f"install the torch wheel built for ROCm {runtime[0]}.{runtime[1]} "
        f"(https://download.pytorch.org/whl/rocm{runtime[0]}.{runtime[1]}) or "
        "the ROCm release that matches torch",
        ("P17", "K1"),
    )


def check_torch_gpu(facts: Facts) -> CheckResult:
    """``torch.cuda.is_available()`` is True (ROCm reuses the ``cuda`` device type)."""
    title = "torch.cuda.is_available()"
    if not facts.torch_ok:
        return CheckResult("torch-gpu", title, NA, "torch not importable")
    if facts.torch.get("available"):
        devices = ", ".join(
            f"{d.get('name')} ({d.get('arch')})" for d in facts.torch.get("devices") or []
        )
        return CheckResult("torch-gpu", title, PASS, devices or "available", facts=("P1",))
    fix = (
        "install a ROCm build of torch first (torch-rocm-build)"
        if not facts.torch.get("hip")
        else "check amdgpu-driver, gpu-visible and groups; unset a HIP_VISIBLE_DEVICES / "
        "CUDA_VISIBLE_DEVICES that hides the GPU"
    )
    return CheckResult("torch-gpu", title, FAIL, "False", fix, ("P1", "E1"))


def _consumer(arch: str) -> bool:
    return arch.startswith(("gfx10", "gfx11", "gfx12"))


def check_consumer_gpu(facts: Facts) -> CheckResult:
    """A consumer Radeon (RDNA) card has kernels in this torch build, or an override is set."""
    title = "consumer Radeon GPU (HSA_OVERRIDE_GFX_VERSION)"
    archs = sorted({gpu.name.split(":")[0] for gpu in facts.gpus if _consumer(gpu.name)})
    archs += sorted(
        {
            str(d.get("arch") or "").split(":")[0]
            for d in facts.torch.get("devices") or []
            if _consumer(str(d.get("arch") or ""))
        }
        - set(archs)
    )
    if not archs:
        return CheckResult("consumer-gpu", title, NA, "no consumer (gfx10xx/11xx/12xx) GPU found")
    override = facts.host.env.get("HSA_OVERRIDE_GFX_VERSION")
    if override:
        return CheckResult(
            "consumer-gpu",
            title,
            PASS,
            f"{', '.join(archs)} with HSA_OVERRIDE_GFX_VERSION={override} "
            "(unofficial; Linux only; applies to every GPU in the process)",
            facts=("E5",),
        )
    arch_list = [str(item) for item in facts.torch.get("arch_list") or []]
    missing = (
        [arch for arch in archs if arch not in arch_list]
        if arch_list
        else [arch for arch in archs if arch not in ("gfx1030", "gfx1100")]
    )
    source = "this torch build's arch list" if arch_list else "the override targets"
    if not missing:
        return CheckResult(
            "consumer-gpu",
            title,
            PASS,
            f"{', '.join(archs)}: consumer Radeon card, listed in {source}; no "
            "override needed (consumer cards are not Instinct-class targets: "
            "expect gaps, e.g. experimental SDPA kernels)",
            facts=("D3", "T1", "P8"),
        )
    values = sorted({OVERRIDES[arch[:6]] for arch in missing if arch[:6] in OVERRIDES})
    if values:
        fix = (
            f"export HSA_OVERRIDE_GFX_VERSION={values[0]} (unofficial: the runtime treats the "
            "GPU as that ISA; Linux only; applies to every GPU in the process)"
        )
    else:
        fix = "use a torch/ROCm build that includes this GPU (no known override value)"
    return CheckResult(
        "consumer-gpu", title, FAIL, f"{', '.join(missing)} not in {source}", fix, ("E5", "D3")
    )


def _package_check(
    facts: Facts,
    name: str,
    title: str,
    fix: str,
    extra: Callable[[dict[str, Any]], str | None] | None,
    refs: tuple[str, ...],
) -> CheckResult:
    check_id = name.replace("_", "-")
    if facts.project is None:
        return CheckResult(check_id, title, NA, "no project path given")
    if name not in facts.needs:
        return CheckResult(check_id, title, NA, "the project does not use it")
    where = ", ".join(facts.needs[name][:3])
    if not facts.torch_ok or not facts.torch.get("hip"):
        return CheckResult(
            check_id,
            title,
            NA,
            f"needed ({where}) but torch is not a ROCm build yet (torch-rocm-build)",
        )
    report = facts.torch.get(name) or {}
    if not report.get("ok"):
        return CheckResult(
            check_id,
            title,
            FAIL,
            f"needed ({where}); import failed: {report.get('error')}",
            fix,
            refs,
        )
    problem = extra(report) if extra else None
    if problem:
        return CheckResult(check_id, title, FAIL, f"needed ({where}); {problem}", fix, refs)
    return CheckResult(
        check_id,
        title,
        PASS,
        f"{name} {report.get('version')} imports on ROCm torch ({where})",
        facts=refs,
    )


def check_flash_attn(facts: Facts) -> CheckResult:
    """When the project uses flash-attn, a ROCm build of it imports."""
    return _package_check(
        facts,
        "flash_attn",
        "ROCm build of flash-attn (if the project needs it)",
        "build ROCm/flash-attention (CK backend: gfx90a/gfx942/gfx950; Triton backend with "
        "FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE), or move to SDPA with `migrate fix`",
        None,
        ("F1",),
    )


def _bnb_version(report: dict[str, Any]) -> str | None:
    version = version_tuple(str(report.get("version")))
    if version is not None and version < (0, 49):
        return f"bitsandbytes {report.get('version')} has no ROCm binaries on PyPI (< 0.49)"
    return None


def check_bitsandbytes(facts: Facts) -> CheckResult:
    """When the project uses bitsandbytes, a ROCm-capable release (>= 0.49) imports."""
    return _package_check(
        facts,
        "bitsandbytes",
        "ROCm build of bitsandbytes (if the project needs it)",
        "pip install 'bitsandbytes>=0.49' (0.50+ is the official ROCm release)",
        _bnb_version,
        ("B1",),
    )


def check_hip_compiler(facts: Facts) -> CheckResult:
    """A HIP compiler for ``migrate kernels --compile`` (no GPU needed): found or not."""
    title = "HIP compiler for the kernel compile check (hipcc)"
    path = facts.host.which("hipcc")
    if path is None:
        return CheckResult(
            "hip-compiler",
            title,
            NA,
            "hipcc not on PATH: `migrate kernels --compile` cannot run (the other kernel checks can)",
            "apt-get install hipcc libamdhip64-dev rocm-device-libs (Debian/Ubuntu), or ROCm's hipcc",
        )
    version = facts.host.run("hipcc", "--version")
    found = (
        re.search(r"HIP version: (\S+)", version.stdout + version.stderr) if version.found else None
    )
    detail = f"{path} (HIP {found.group(1)})" if found else path
    return CheckResult("hip-compiler", title, PASS, detail)


CHECKS: tuple[Callable[[Facts], CheckResult], ...] = (
    check_tools,
    check_driver,
    check_gpu_visible,
    check_groups,
    check_torch_build,
    check_version_match,
    check_torch_gpu,
    check_consumer_gpu,
    check_flash_attn,
    check_bitsandbytes,
    check_hip_compiler,
)
"""Every check, in the order they are printed."""
