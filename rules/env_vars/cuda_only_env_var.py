"""ROC703: environment variables that only a CUDA build reads, set in Python."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Problem, Valid

from .._tree import simple_statements
from ._access import EnvAccess, _EnvAccessRule
from ._pairs import _CudaOnlyPair
from ._table import cuda_only_handled, cuda_only_note, cuda_only_variables


class CudaOnlyEnvVar(_CudaOnlyPair, _EnvAccessRule):
    """
    ## What it does
    Flags Python code that sets or reads `TORCH_CUDA_ARCH_LIST`, `TORCH_USE_CUDA_DSA`,
    `NVIDIA_VISIBLE_DEVICES` or `NVIDIA_DRIVER_CAPABILITIES`.

    ## Why it breaks on ROCm
    These have no effect on ROCm: extension builds for ROCm ignore `TORCH_CUDA_ARCH_LIST` and
    target `PYTORCH_ROCM_ARCH` (default: the archs torch was built for, so nothing breaks: that
    one is reported at `info`, and not at all in a file that also handles `PYTORCH_ROCM_ARCH`);
    device-side asserts
    are compiled out of ROCm builds whatever `TORCH_USE_CUDA_DSA` says; the `NVIDIA_*`
    variables are read only by the NVIDIA container toolkit.

    ## Example
    ```python
    import os

    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"
    ```

    ## Manual migration
    Set the ROCm counterpart with values chosen for the target GPUs, for example
    `os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"`; pass AMD GPUs to containers with
    `--device /dev/kfd --device /dev/dri`.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py`
    - rocm.docs.amd.com "Running ROCm Docker containers"
    """

    code = "ROC703"
    impact = Impact(consequence="hygiene")
    name = "cuda-only-env-var"
    variables = frozenset(cuda_only_variables())
    valid = [
        Valid('import os\n\nos.environ["PYTORCH_ROCM_ARCH"] = "gfx942"\n'),
        Valid('"""Set TORCH_CUDA_ARCH_LIST before building."""\n'),
        Valid('import os\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n'),
        Valid('d = {}\nd.get("TORCH_CUDA_ARCH_LIST")\n'),
        Valid(
            "import os\n\n"
            "saved = os.environ.get('TORCH_CUDA_ARCH_LIST')\n"
            "if is_rocm:\n"
            "    os.environ['PYTORCH_ROCM_ARCH'] = 'gfx942'\n"
        ),
        Valid(
            "import os\n"
            "from torch.utils.cpp_extension import CUDA_HOME\n\n"
            "if os.environ.get('TORCH_CUDA_ARCH_LIST') is None and CUDA_HOME is not None:\n"
            "    os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n"
        ),
        Valid(  # leaves a user's value alone; the write below is CUDA-only
            "import os\nimport torch\n\n"
            "def maybe_set_arch_list():\n"
            "    if os.environ.get('TORCH_CUDA_ARCH_LIST', None):\n"
            "        return\n"
            "    if not torch.version.cuda:\n"
            "        return\n"
            "    os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n"
        ),
        Valid(
            "import os\n\n"
            "def keep():\n"
            "    if 'TORCH_CUDA_ARCH_LIST' in os.environ:\n"
            "        return\n"
            "    print('default')\n"
        ),
    ]
    invalid = [
        Invalid('import os\n\nos.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"\n', line=3, column=1),
        Invalid(  # the function goes on only when the variable is set: that depends on it
            "import os\n\n"
            "def setup():\n"
            "    if 'NVIDIA_VISIBLE_DEVICES' not in os.environ:\n"
            "        return\n"
            "    configure_gpus()\n",
            line=4,
        ),
        Invalid(  # the value is used, not only tested
            "import os\n\n"
            "def archs():\n"
            "    if os.environ.get('TORCH_CUDA_ARCH_LIST'):\n"
            "        return os.environ['TORCH_CUDA_ARCH_LIST'].split(';')\n"
            "    return []\n",
            line=4,
        ),
        Invalid('from os import getenv\n\narchs = getenv("TORCH_CUDA_ARCH_LIST", "")\n'),
        Invalid('import os\n\nos.environ.setdefault("TORCH_USE_CUDA_DSA", "1")\n'),
        Invalid('import os\n\nif "NVIDIA_VISIBLE_DEVICES" in os.environ:\n    pass\n'),
    ]

    def on_access(self, access: EnvAccess) -> None:
        if access.kind in {"pop", "del"}:
            return  # removing a variable that has no effect is harmless
        if access.kind in {"get", "subscript", "test"} and self._decides_guarded(access.node):
            return  # read only to decide about code that never runs on ROCm
        if access.kind in {"get", "test"} and self._leaves_set_value(access.node):
            return  # read only to leave a value the user set alone; any write is judged itself
        if cuda_only_handled(access.name, self.ctx.text):
            return  # the file also sets the ROCm counterpart: the build already handles ROCm
        message, severity = cuda_only_note(access.name)
        self.report(access.node, message=message, problem=Problem(severity=severity))

    def _leaves_set_value(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` reads the variable only in the test of an ``if`` that exits when it
        is set (``if os.environ.get(V): return``, ``if V in os.environ: return``): the read
        keeps a user's value from being overridden. On ROCm the variable is ignored and
        usually unset, so the code after it runs as it does on NVIDIA without a user's value;
        what that code does (a write of the variable) is reported on its own."""
        set_means_true = True
        child, parent = node, self.ctx.parent(node)
        if isinstance(node, cst.Comparison):  # ``V in os.environ`` / ``V not in os.environ``
            operators = [target.operator for target in node.comparisons]
            if len(operators) != 1:
                return False
            set_means_true = isinstance(operators[0], cst.In)
        elif isinstance(parent, cst.Comparison) and parent.left is child:
            # ``os.environ.get(V) is not None`` / ``... is None``
            if len(parent.comparisons) != 1:
                return False
            target = parent.comparisons[0]
            if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
                return False
            if isinstance(target.operator, cst.IsNot):
                set_means_true = True
            elif isinstance(target.operator, cst.Is):
                set_means_true = False
            else:
                return False
            child, parent = parent, self.ctx.parent(parent)
        while isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            set_means_true = not set_means_true
            child, parent = parent, self.ctx.parent(parent)
        if not (isinstance(parent, cst.If) and parent.test is child) or not set_means_true:
            return False
        return parent.orelse is None and _only_exits(parent.body)

    def _decides_guarded(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is in the test of an ``if`` whose body never runs on ROCm
        (``if os.environ.get(V) is None and CUDA_HOME is not None:``)."""
        child, parent = node, self.ctx.parent(node)
        while parent is not None and not isinstance(parent, cst.BaseSuite):
            if isinstance(parent, cst.If) and parent.test is child:
                return bool(self.ctx.guards.guard_of(parent.body))
            child, parent = parent, self.ctx.parent(parent)
        return False


def _only_exits(body: cst.BaseSuite) -> bool:
    """Whether a block does nothing but leave (``return``, ``return None``, ``continue``)."""
    smalls = simple_statements(body)
    return (
        smalls is not None
        and bool(smalls)
        and all(
            isinstance(small, cst.Continue)
            or (isinstance(small, cst.Return) and (small.value is None or _is_none(small.value)))
            for small in smalls
        )
    )


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
