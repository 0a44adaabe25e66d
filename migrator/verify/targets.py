"""How each target runs the smoke command: argv and a clean environment.

* ``native``: ``/bin/sh -c SMOKE`` with the chosen interpreter first on PATH, probe injected.
* ``rocm-sim``: as native, plus the ROCm/MI300X emulation (``MIGRATE_SIM_PROFILE``), ROCm's
  environment variables, and no ``nvidia-smi`` on PATH. Only ever used for the migrated tree.
* ``docker``: ``docker run`` of a ``rocm/pytorch`` image with AMD's device flags, the workspace
  mounted at the same path; the probe is injected through ``PYTHONPATH`` inside the container.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.verify.workspace import Workspace, path_without

SIM_PROFILE = "rocm-mi300x"
DEFAULT_HIP_VERSION = "6.3.42131"
"""``torch.version.hip`` under the emulation (a string on ROCm builds [P1][P2])."""
EMULATION_LABEL = "ROCm {rocm} on AMD Instinct MI300X (gfx942), emulated"
AMD_DOCKER_FLAGS = (
    "--device",
    "/dev/kfd",
    "--device",
    "/dev/dri",
    "--group-add",
    "video",
    "--security-opt",
    "seccomp=unconfined",
    "--ipc=host",
)
"""AMD's device flags for containers [C1][C2][F1] (rocm-facts.md §9)."""

PASSED_THROUGH = (
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "TORCH_HOME",
    "XDG_CACHE_HOME",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)
"""Variables kept from the caller's environment; everything else is dropped."""

PASSED_THROUGH_PREFIXES = (
    "NCCL_",
    "RCCL_",
    "NVSHMEM_",
    "TORCH_",
    "PYTORCH_",
    "TORCHINDUCTOR_",
    "TRITON_",
    "HSA_",
    "HIP_",
    "ROCR_",
    "AMD_",
    "MIOPEN_",
    "HIPBLASLT_",
)
"""Runtime settings kept too (allocator, NCCL/RCCL, Inductor and Triton caches and compile
workers, ROCm runtime knobs: rocm-facts.md §6)."""

DOCKER_CLIENT_VARS = (
    "HOME",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "DOCKER_CONTEXT",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
)


@dataclass(frozen=True, slots=True)
class Invocation:
    """A command ready for :func:`migrator.verify.process.run_process`."""

    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str]
    container: str | None = None
    smoke_output: Path = field(default=Path())
    probe_dir: Path = field(default=Path())
    sim_log: Path | None = None


def rocm_version_label(hip_version: str) -> str:
    """``"6.3.42131"`` → ``"6.3"``."""
    return ".".join(hip_version.split(".")[:2])


def base_environment(
    workspace: Workspace,
    run_dir: Path,
    extra: Sequence[tuple[str, str]],
    caller_env: Mapping[str, str],
) -> dict[str, str]:
    """The clean environment shared by the native and rocm-sim targets."""
    env = {
        name: value
        for name, value in caller_env.items()
        if name in PASSED_THROUGH or name.startswith(PASSED_THROUGH_PREFIXES)
    }
    env["PATH"] = os.pathsep.join([str(workspace.bin), caller_env.get("PATH", os.defpath)])
    env.update(
        {
            "PYTHONPATH": str(workspace.pythonpath),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "MIGRATE_SMOKE_OUTPUT": str(run_dir / "smoke-output.json"),
            "MIGRATE_PROBE_DIR": str(run_dir / "probe"),
            "MIGRATE_RUN_DIR": str(run_dir),
        }
    )
    for name, value in extra:
        if name == "PYTHONPATH":
            env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], value])
        else:
            env[name] = value
    return env


def native_invocation(
    workspace: Workspace,
    tree: str,
    run_dir: Path,
    smoke: str,
    extra: Sequence[tuple[str, str]],
    caller_env: Mapping[str, str],
) -> Invocation:
    """The interpreter and torch as found, probe injected."""
    env = base_environment(workspace, run_dir, extra, caller_env)
    return Invocation(
        argv=("/bin/sh", "-c", smoke),
        cwd=workspace.tree(tree),
        env=env,
        smoke_output=Path(env["MIGRATE_SMOKE_OUTPUT"]),
        probe_dir=Path(env["MIGRATE_PROBE_DIR"]),
    )


