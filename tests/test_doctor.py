"""``migrate doctor`` against real tools where installed, and recorded outputs via stand-ins.

Stand-in executables are small scripts in a temporary bin folder (the only folder on PATH), each
replaying a file from tests/data/doctor. The torch check runs in a subprocess of ``--python``:
the real interpreter (CPU torch) or a stand-in that prints a recorded report.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrator.doctor import Host, doctor_command, run_checks
from migrator.doctor.checks import CheckResult
from migrator.doctor.project import needed_packages
from migrator.doctor.system import parse_agents, version_tuple

DATA = Path(__file__).resolve().parent / "data" / "doctor"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

REPLAY = """#!{python}
import sys
from pathlib import Path
base = Path({base!r})
args = sys.argv[1:]
name = base.name
if args and (base.parent / (name + "." + args[0] + ".stdout")).exists():
    base = base.parent / (name + "." + args[0])
for suffix, stream in ((".stdout", sys.stdout), (".stderr", sys.stderr)):
    path = Path(str(base) + suffix)
    if path.exists():
        stream.write(path.read_text())
rc = Path(str(base) + ".rc")
sys.exit(int(rc.read_text()) if rc.exists() else 0)
"""


def _tool(bin_dir: Path, name: str, recording: Path) -> None:
    """A stand-in ``name`` that replays ``recording``.{stdout,stderr,rc}."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(REPLAY.format(python=sys.executable, base=str(recording)))
    path.chmod(0o755)


