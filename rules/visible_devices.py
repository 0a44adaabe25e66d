"""ROC704/ROC714: `CUDA_VISIBLE_DEVICES` set next to a `HIP_VISIBLE_DEVICES` or
`ROCR_VISIBLE_DEVICES` that disagrees with it, in Python and in shell, Docker, compose and CI
files (category ``env-var``). A lone `CUDA_VISIBLE_DEVICES` is honoured on ROCm (ROC700/ROC710,
info); two lists that disagree select other GPUs on ROCm than on NVIDIA, or none."""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst

from migrator.astutil import string_value
from migrator.context import PythonContext
from migrator.model import Severity
from migrator.rule import Invalid, TextRule, Valid

from ._shell import iter_lines
from .env_vars import _TEXT_KINDS, EnvAccess, _EnvAccessRule, find_settings

CUDA = "CUDA_VISIBLE_DEVICES"
HIP = "HIP_VISIBLE_DEVICES"
ROCR = "ROCR_VISIBLE_DEVICES"
_FACT = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
_WRITES = frozenset({"assign", "assign-other", "setdefault", "putenv", "dict-key"})


def _devices(value: str) -> list[str]:
    """The entries of a device list as written (``"0, 1"`` -> ``["0", "1"]``); every list
    that hides all GPUs (empty, or starting with a negative id) is ``[]``."""
    entries = [part.strip() for part in value.strip().strip("\"'").split(",") if part.strip()]
    if entries and entries[0].startswith("-"):
        return []
    return entries


def conflict(values: Mapping[str, str]) -> str | None:
    """What happens on ROCm when ``values`` (variable -> literal device list, CUDA's among
    them) are set together, or None when they agree."""
    cuda = _devices(values[CUDA])
    hip = values.get(HIP)
    if hip is not None and _devices(hip) != cuda:
        return (
            f"`{HIP}` ({hip.strip()}) is set too and takes precedence on ROCm (HIP and torch "
            f"read it first), so the `{CUDA}` list ({values[CUDA].strip()}) is ignored there "
            "and other GPUs are used than on NVIDIA; give both the same list"
        )
    rocr = values.get(ROCR)
    if hip is None and rocr is not None:
        count = len(_devices(rocr))
        indices = [int(entry) for entry in cuda if entry.isdigit()]
        if any(index >= count for index in indices):
            return (
                f"`{ROCR}` ({rocr.strip()}) is applied first on ROCm and renumbers the {count} "
                f"GPU(s) it keeps from 0; `{CUDA}` ({values[CUDA].strip()}) then indexes into "
                "that list, so it names GPUs that do not exist there (torch on ROCm counts "
                f"only the `{ROCR}` list); index within the ROCR list or set one variable"
            )
    return None


