"""Read the machine: ROCm tools, rocminfo agents, the ROCm version, groups, torch (in a subprocess).

Everything goes through :class:`Host`, whose ``PATH`` and environment can be pointed at
stand-in tools, so the checks can be tested against recorded outputs of the real tools.
"""

from __future__ import annotations

import grp
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One run of an external tool (``found`` False when it is not on PATH)."""

    name: str
    found: bool
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None

    @property
    def text(self) -> str:
        """stdout and stderr without colour codes."""
        return _ANSI.sub("", self.stdout + "\n" + self.stderr)


@dataclass(frozen=True, slots=True)
class Agent:
    """One HSA agent from ``rocminfo``."""

    name: str
    marketing_name: str
    device_type: str

    @property
    def is_gpu(self) -> bool:
        return self.device_type.upper() == "GPU" and self.name.startswith("gfx")


@dataclass(slots=True)
class Host:
    """The machine the doctor looks at: environment (PATH), interpreter, groups."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = sys.executable
    group_names: Sequence[str] | None = None
    uid: int | None = None
    timeout: float = 60.0

    def which(self, name: str) -> str | None:
        """``name`` on this host's PATH."""
        return shutil.which(name, path=self.env.get("PATH", os.defpath))

    def run(self, name: str, *args: str) -> ToolResult:
        """Run a tool from PATH; never raises."""
        path = self.which(name)
        if path is None:
            return ToolResult(name, found=False)
        try:
            done = subprocess.run(
                [path, *args],
                env=dict(self.env),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return ToolResult(name, found=True, error=str(error))
        return ToolResult(name, True, done.returncode, done.stdout, done.stderr)

    def groups(self) -> list[str]:
        """Names of the groups this process runs with."""
        if self.group_names is not None:
            return list(self.group_names)
        names: list[str] = []
        for gid in os.getgroups():
            try:
                names.append(grp.getgrgid(gid).gr_name)
            except KeyError:
                continue
        return names

    def user_id(self) -> int:
        """The effective user id (0 for root)."""
        return os.geteuid() if self.uid is None else self.uid

    def rocm_root(self) -> Path:
        """``ROCM_PATH`` (or ``ROCM_HOME``), else /opt/rocm [P9]."""
        return Path(self.env.get("ROCM_PATH") or self.env.get("ROCM_HOME") or "/opt/rocm")


def parse_agents(text: str) -> list[Agent]:
    """The agents listed by ``rocminfo`` (Name, Marketing Name, Device Type of each)."""
    agents: list[Agent] = []
    current: dict[str, str] = {}
    for raw in _ANSI.sub("", text).splitlines():
        line = raw.strip()
        if re.fullmatch(r"Agent \d+", line):
            if current:
                agents.append(_agent(current))
            current = {}
            continue
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Marketing Name", "Device Type") and key not in current:
            current[key] = value.strip()
    if current:
        agents.append(_agent(current))
    return agents


def _agent(fields: Mapping[str, str]) -> Agent:
    return Agent(
        fields.get("Name", ""), fields.get("Marketing Name", ""), fields.get("Device Type", "")
    )


def version_tuple(text: str | None) -> tuple[int, int] | None:
    """``"6.3.42131"`` / ``"6.3.1-48"`` / ``"ROCm version: 6.3.1"`` → (6, 3)."""
    if not text:
        return None
    match = _VERSION.search(text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def rocm_runtime_version(host: Host) -> tuple[str | None, str]:
    """The installed ROCm version and where it was read (``.info/version`` or ``amd-smi``)."""
    info = host.rocm_root() / ".info" / "version"
    try:
        text = info.read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    if text:
        return text, str(info)
    result = host.run("amd-smi", "version")
    match = re.search(r"ROCm version:\s*([0-9][0-9.\-]*)", result.text)
    if match:
        return match.group(1), "amd-smi version"
    return None, "not found"


TORCH_CHECK = r"""
import importlib, json, sys
need = set(sys.argv[1:])
out = {"python": sys.executable}
try:
    import torch
except Exception as error:
    out["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(out)); raise SystemExit(0)
out.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None),
           cuda=torch.version.cuda, available=torch.cuda.is_available(), devices=[])
try:
    out["arch_list"] = torch.cuda.get_arch_list()
except Exception:
    out["arch_list"] = []
if out["available"]:
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        out["devices"].append({"name": props.name,
                               "arch": getattr(props, "gcnArchName", None)})
for name in sorted(need):
    try:
        module = importlib.import_module(name)
        out[name] = {"ok": True, "version": str(getattr(module, "__version__", "?"))}
    except Exception as error:
        out[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
print(json.dumps(out))
"""


def torch_report(host: Host, modules: Sequence[str]) -> dict[str, Any]:
    """What the interpreter's torch says about itself (run in a subprocess, never imported here)."""
    try:
        done = subprocess.run(
            [host.python, "-c", TORCH_CHECK, *modules],
            env=dict(host.env),
            capture_output=True,
            text=True,
            timeout=host.timeout * 5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"error": f"could not run {host.python}: {error}"}
    lines = done.stdout.strip().splitlines()
    try:
        loaded = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        loaded = None
    if not isinstance(loaded, dict):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"{host.python} exited {done.returncode}: {tail[0]}"}
    return loaded