def _python(bin_dir: Path, report: Path) -> str:
    """A stand-in interpreter whose torch check prints ``report``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "python-rocm"
    body = f"print(open({str(report)!r}).read().replace(chr(10), ''))\n"
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return str(path)


def _by_id(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {result.id: result for result in results}


def _amd_machine(
    tmp_path: Path, rocminfo: str, torch_report: str, runtime: str | None = "6.3.1-48", **env: str
) -> Host:
    bin_dir = tmp_path / "bin"
    records = tmp_path / "records"
    records.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / rocminfo, records / "rocminfo.stdout")
    (records / "amd-smi.list.stdout").write_text("GPU: 0\n    BDF: 0000:0c:00.0\n")
    shutil.copy(DATA / "amd-smi-version-rocm6.3.stdout", records / "amd-smi.version.stdout")
    _tool(bin_dir, "rocminfo", records / "rocminfo")
    _tool(bin_dir, "amd-smi", records / "amd-smi")
    rocm = tmp_path / "opt-rocm"
    if runtime is not None:
        (rocm / ".info").mkdir(parents=True)
        (rocm / ".info" / "version").write_text(runtime + "\n")
    python = _python(tmp_path / "py", DATA / torch_report)
    return Host(
        env={"PATH": str(bin_dir), "ROCM_PATH": str(rocm), **env},
        python=python,
        group_names=["users", "video", "render"],
        uid=1000,
    )


def test_mi300x_machine_passes(tmp_path: Path) -> None:
    host = _amd_machine(tmp_path, "rocminfo-mi300x.stdout", "torch-rocm-mi300x.json")
    results = _by_id(run_checks(host, None, None, 60))
    for check in (
        "rocm-tools",
        "amdgpu-driver",
        "gpu-visible",
        "groups",
        "torch-rocm-build",
        "rocm-version-match",
        "torch-gpu",
    ):
        assert results[check].status == "pass", results[check]
    assert "gfx942 (AMD Instinct MI300X)" in results["gpu-visible"].detail
    assert results["consumer-gpu"].status == "n/a"
    assert results["flash-attn"].status == "n/a"  # no project given


def test_rocm_version_from_amd_smi_and_mismatch(tmp_path: Path) -> None:
    host = _amd_machine(tmp_path, "rocminfo-mi300x.stdout", "torch-rocm-mi300x.json", runtime=None)
    match = _by_id(run_checks(host, None, None, 60))["rocm-version-match"]
    assert match.status == "pass" and "amd-smi version" in match.detail
    mismatched = _amd_machine(
        tmp_path / "b", "rocminfo-mi300x.stdout", "torch-rocm-mi300x.json", runtime="6.2.4-120"
    )
    result = _by_id(run_checks(mismatched, None, None, 60))["rocm-version-match"]
    assert result.status == "fail" and "rocm6.2" in (result.fix or "")


def test_rx7900_consumer_card(tmp_path: Path) -> None:
    host = _amd_machine(tmp_path, "rocminfo-rx7900xtx-gfx1100.stdout", "torch-rocm-rx7900xtx.json")
    consumer = _by_id(run_checks(host, None, None, 60))["consumer-gpu"]
    assert consumer.status == "pass" and "gfx1100" in consumer.detail

    # A card of the same family that the torch build lacks (RX 7800 XT class, gfx1101 here
    # renamed to gfx1103): fail, and the fix is the RDNA3 override.
    report = json.loads((DATA / "torch-rocm-rx7900xtx.json").read_text())
    report["devices"][0]["arch"] = "gfx1103"
    odd = tmp_path / "torch-gfx1103.json"
    odd.write_text(json.dumps(report))
    text = (DATA / "rocminfo-rx7900xtx-gfx1100.stdout").read_text().replace("gfx1100", "gfx1103")
    (tmp_path / "ri").mkdir()
    (tmp_path / "ri" / "rocminfo.stdout").write_text(text)
    host2 = _amd_machine(tmp_path / "c", "rocminfo-rx7900xtx-gfx1100.stdout", str(odd))
    _tool(Path(host2.env["PATH"]), "rocminfo", tmp_path / "ri" / "rocminfo")
    failed = _by_id(run_checks(host2, None, None, 60))["consumer-gpu"]
    assert failed.status == "fail" and "HSA_OVERRIDE_GFX_VERSION=11.0.0" in (failed.fix or "")
    host2.env = {**host2.env, "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    overridden = _by_id(run_checks(host2, None, None, 60))["consumer-gpu"]
    assert overridden.status == "pass" and "unofficial" in overridden.detail


def test_recorded_no_gpu_outputs_of_the_debian_tools(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "rocminfo", DATA / "debian-rocminfo-5.2.3-no-gpu")
    _tool(bin_dir, "rocm-smi", DATA / "debian-rocm-smi-5.2.3-no-gpu")
    host = Host(
        env={"PATH": str(bin_dir), "ROCM_PATH": str(tmp_path / "none")},
        python=sys.executable,
        group_names=["users"],
        uid=1000,
    )
    results = _by_id(run_checks(host, None, None, 60))
    assert results["rocm-tools"].status == "pass"
    driver = results["amdgpu-driver"]
    assert driver.status == "fail" and "ROCk module is NOT loaded" in driver.detail
    assert "Driver not initialized" in driver.detail and driver.fix
    assert results["gpu-visible"].status == "fail"
    groups = results["groups"]
    assert groups.status == "fail" and "video" in groups.detail and "usermod" in (groups.fix or "")
    # The real interpreter: torch 2.13 CPU build.
    build = results["torch-rocm-build"]
    assert build.status == "fail" and "CPU-only" in build.detail
    assert "whl/rocm7.2" in (build.fix or "")
    assert results["torch-gpu"].status == "fail"
    assert results["rocm-version-match"].status == "n/a"


@pytest.mark.skipif(
    shutil.which("rocminfo") is None or shutil.which("rocm-smi") is None,
    reason="the real rocminfo / rocm-smi are not installed here",
)
def test_real_tools_without_a_gpu() -> None:
    host = Host(group_names=["video", "render"], uid=1000)
    results = _by_id(run_checks(host, None, None, 60))
    assert results["rocm-tools"].status == "pass"
    if not Path("/dev/kfd").exists():
        assert results["amdgpu-driver"].status == "fail"
        assert results["gpu-visible"].status == "fail"


def test_missing_tools_fail_with_a_fix(tmp_path: Path) -> None:
    host = Host(env={"PATH": str(tmp_path)}, python=sys.executable, group_names=[], uid=0)
    results = _by_id(run_checks(host, None, None, 60))
    assert results["rocm-tools"].status == "fail" and results["rocm-tools"].fix
    assert results["gpu-visible"].status == "n/a"
    assert results["groups"].status == "pass"  # root


def test_project_needs_flash_attn_and_bitsandbytes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("torch\nflash-attn==2.5.8\nbitsandbytes==0.41.1\n")
    (project / "model.py").write_text("from flash_attn import flash_attn_func\n")
    needs = needed_packages(project)
    assert needs["flash_attn"] == ["model.py", "requirements.txt"]
    assert needs["bitsandbytes"] == ["requirements.txt"]
    report = json.loads((DATA / "torch-rocm-mi300x.json").read_text())
    report["flash_attn"] = {"ok": False, "error": "ImportError: libcudart.so.12: cannot open"}
    report["bitsandbytes"] = {"ok": True, "version": "0.41.1"}
    path = tmp_path / "torch.json"
    path.write_text(json.dumps(report))
    host = _amd_machine(tmp_path / "m", "rocminfo-mi300x.stdout", str(path))
    results = _by_id(run_checks(host, project, None, 60))
    assert results["flash-attn"].status == "fail" and "ROCm/flash-attention" in (
        results["flash-attn"].fix or ""
    )
    assert results["bitsandbytes"].status == "fail" and "0.49" in results["bitsandbytes"].detail
    report["flash_attn"] = {"ok": True, "version": "2.7.4"}
    report["bitsandbytes"] = {"ok": True, "version": "0.50.0"}
    path.write_text(json.dumps(report))
    ok = _by_id(run_checks(host, project, None, 60))
    assert ok["flash-attn"].status == "pass" and ok["bitsandbytes"].status == "pass"
    clean = tmp_path / "clean"
    clean.mkdir()
    assert _by_id(run_checks(host, clean, None, 60))["flash-attn"].status == "n/a"


def test_smoke_that_stays_on_cpu_is_a_silent_fallback(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "smoke.py").write_text(
        "import torch\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "print(torch.ones(2, device=device).sum().item())\n"
    )
    host = Host(env=dict(os.environ), group_names=["video", "render"], uid=1000)
    results = _by_id(run_checks(host, project, "python smoke.py", 120))
    smoke = results["smoke-gpu"]
    assert smoke.status == "fail" and "fell back to the CPU" in smoke.detail
    failing = _by_id(run_checks(host, project, "python -c 'raise SystemExit(3)'", 60))
    assert failing["smoke-gpu"].status == "fail" and "failed" in failing["smoke-gpu"].detail


def test_cli_text_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    text = runner.invoke(doctor_command, [])
    assert text.exit_code == 1  # no ROCm torch on this machine
    assert "FAIL  torch-rocm-build" in text.output and "fix:" in text.output
    as_json = runner.invoke(doctor_command, ["--format", "json"])
    document = json.loads(as_json.output)
    assert as_json.exit_code == 1 and document["exit_code"] == 1
    assert {check["status"] for check in document["checks"]} <= {"pass", "fail", "n/a"}
    assert runner.invoke(doctor_command, ["--format", "yaml"]).exit_code == 2


def test_parsers() -> None:
    agents = parse_agents((DATA / "rocminfo-mi300x.stdout").read_text())
    assert [a.name for a in agents if a.is_gpu] == ["gfx942", "gfx942"]
    assert parse_agents((DATA / "debian-rocminfo-5.2.3-no-gpu.stdout").read_text()) == []
    assert version_tuple("6.3.42131") == (6, 3) and version_tuple("6.3.1-48") == (6, 3)
    assert version_tuple(None) is None


@pytest.mark.skipif(not (FIXTURES / "llm_app").is_dir(), reason="fixture missing")
def test_llm_app_needs_are_found() -> None:
    needs = needed_packages(FIXTURES / "llm_app")
    assert "flash_attn" in needs and "bitsandbytes" in needs
