"""``doctor --smoke``: run the project's smoke command with the probe and check the GPU was used."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from migrator.doctor.checks import FAIL, PASS, CheckResult
from migrator.doctor.system import Host
from migrator.verify import evidence
from migrator.verify.process import run_process
from migrator.verify.targets import base_environment
from migrator.verify.workspace import (
    Workspace,
    copy_project,
    install_pythonpath,
    write_python_shims,
)

TITLE = "model runs on the GPU (no silent CPU fallback)"


def check_smoke(host: Host, project: Path, smoke: str, timeout: float) -> CheckResult:
    """Run ``smoke`` in a copy of ``project`` (as ``verify`` does: the user's tree is never the
    working directory of the project's code) and read the probe: did tensors go to the GPU?"""
    workspace = Workspace(Path(tempfile.mkdtemp(prefix="migrate-doctor-")).resolve())
    try:
        copy_project(project, workspace.original)
        install_pythonpath(workspace.pythonpath)
        write_python_shims(workspace.bin, host.python)
        run_dir = workspace.run_dir("project", "native")
        env = base_environment(workspace, run_dir, (), host.env)
        result = run_process(
            ("/bin/sh", "-c", smoke),
            cwd=workspace.original,
            env=env,
            timeout=timeout,
            log_dir=run_dir,
        )
        probe = evidence.read_probe(run_dir / "probe")
    finally:
        shutil.rmtree(workspace.root, ignore_errors=True)
    if not result.ok:
        why = (
            "timed out; process group killed"
            if result.timed_out
            else evidence.failure_reason(result.stderr) or f"exit {result.exit_code}"
        )
        return CheckResult(
            "smoke-gpu",
            TITLE,
            FAIL,
            f"the smoke command failed: {why}",
            "make the smoke test pass first (migrate verify shows why)",
        )
    if not probe["torch_imported"]:
        return CheckResult(
            "smoke-gpu",
            TITLE,
            FAIL,
            "the smoke command never imported torch",
            "point --smoke at a command that runs the model",
        )
    build = probe["torch_build"] or {}
    if probe["ran_on_gpu"]:
        peak = probe["peak_gpu_memory_bytes"] / 2**20
        return CheckResult(
            "smoke-gpu",
            TITLE,
            PASS,
            f"tensors on {probe['device_name']} (peak {peak:.1f} MiB, torch "
            f"{build.get('torch')}, {build.get('kind')} build)",
            facts=("P1",),
        )
    return CheckResult(
        "smoke-gpu",
        TITLE,
        FAIL,
        f"the smoke command passed but no tensor was allocated on a GPU (torch "
        f"{build.get('torch')}, {build.get('kind')} build, cuda available: "
        f"{probe['cuda_available']}): the model fell back to the CPU",
        "look for CUDA-only gates that pick the CPU path on ROCm (torch.version.cuda checks, "
        "device-name tests): `migrate scan` lists them",
        ("P1", "D1"),
    )