class VisibleDevicesConflict(_EnvAccessRule):
    """
    ## What it does
    Flags Python code that sets `CUDA_VISIBLE_DEVICES` and, in the same block or the same
    environment dict, `HIP_VISIBLE_DEVICES` to a different list, or `ROCR_VISIBLE_DEVICES`
    to a list that the CUDA indices do not fit in.

    ## Why it breaks on ROCm
    HIP and PyTorch on ROCm honour `CUDA_VISIBLE_DEVICES` alone (ROC700 is info), but when
    `HIP_VISIBLE_DEVICES` is set too it takes precedence and the CUDA list is ignored: the
    job runs on other GPUs on ROCm than on NVIDIA. `ROCR_VISIBLE_DEVICES` is applied first
    and renumbers the GPUs it keeps from 0, so a CUDA list of physical ids then names GPUs
    that do not exist (and torch's device count on ROCm follows the ROCR list only).

    ## Example
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
    os.environ["HIP_VISIBLE_DEVICES"] = "2"
    ```

    ## Manual migration
    Give `HIP_VISIBLE_DEVICES` the same list as `CUDA_VISIBLE_DEVICES` (copy it:
    `os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]`), or set only
    one of them; with `ROCR_VISIBLE_DEVICES`, index within the GPUs it keeps.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    - pytorch/pytorch `torch/cuda/__init__.py` (`_parse_visible_devices`)
    """

    code = "ROC704"
    name = "visible-devices-conflict"
    category = "env-var"
    severity = Severity.WARNING
    message = "`CUDA_VISIBLE_DEVICES` disagrees with the HIP/ROCR device list set next to it"
    fact = _FACT
    triggers = (CUDA,)
    effort_hours = 0.1
    variables = frozenset({CUDA, HIP, ROCR})
    valid = [
        Valid('import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'),
        Valid(
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = "0, 1"\n'
        ),
        Valid(  # both hide every GPU
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = ""\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = "-1"\n'
        ),
        Valid(
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]\n'
        ),
        Valid(
            'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "2,3"\n'
            'os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n'
        ),
        Valid(  # a test's patched environment
            "import os\nfrom unittest import mock\n\n"
            "with mock.patch.dict(os.environ, {}):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n'
            '    os.environ["HIP_VISIBLE_DEVICES"] = "0"\n'
        ),
        Valid('env = {"CUDA_VISIBLE_DEVICES": "3,1", "ROCR_VISIBLE_DEVICES": "9"}\n'),
        Valid(  # different blocks: one per vendor
            'import os\n\nif hip:\n    os.environ["HIP_VISIBLE_DEVICES"] = "1"\n'
            'else:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'
        ),
    ]
    invalid = [
        Invalid(
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = "2"\n',
            line=3,
        ),
        Invalid(
            "import os, subprocess\n\n"
            'subprocess.run(cmd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1", '
            '"HIP_VISIBLE_DEVICES": "0"})\n',
            line=3,
            column=40,
        ),
        Invalid(
            'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "2,3"\n'
            'os.environ["CUDA_VISIBLE_DEVICES"] = "2,3"\n',
            line=4,
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        #: literal writes per block (or environment dict): variable -> (access, value)
        self._groups: dict[int, dict[str, tuple[EnvAccess, str]]] = {}

    def on_access(self, access: EnvAccess) -> None:
        if access.kind not in _WRITES or access.value is None:
            return
        value = string_value(access.value)
        if value is None:
            return
        if self._mocked(access.node):
            return
        if access.kind == "dict-key" and access.mapping is not None:
            if not self._environment(access.mapping):
                return
            group = id(access.mapping)
        else:
            statement = access.line if access.line is not None else access.node
            parent = self.ctx.parent(statement)
            group = id(parent) if parent is not None else 0
        self._groups.setdefault(group, {}).setdefault(access.name, (access, value))

    def _environment(self, mapping: cst.Dict) -> bool:
        """A dict that is a process environment: it spreads ``os.environ`` or is passed as
        ``env=`` (a plain dict of variable names may be test data)."""
        if any(
            isinstance(element, cst.StarredDictElement) and self.is_environ(element.value)
            for element in mapping.elements
        ):
            return True
        parent = self.ctx.parent(mapping)
        return (
            isinstance(parent, cst.Arg)
            and parent.keyword is not None
            and parent.keyword.value == "env"
        )

    def _mocked(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` writes a test's patched environment (inside ``with
        patch.dict(os.environ, ...)`` or a function taking pytest's ``monkeypatch``)."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    call = item.item
                    if (
                        isinstance(call, cst.Call)
                        and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value == "dict"
                        and call.args
                        and self.is_environ(call.args[0].value)
                    ):
                        return True
            elif isinstance(ancestor, cst.FunctionDef) and any(
                param.name.value == "monkeypatch" for param in ancestor.params.params
            ):
                return True
        return False

    def leave_Module(self, original_node: cst.Module) -> None:
        for writes in self._groups.values():
            if CUDA not in writes:
                continue
            what = conflict({name: value for name, (_, value) in writes.items()})
            if what is not None:
                access = writes[CUDA][0]
                self.report(access.node, message=f"`{CUDA}` conflicts: {what}")


def _block(text: str, kind: str, offset: int) -> tuple[int, int]:
    """The offsets of the environment that the setting at ``offset`` belongs to: the whole
    file for shell and Dockerfiles; for YAML, the run of lines around it indented at least as
    deep (one ``environment:``/``env:`` map or list)."""
    if kind in {"shell", "dockerfile"}:
        return 0, len(text)
    lines = list(iter_lines(text))
    index = max(i for i, (start, _, _) in enumerate(lines) if start <= offset)
    line = lines[index][1]
    width = len(line) - len(line.lstrip())

    def inside(i: int) -> bool:
        _, other, code = lines[i]
        return not code.strip() or len(other) - len(other.lstrip()) >= width

    first = index
    while first > 0 and inside(first - 1):
        first -= 1
    last = index
    while last + 1 < len(lines) and inside(last + 1):
        last += 1
    end = lines[last + 1][0] if last + 1 < len(lines) else len(text)
    return lines[first][0], end


class ShellVisibleDevicesConflict(TextRule):
    """
    ## What it does
    Flags `CUDA_VISIBLE_DEVICES` set in a shell script or Dockerfile, or in a compose/CI
    environment block, next to a `HIP_VISIBLE_DEVICES` with a different list (or a
    `ROCR_VISIBLE_DEVICES` the CUDA indices do not fit in) in the same file or block.

    ## Why it breaks on ROCm
    As for ROC704: `HIP_VISIBLE_DEVICES` takes precedence over `CUDA_VISIBLE_DEVICES` on
    ROCm, so the job runs on other GPUs than on NVIDIA; `ROCR_VISIBLE_DEVICES` renumbers the
    GPUs it keeps from 0 before the CUDA list is applied.

    ## Example
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1
    export HIP_VISIBLE_DEVICES=2,3
    ```

    ## Manual migration
    Give both the same list (`export HIP_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES`) or set one.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    - pytorch/pytorch `torch/cuda/__init__.py` (`_parse_visible_devices`)
    """

    code = "ROC714"
    name = "shell-visible-devices-conflict"
    category = "env-var"
    severity = Severity.WARNING
    message = "`CUDA_VISIBLE_DEVICES` disagrees with the HIP/ROCR device list set next to it"
    fact = _FACT
    triggers = (CUDA,)
    file_kinds = _TEXT_KINDS
    effort_hours = 0.1
    valid = [
        Valid("export CUDA_VISIBLE_DEVICES=0,1\nexport HIP_VISIBLE_DEVICES=0,1\n", path="run.sh"),
        Valid(
            "export CUDA_VISIBLE_DEVICES=2\nexport HIP_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\n",
            path="run.sh",
        ),
        Valid(
            "services:\n  a:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n"
            "  b:\n    environment:\n      - HIP_VISIBLE_DEVICES=1\n",
            path="docker-compose.yml",
        ),
    ]
    invalid = [
        Invalid(
            "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\nexport HIP_VISIBLE_DEVICES=2,3\n",
            path="launch.sh",
            line=2,
            column=8,
        ),
        Invalid(
            "jobs:\n  t:\n    env:\n      CUDA_VISIBLE_DEVICES: 0\n      HIP_VISIBLE_DEVICES: 1\n",
            path=".github/workflows/ci.yml",
            line=4,
        ),
        Invalid(
            "export ROCR_VISIBLE_DEVICES=4\nCUDA_VISIBLE_DEVICES=4 python train.py\n",
            path="run.sh",
            line=2,
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        found = {name: find_settings(text, name) for name in (CUDA, HIP, ROCR)}
        if not found[CUDA] or not (found[HIP] or found[ROCR]):
            return
        for cuda in found[CUDA]:
            if not _literal(cuda.value):
                continue
            start, end = _block(text, self.ctx.kind, cuda.start)
            values = {CUDA: cuda.value}
            for name in (HIP, ROCR):
                for setting in found[name]:
                    if start <= setting.start < end and _literal(setting.value):
                        values.setdefault(name, setting.value)
            what = conflict(values)
            if what is not None:
                self.report(
                    cuda.start, cuda.start + len(CUDA), message=f"`{CUDA}` conflicts: {what}"
                )
                return


def _literal(value: str) -> bool:
    """A device list written out (no variable, no command substitution)."""
    return bool(value.strip("\"' ")) and not re.search(r"[$`]", value)
