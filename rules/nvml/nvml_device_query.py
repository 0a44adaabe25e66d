"""ROC202 (nvml-device-query): flags NVML queries (`nvmlDeviceGet*`, `nvmlSystemGet*`, ...) called
through `pynvml`, `py3nvml` or `nvidia_smi`, and names the `torch.cuda` and `amdsmi` equivalents
with their differences in units and semantics."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from migrator.api import (
    NO_PROBLEM,
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Problem,
    PythonContext,
    Rewrite,
    Severity,
    Valid,
)
from migrator.api.syntax import fast_visit, syntax_children

from ._shared import (
    _IMPORT_FAILS,
    _init_at_import,
    _is_binding,
    _nvml_error_handler,
    _NvmlResolver,
    _table,
    init_fails_in,
    init_problem,
)

_QUERY_PREFIXES = ("nvmlDevice", "nvmlSystem", "nvmlUnit", "nvmlGpuInstance", "nvmlVgpu")

_PLUMBING = ("nvmlDeviceGetHandleBy",)


def _nvml_removals(ctx: PythonContext, node: cst.CSTNode) -> list[tuple[str | None, ...]]:
    """NVML imports that a rewrite of ``node`` may leave unused: the fixer removes those that
    nothing else uses, so a fully rewritten module imports without pynvml."""
    found: list[tuple[str | None, ...]] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            full = ctx.imports.bindings.get(name.value)
            if full is not None and _is_binding(full):
                found.extend(ctx.unused_imports(name, full.split(".", 1)[0]))

    fast_visit(node, _Names(), trivia=False)
    return found


def _cleared_on_nvml_error(ctx: PythonContext) -> frozenset[str]:
    """Names the module sets to ``None`` when NVML fails (``except pynvml.NVMLError: pynvml =
    None``): where they are truthy, ``nvmlInit()`` has succeeded."""
    cached = ctx.memo.get("nvml-cleared")
    if isinstance(cached, frozenset):
        return cached
    names: set[str] = set()
    stack: list[cst.CSTNode] = [ctx.module]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.ExceptHandler) and _nvml_error_handler(current):
            for line in getattr(current.body, "body", ()):
                # the simple statements' parts (a compound statement's body is a block)
                for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name):
                        if small.value.value == "None":
                            names.update(
                                t.target.value
                                for t in small.targets
                                if isinstance(t.target, cst.Name)
                            )
        stack.extend(syntax_children(current))
    result = frozenset(names)
    ctx.memo["nvml-cleared"] = result
    return result


def _behind_cleared_binding(
    ctx: PythonContext, call: cst.Call, anchor: cst.CSTNode | None = None
) -> bool:
    """``if pynvml: pynvml.nvmlDeviceGet...(...)`` where the module sets ``pynvml = None`` when
    ``nvmlInit()`` fails: the query runs only where NVML works, the ``else`` elsewhere."""
    func: cst.BaseExpression = call.func
    while isinstance(func, cst.Attribute):
        func = func.value
    if not isinstance(func, cst.Name):
        return False
    root = func.value
    child: cst.CSTNode = anchor or call
    for ancestor in ctx.ancestors(child):
        if isinstance(ancestor, cst.If) and ancestor.body is child:
            test = ancestor.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                op = test.comparisons[0]
                if isinstance(op.operator, cst.IsNot) and isinstance(op.comparator, cst.Name):
                    test = test.left if op.comparator.value == "None" else test
            if isinstance(test, cst.Name) and test.value == root:
                return root in _cleared_on_nvml_error(ctx)
        child = ancestor
    return False


def _handle_index(resolver: _NvmlResolver, node: cst.Call) -> cst.BaseExpression | None:
    """``i`` when the call's first argument is ``nvmlDeviceGetHandleByIndex(i)`` (a direct
    nested call, the only case where the index is known without data-flow analysis)."""
    positional = [argument for argument in node.args if argument.keyword is None]
    if not positional or positional[0].star:
        return None
    inner = positional[0].value
    if not isinstance(inner, cst.Call):
        return None
    if resolver.nvml_function(inner.func) != "nvmlDeviceGetHandleByIndex":
        return None
    inner_args = [argument for argument in inner.args if argument.keyword is None]
    if len(inner.args) != 1 or len(inner_args) != 1 or inner_args[0].star:
        return None
    return inner_args[0].value


class NvmlDeviceQuery(_NvmlResolver):
    """
    ## What it does
    Flags NVML queries (`nvmlDeviceGet*`, `nvmlSystemGet*`, ...) called through `pynvml`,
    `py3nvml` or `nvidia_smi`, and names the `torch.cuda` and `amdsmi` equivalents with their
    differences in units and semantics.

    ## Why it breaks on ROCm
    Without an NVML library every query raises `NVMLError` (uninitialised / library not
    found). The equivalents differ: amdsmi reports power in **W** (NVML: mW), temperature
    from the junction/hotspot sensor, VRAM in MB from `amdsmi_get_gpu_vram_usage` and no
    `.free` field; amdsmi handles are in physical order and ignore `HIP_VISIBLE_DEVICES`,
    while `torch.cuda` calls take the visible index.

    ## Example
    ```python
    import pynvml

    count = pynvml.nvmlDeviceGetCount()
    name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
    used = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used
    ```

    ## Fix
    Where the rewrite is a valid expression (the device index is known because the handle
    comes straight from `nvmlDeviceGetHandleByIndex(i)`):
    ```python
    import torch

    count = torch.cuda.device_count()
    name = torch.cuda.get_device_name(0)
    used = torch.cuda.device_memory_used(0)
    ```
    `nvmlDeviceGetMemoryInfo(...).total` / `.free` become `torch.cuda.mem_get_info(i)[1]` /
    `[0]`, `nvmlDeviceGetUtilizationRates(...).gpu` / `.memory` become
    `torch.cuda.utilization(i)` / `torch.cuda.memory_usage(i)`, and
    `nvmlDeviceGetTemperature(..., NVML_TEMPERATURE_GPU)` becomes `torch.cuda.temperature(i)`.
    Calls on a handle kept in a variable are reported with the equivalents in the message.

    ## Fix safety
    Unsafe. The torch calls take the *visible* device index (remapped through
    `CUDA_VISIBLE_DEVICES`), NVML the physical one, so the two differ when the variable is
    set; `nvmlDeviceGetCount()` counts every GPU while `torch.cuda.device_count()` counts the
    visible ones. `torch.cuda.mem_get_info(i)` creates a GPU context on device `i` (hundreds
    of MB) and reports the CUDA runtime's total, which can differ slightly from NVML's.
    `get_device_name` returns `str` where old pynvml returned `bytes`. The torch telemetry
    calls still need `pynvml` installed on CUDA builds (and `amdsmi` on ROCm builds).
    `nvmlDeviceGetPowerUsage` is never rewritten: `torch.cuda.power_draw()` is mW on CUDA
    and W on ROCm. `nvmlDeviceGetCount()` is rewritten only when no other NVML query or handle
    stays in the file: a count of the visible GPUs driving `nvmlDeviceGetHandleByIndex(i)` (a
    physical index) would visit the wrong GPUs on NVIDIA and still fail on ROCm.

    ## Known problems
    In a module that calls `nvmlInit()` unguarded at import (it cannot be imported on ROCm) the
    queries are related sites of that one problem (see ROC200), not findings of their own.
    Queries under `if pynvml:` (or `is not None`) are not reported when the module sets that
    name to `None` in an `except ...NVMLError` handler: they run only where `nvmlInit()`
    succeeded, and the `else` is the path ROCm takes.

    ## References
    - ROCm/amdsmi `py-interface/README.md`, `include/amd_smi/amdsmi.h`
    - pytorch/pytorch `torch/cuda/__init__.py`
    """

    code = "ROC202"
    name = "nvml-device-query"
    category = "nvml"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=0.5)
    message = "NVML query fails on ROCm; use torch.cuda telemetry or amdsmi"
    fix = Fixing(
        title="Use the portable torch.cuda telemetry call", applicability=Applicability.UNSAFE
    )
    fact = "§3a, §3b; [A1][A2][P2]"
    parsing = Parsing(triggers=("nvml",))
    valid = [
        Valid(  # a block in the handler: its simple statements are read, the block skipped
            "import torch\npynvml = None\n\ndef init():\n    global pynvml\n    try:\n"
            "        import pynvml\n        pynvml.nvmlInit()\n    except pynvml.NVMLError:\n"
            "        if VERBOSE:\n            print('no NVML')\n        pynvml = None\n\n"
            "def available_memory(i):\n    if pynvml:\n"
            "        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).free\n"
            "    return torch.cuda.mem_get_info(i)[0]\n"
        ),
        Valid("import torch\n\nn = torch.cuda.device_count()\n"),
        Valid("def nvmlDeviceGetCount():\n    return 1\n\nn = nvmlDeviceGetCount()\n"),
        Valid('import pynvml\n"""pynvml.nvmlDeviceGetCount() in a docstring"""\n'),
        Valid("import pynvml\n\nh = pynvml.nvmlDeviceGetHandleByIndex(0)\npynvml.nvmlShutdown()\n"),
        Valid("from nvitop.api import libnvml\n\nn = libnvml.nvmlDeviceGetCount()\n"),
        Valid(
            "import torch\n"
            "pynvml = None\n\n"
            "def init():\n"
            "    global pynvml\n"
            "    try:\n"
            "        import pynvml\n"
            "        pynvml.nvmlInit()\n"
            "    except pynvml.NVMLError:\n"
            "        pynvml = None\n\n"
            "def available_memory(i):\n"
            "    if pynvml:\n"
            "        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).free\n"
            "    return torch.cuda.mem_get_info(i)[0]\n"
        ),
    ]
    invalid = [
        Invalid(
            "import pynvml\n\nn = pynvml.nvmlDeviceGetCount()\n",
            fixed="import torch\n\nn = torch.cuda.device_count()\n",
            line=3,
            column=5,
        ),
        Invalid(
            "import torch as tt\nimport pynvml as nv\n\n"
            "name = nv.nvmlDeviceGetName(nv.nvmlDeviceGetHandleByIndex(i))\n",
            fixed="import torch as tt\n\nname = tt.cuda.get_device_name(i)\n",
        ),
        Invalid(
            "import torch\n"
            "from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo\n\n"
            "used = nvmlDeviceGetMemoryInfo(nvmlDeviceGetHandleByIndex(0)).used / 2**20\n",
            fixed="import torch\n\nused = torch.cuda.device_memory_used(0) / 2**20\n",
        ),
        Invalid(
            "import torch\nimport pynvml\n\n"
            "util = pynvml.nvmlDeviceGetUtilizationRates(\n"
            "    pynvml.nvmlDeviceGetHandleByIndex(1)).gpu\n",
            fixed="import torch\n\nutil = torch.cuda.utilization(1)\n",
        ),
        Invalid(
            "import torch\nimport pynvml\n\nh = pynvml.nvmlDeviceGetHandleByIndex(0)\n"
            "mem = pynvml.nvmlDeviceGetMemoryInfo(h)\n",
            line=5,
        ),
        Invalid(
            "import pynvml\n\nfor i in range(pynvml.nvmlDeviceGetCount()):\n"
            "    h = pynvml.nvmlDeviceGetHandleByIndex(i)\n",
            line=3,
            fixed=None,
        ),
        Invalid(
            "import pynvml\n\nfor i in range(pynvml.nvmlDeviceGetCount()):\n"
            "    print(pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i)))\n",
            fixed="import torch\n\nfor i in range(torch.cuda.device_count()):\n"
            "    print(torch.cuda.get_device_name(i))\n",
        ),
        Invalid(
            "import torch\nimport pynvml\n\n"
            "t = pynvml.nvmlDeviceGetTemperature(pynvml.nvmlDeviceGetHandleByIndex(0), "
            "pynvml.NVML_TEMPERATURE_GPU)\n",
            fixed="import torch\n\nt = torch.cuda.temperature(0)\n",
        ),
        Invalid(
            "import pynvml\n\n"
            "mw = pynvml.nvmlDeviceGetPowerUsage(pynvml.nvmlDeviceGetHandleByIndex(0))\n",
        ),
        Invalid(
            "from pynvml import *\n\nbus = nvmlDeviceGetPciInfo(handle).busId\n",
        ),
        Invalid(
            "import pynvml\n\n"
            "name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0)).decode()\n",
        ),
        Invalid(  # nvmlInit() at import: one problem with the module's import (see ROC200)
            "import pynvml\n\npynvml.nvmlInit()\n\n"
            "def count():\n    return pynvml.nvmlDeviceGetCount()\n\n"
            "def name(h):\n    return pynvml.nvmlDeviceGetName(h)\n",
            line=6,
            count=1,
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._handled: set[int] = set()
        self._no_fix: set[int] = set()
        self._handle_calls: list[int] = []
        self._consumed: set[int] = set()
        self._kept_query = False
        self._counts: list[tuple[cst.Call, str]] = []  # (call, NVML function)
        self._held: list[tuple[cst.CSTNode, str | None, Rewrite | None, Problem, int]] = []

    def _message(self, function: str) -> str:
        entry = _table()["functions"].get(function)
        if entry is None:
            return (
                f"`{function}` (NVML) fails on ROCm; find the amdsmi counterpart in the amdsmi "
                "Python API or use torch.cuda telemetry"
            )
        text = f"`{function}` fails on ROCm (no NVML)."
        if "torch" in entry:
            text += f" Portable: `{entry['torch']}`."
        text += f" amdsmi: `{entry['amdsmi']}`."
        if entry.get("note"):
            text += f" Differences: {entry['note']}."
        return text

    def _torch(
        self, template: str, index: cst.BaseExpression | None
    ) -> tuple[cst.BaseExpression, list[tuple[str, str | None]]]:
        torch_name, imports = self.ctx.module_ref("torch")
        text = template
        if index is not None:
            text = text.replace("{index}", self.ctx.code(index))
        text = torch_name + text[len("torch") :]
        return cst.parse_expression(text), imports

    def visit_Attribute(self, node: cst.Attribute) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        function = self.nvml_function(call.func)
        if function is None:
            return
        if node.attr.value == "decode":
            # ``nvmlDeviceGetName(h).decode()``: torch returns str, which has no decode()
            self._no_fix.add(id(call))
            return
        entry = _table()["functions"].get(function, {})
        fields = entry.get("fields") if entry.get("fix") == "fields" else None
        if not fields or node.attr.value not in fields:
            return
        index = _handle_index(self, call)
        if index is None:
            return
        self._handled.add(id(call))
        if _behind_cleared_binding(self.ctx, call, node):
            return  # runs only where nvmlInit() succeeded (NVIDIA); ROCm takes the else
        self._consumed.add(id(call.args[0].value))
        replacement, imports = self._torch(fields[node.attr.value], index)
        self.report(
            node,
            message=self._message(function),
            fix=Rewrite(
                replacement, imports=imports, remove_imports=_nvml_removals(self.ctx, node)
            ),
        )

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._handled:
            return
        function = self.nvml_function(node.func)
        if function is None or not function.startswith(_QUERY_PREFIXES):
            return
        if _behind_cleared_binding(self.ctx, node):
            return  # runs only where nvmlInit() succeeded (NVIDIA); ROCm takes the else
        if function.startswith(_PLUMBING):
            self._handle_calls.append(id(node))
            return
        entry = _table()["functions"].get(function, {})
        replacement: cst.BaseExpression | None = None
        imports: list[tuple[str, str | None]] = []
        fix = entry.get("fix") if id(node) not in self._no_fix else None
        if fix == "count" and not node.args:
            self._counts.append((node, function))  # decided at the module's end
            return
        if fix == "by-index":
            index = _handle_index(self, node)
            extra = [argument for argument in node.args][1:]
            allowed = entry.get("second_arg")
            ok = (
                not extra
                if allowed is None
                else (
                    len(extra) == 1
                    and extra[0].keyword is None
                    and self._matches(extra[0].value, allowed)
                )
            )
            if index is not None and ok:
                replacement, imports = self._torch(entry["template"], index)
                self._consumed.add(id(node.args[0].value))
        self._kept_query = self._kept_query or replacement is None
        self.report(
            node,
            message=self._message(function),
            fix=Rewrite(
                replacement,
                imports=imports,
                remove_imports=_nvml_removals(self.ctx, node) if replacement is not None else (),
            ),
        )

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        fix: Rewrite | None = None,
        problem: Problem = NO_PROBLEM,
    ) -> None:
        """Held until the module's end: where the module calls ``nvmlInit()`` at import (it
        cannot be imported on ROCm) every query is part of that one problem."""
        self._held.append((node, message, fix, problem, len(self.ctx.nodes)))

    def leave_Module(self, original_node: cst.Module) -> None:
        self._leave_module()
        at_import = _init_at_import(self.ctx)
        inits = init_fails_in(self.ctx)
        for node, message, fix, held, visited in self._held:
            problem = _IMPORT_FAILS if at_import else ""
            scope = self.ctx.scope_path(node)
            if not problem and scope and inits.get(scope, visited) < visited:
                # after an unguarded nvmlInit() of its function (ROC201): never runs on ROCm
                problem = init_problem(scope)
            super().report(node, message, fix, replace(held, key=problem) if problem else held)

    def _leave_module(self) -> None:
        # A GPU count from torch (visible GPUs) next to NVML calls that stay (physical indexes,
        # every GPU) would loop over the wrong devices on NVIDIA and still fail on ROCm: the
        # count is rewritten only when no NVML query or handle is left in the file.
        kept = self._kept_query or any(h not in self._consumed for h in self._handle_calls)
        for node, function in self._counts:
            message = self._message(function)
            if kept:
                self.report(
                    node,
                    message=f"{message} No automatic fix here: the file keeps NVML calls "
                    "indexed by physical GPU, which a count of the visible GPUs would not match; "
                    "move them to torch.cuda or amdsmi together",
                )
                continue
            replacement, imports = self._torch(_table()["functions"][function]["torch"], None)
            self.report(
                node,
                message=message,
                fix=Rewrite(
                    replacement, imports=imports, remove_imports=_nvml_removals(self.ctx, node)
                ),
            )

    def _matches(self, value: cst.BaseExpression, allowed: list[str]) -> bool:
        if isinstance(value, cst.Integer):
            return value.value in allowed
        if isinstance(value, cst.Name) and self._star and value.value in allowed:
            return True
        qualified = self.ctx.qualname(value)
        if qualified is None:
            return False
        return any(qualified == f"{prefix}{name}" for prefix in self._prefixes for name in allowed)
