"""Read the machine: ROCm tools, rocminfo agents, the ROCm version, groups, torch (in a subprocess).

Everything goes through :class:`Host`, whose ``PATH`` and environment can be pointed at
stand-in tools, so the checks can be tested against recorded outputs of the real tools.
"""

from __future__ import annotations

import grp
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.process.helper import HelperError, find_program, helper_environment
from migrator.process.helper import run as run_helper

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
        """``name`` on the absolute entries of this host's PATH (never the working directory
        or a relative entry, which could be the project's)."""
        return find_program(name, env={"PATH": self.env.get("PATH", os.defpath)})

    def run(self, name: str, *args: str) -> ToolResult:
        """Run a tool from PATH in a private folder; never raises."""
        path = self.which(name)
        if path is None:
            return ToolResult(name, found=False)
        try:
            done = run_helper(
                [path, *args], timeout=self.timeout, env=helper_environment(base=self.env)
            )
        except HelperError as error:
            return ToolResult(name, found=True, error=str(error))
        if done.timed_out:
            return ToolResult(name, found=True, error=f"timed out after {self.timeout:g} s")
        return ToolResult(name, True, done.returncode, done.out, done.err)

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


#: Run with ``-I`` in a private folder: the interpreter's installed packages (user
#: site-packages added back) are read, never a ``torch.py`` of the working directory.
TORCH_CHECK = r"""
import importlib, json, os, site, sys
if os.path.isdir(site.getusersitepackages()):
    site.addsitedir(site.getusersitepackages())
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


def interpreter(python: str) -> str | None:
    """The absolute path of the interpreter the user named (a bare name is looked up on the
    absolute entries of PATH, never in the working directory)."""
    if os.sep in python:
        path = Path(python).absolute()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return find_program(python)


def torch_report(host: Host, modules: Sequence[str]) -> dict[str, Any]:
    """What the interpreter's torch says about itself (run in a subprocess, never imported here)."""
    python = interpreter(host.python)
    if python is None:
        return {"error": f"interpreter not found: {host.python}"}
    try:
        done = run_helper(
            [python, "-I", "-c", TORCH_CHECK, *modules],
            env=helper_environment(base=host.env),
            timeout=host.timeout * 5,
        )
    except HelperError as error:
        return {"error": f"could not run {host.python}: {error}"}
    if done.timed_out:
        return {"error": f"{host.python} did not answer within {host.timeout * 5:g} s"}
    lines = done.out.strip().splitlines()
    try:
        loaded = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        loaded = None
    if not isinstance(loaded, dict):
        tail = (done.err or done.out).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"{host.python} exited {done.returncode}: {tail[0]}"}
    return loaded
