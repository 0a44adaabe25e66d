"""ROC301 (hardcoded-warp-size): flags the number 32 used as the warp size in Python."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.syntax import literal_value

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree, identifier, tokens, tree

_SIZE_WORDS = {"size", "sz", "threads", "thread", "lanes", "lane", "width", "len", "length"}


def warp_size_name(name: str | None) -> bool:
    """``WARP_SIZE``, ``warp_size``, ``kWarpSize``, ``THREADS_PER_WARP``, ``warpSize``..."""
    if not name:
        return False
    lowered = name.lower()
    if "warpsize" in lowered.replace("_", ""):
        return "warps" not in lowered
    words = tokens(name)
    return "warp" in words and bool(set(words) & _SIZE_WORDS)


def _is_32(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Integer) and literal_value(node) == 32


class HardcodedWarpSize(PythonRule):
    """
    ## What it does
    Flags the number 32 used as the warp size in Python: `WARP_SIZE = 32`, `warp_size=32`
    arguments and defaults, `THREADS_PER_WARP: tl.constexpr = 32`, `num_warps * 32` thread counts
    and `assert warp_size == 32`.

    ## Why it breaks on ROCm
    AMD Instinct GPUs (CDNA: MI250X gfx90a, MI300X gfx942, MI355X gfx950) execute 64-lane
    wavefronts; only RDNA consumer GPUs use 32. Launch math and lane arithmetic built on 32 sizes
    blocks and shared-memory buffers wrongly and makes warp-level reductions cover half a
    wavefront: wrong results, not just slow ones. In Triton on AMD, `num_warps` counts 64-lane
    wavefronts, so `num_warps * 32` is half the real thread count.

    ## Example
    ```python
    WARP_SIZE = 32
    threads = num_warps * 32
    ```

    ## Manual migration
    Read the size from the device and derive everything from it:
    ```python
    WARP_SIZE = torch.cuda.get_device_properties(device).warp_size   # 64 on CDNA, 32 on RDNA/NVIDIA
    threads = num_warps * WARP_SIZE
    ```
    Triton kernels should take it as a `tl.constexpr` argument filled from that property.

    ## Known problems
    Only names that say "warp size" (`warp` together with size/threads/lanes/width) are checked;
    a bare `32` in lane arithmetic (`tid % 32`) is not.

    ## References
    - ROCm/HIP `docs/reference/kernel_language.rst` (warp size, `warpSize`)
    - triton-lang/triton `third_party/amd/backend/driver.py`
    """

    code = "ROC301"
    # reads the statement around each literal 32 (and the guards the engine keeps around it)
    # the statement holding a finding also holds its literal 32, spelled `32`, `3_2` or with
    # a base prefix (`0x20`, `0o40`, `0b100000`)
    parsing = Parsing(
        scope="statement",
        triggers=("warp", "Warp", "WARP"),
        statement_requires=("32", "3_2", "0x", "0X", "0o", "0O", "0b", "0B"),
    )
    name = "hardcoded-warp-size"
    category = "warp-size"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path",
        aggregate="scope",
        targets=("gfx90a", "gfx942", "gfx950"),
        effort_hours=1.0,
    )
    message = "warp size hard-coded to 32: AMD CDNA GPUs (MI300X) run 64-lane wavefronts"
    fact = "§0 wave size; §1 warp_size row; §7 custom Triton kernels; §10.3; [D2][T1][H3]"
    valid = [
        Valid("import torch\nWARP_SIZE = torch.cuda.get_device_properties(0).warp_size\n"),
        Valid("NUM_WARPS = 32\nconfig = dict(num_warps=32)\n"),
        Valid("import torch\nWARP_SIZE = 64 if torch.version.hip else 32\n"),
        Valid("def launch(warp_size):\n    return warp_size * 4\nBLOCK = 32\n"),
        Valid('"""WARP_SIZE = 32 in a docstring"""\n# warp_size = 32\n'),
        # a branch only ROCm runs already chooses per GPU (wave32 Radeon, wave64 Instinct)
        Valid(
            "import torch\n"
            "def config_prune(configs):\n"
            "    if torch.version.hip:\n"
            "        try:\n"
            "            arch = torch.cuda.get_device_properties(0).gcnArchName\n"
            '            if "gfx11" in arch:\n'
            "                warp_size = 32\n"
            "            else:\n"
            "                warp_size = 64\n"
            "        except AttributeError:\n"
            "            warp_size = 64\n"
            "        return [c for c in configs if c.num_warps * warp_size <= 1024]\n"
            "    return configs\n"
        ),
    ]
    invalid = [
        Invalid("WARP_SIZE = 32\n", line=1, column=13),
        Invalid("import triton.language as tl\nTHREADS_PER_WARP: tl.constexpr = 32\n", line=2),
        Invalid("def kernel_launch(x, warp_size=32):\n    return x\n"),
        Invalid("def threads(cfg):\n    return cfg.num_warps * 32\n", line=2, column=28),
        Invalid(
            "import mylib\nmylib.launch(warp_size=32)\nassert mylib.WARP_SIZE == 32\n", count=1
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        for candidate in tree_.of_type(cst.Integer):
            if not _is_32(candidate):
                continue
            reason = self._reason(tree_, candidate)
            if reason is None or unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            if self.ctx.guards.only_on_rocm(candidate):
                continue  # the project's own ROCm branch chose it (wave32 on Radeon)
            self.report(candidate, message=reason)

    def _reason(self, tree_: Tree, literal: cst.CSTNode) -> str | None:
        parent = tree_.parent(literal)
        if isinstance(parent, cst.IfExp):
            parent = tree_.parent(parent)  # `32 if ... else 32`: judge the whole expression
        if isinstance(parent, cst.Assign):
            names = [identifier(target.target) for target in parent.targets]
            if any(warp_size_name(name) for name in names):
                return self.message
        elif isinstance(parent, cst.AnnAssign):
            if warp_size_name(identifier(parent.target)):
                return self.message
        elif isinstance(parent, cst.Arg) and parent.keyword is not None:
            if warp_size_name(parent.keyword.value):
                return self.message
        elif isinstance(parent, cst.Param):
            if warp_size_name(parent.name.value):
                return self.message
        elif isinstance(parent, cst.DictElement):
            key = literal_value(parent.key)
            if isinstance(key, str) and warp_size_name(key):
                return self.message
        elif isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
            other = parent.right if parent.left is literal else parent.left
            name = identifier(other)
            if name and "warp" in name.lower() and not warp_size_name(name):
                return (
                    f"`{name} * 32` assumes 32 threads per warp: on AMD CDNA GPUs a warp "
                    "(wavefront) has 64 lanes"
                )
        elif isinstance(parent, cst.ComparisonTarget):
            comparison = tree_.parent(parent)
            if isinstance(comparison, cst.Comparison) and any(
                isinstance(ancestor, cst.Assert) for ancestor in tree_.ancestors(comparison)
            ):
                if warp_size_name(identifier(comparison.left)):
                    return "asserting a warp size of 32 fails on AMD CDNA GPUs (64-lane wavefronts)"
        return None