def sim_invocation(
    workspace: Workspace,
    run_dir: Path,
    smoke: str,
    extra: Sequence[tuple[str, str]],
    caller_env: Mapping[str, str],
    allow_modules: Sequence[str],
) -> Invocation:
    """The migrated tree under the ROCm/MI300X emulation (see docs/emulation.md)."""
    env = base_environment(workspace, run_dir, extra, caller_env)
    # [E1][E2][P2] §6: HIP_VISIBLE_DEVICES takes CUDA_VISIBLE_DEVICES' value.
    if "CUDA_VISIBLE_DEVICES" in env and "HIP_VISIBLE_DEVICES" not in env:
        env["HIP_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"]
    # [P9] §6: ROCm is found through ROCM_PATH (default /opt/rocm); CUDA_HOME is not used.
    env["ROCM_PATH"] = env.get("ROCM_PATH", "/opt/rocm")
    env.pop("CUDA_HOME", None)
    env.pop("CUDA_PATH", None)
    # [P2] §10.2, §3c: no nvidia-smi on a ROCm machine.
    env["PATH"] = path_without("nvidia-smi", env["PATH"], workspace.root / "path-no-nvidia-smi")
    sim_log = run_dir / "emulation.jsonl"
    env.update(
        {
            "MIGRATE_SIM_PROFILE": SIM_PROFILE,
            "MIGRATE_SIM_LOG": str(sim_log),
            "MIGRATE_SIM_PROJECT": str(workspace.migrated),
            "MIGRATE_SIM_ALLOW": ",".join(allow_modules),
            "MIGRATE_SIM_HIP_VERSION": caller_env.get("MIGRATE_SIM_HIP_VERSION")
            or DEFAULT_HIP_VERSION,
        }
    )
    return Invocation(
        argv=("/bin/sh", "-c", smoke),
        cwd=workspace.migrated,
        env=env,
        smoke_output=Path(env["MIGRATE_SMOKE_OUTPUT"]),
        probe_dir=Path(env["MIGRATE_PROBE_DIR"]),
        sim_log=sim_log,
    )


def docker_invocation(
    workspace: Workspace,
    run_dir: Path,
    smoke: str,
    image: str,
    extra: Sequence[tuple[str, str]],
    caller_env: Mapping[str, str],
) -> Invocation:
    """``docker run`` of ``image`` with AMD's device flags; the workspace is mounted 1:1."""
    container = f"migrate-verify-{uuid.uuid4().hex[:12]}"
    inner = {
        "PYTHONPATH": str(workspace.pythonpath),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "MIGRATE_SMOKE_OUTPUT": str(run_dir / "smoke-output.json"),
        "MIGRATE_PROBE_DIR": str(run_dir / "probe"),
        "MIGRATE_RUN_DIR": str(run_dir),
    }
    for name in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        if name in caller_env:
            inner[name] = caller_env[name]
    for name, value in extra:
        inner[name] = value
    argv: list[str] = [
        "docker",
        "run",
        "--rm",
        "--name",
        container,
        *AMD_DOCKER_FLAGS,
        "-v",
        f"{workspace.root}:{workspace.root}",
        "-w",
        str(workspace.migrated),
    ]
    for name, value in inner.items():
        argv += ["-e", f"{name}={value}"]
    argv += [image, "sh", "-c", smoke]
    client_env = {name: caller_env[name] for name in DOCKER_CLIENT_VARS if name in caller_env}
    client_env["PATH"] = caller_env.get("PATH", os.defpath)
    return Invocation(
        argv=tuple(argv),
        cwd=workspace.migrated,
        env=client_env,
        container=container,
        smoke_output=run_dir / "smoke-output.json",
        probe_dir=run_dir / "probe",
    )
