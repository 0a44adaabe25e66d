"""ROC704: `CUDA_VISIBLE_DEVICES` set in Python next to a HIP/ROCR device list that disagrees
with it (a lone `CUDA_VISIBLE_DEVICES` is honoured on ROCm: ROC700, info)."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonContext, Valid
from migrator.api.syntax import string_value

from ._access import EnvAccess, _EnvAccessRule
from ._pairs import _VisibleDevicesConflictPair
from ._visible_devices import _WRITES, CUDA, HIP, ROCR, conflict


class VisibleDevicesConflict(_VisibleDevicesConflictPair, _EnvAccessRule):
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
    impact = Impact(consequence="performance")
    name = "visible-devices-conflict"
    variables = frozenset({CUDA, HIP, ROCR})
    # a conflict needs a HIP or ROCR list: its statements are read with the CUDA ones
    parsing = Parsing(requires=(HIP, ROCR), scope_triggers=(HIP, ROCR))
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
