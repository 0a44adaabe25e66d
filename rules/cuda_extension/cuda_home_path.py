"""ROC604 (cuda-home-path): a path built from ``torch.utils.cpp_extension.CUDA_HOME``, which is
None on ROCm builds of torch."""

from __future__ import annotations

import libcst as cst

from migrator.api import (
    Impact,
    Invalid,
    Parsing,
    Problem,
    PythonContext,
    PythonRule,
    Severity,
    Valid,
)

from .._rocm_guards import in_try_catching, unreachable_on_rocm
from .._tree import Tree, identifier, qualified_refs, tree
from ._shared import EXTENSION_BUILD, _rocm_aware

_CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
#: Calls that raise TypeError when a path part is None.
_PATH_CALLS = frozenset({"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath"})


class CudaHomePath(PythonRule):
    """
    ## What it does
    Flags a path built from `torch.utils.cpp_extension.CUDA_HOME` (`CUDA_HOME + "/bin/nvcc"`,
    `os.path.join(CUDA_HOME, "bin", "nvcc")`, `Path(CUDA_HOME)`), directly or by passing it to a
    function of the same file that builds one from that parameter, where the file's own
    top-level code reaches it (a build script runs top to bottom: module statements and the
    module functions they call) and neither a test of `CUDA_HOME` in the same function nor a
    vendor guard keeps it from running on ROCm. In a file that also builds the extension
    (ROC600) it is a related site of that one finding.

    ## Why it breaks on ROCm
    `cpp_extension.CUDA_HOME` is the CUDA toolkit torch found; ROCm builds of torch do not look
    for one (`_find_cuda_home()` runs only when `torch.version.cuda` is set), so it is `None`
    and the path expression raises `TypeError`, typically in a `setup.py` that asks
    `nvcc -V` for the CUDA version before building its extensions. The ROCm toolkit is
    `cpp_extension.ROCM_HOME`.

    ## Example
    ```python
    from torch.utils import cpp_extension

    nvcc = cpp_extension.CUDA_HOME + "/bin/nvcc"
    ```

    ## Manual migration
    Ask about the toolkit only for CUDA builds:
    ```python
    from torch.utils import cpp_extension

    if not cpp_extension.IS_HIP_EXTENSION:
        nvcc = cpp_extension.CUDA_HOME + "/bin/nvcc"
    ```

    ## Known problems
    A test of the parameter inside the called function (`if cuda_dir is None: return`) is not
    seen; a test of `CUDA_HOME` anywhere in the calling function counts as a guard. Methods
    (op builders whose callers check compatibility first) and functions the file never calls
    itself are left alone.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py` (`CUDA_HOME`, `ROCM_HOME`)
    """

    code = "ROC604"
    name = "cuda-home-path"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.5)
    message = (
        "`torch.utils.cpp_extension.CUDA_HOME` is None on ROCm builds of torch: building a path "
        "from it raises TypeError (the ROCm toolkit is `cpp_extension.ROCM_HOME`)"
    )
    fact = "§6 CUDA_HOME / CUDA_PATH; §7 CUDAExtension row; [P9]"
    parsing = Parsing(triggers=("CUDA_HOME",), requires_imports=(_CUDA_HOME,))
    valid = [
        Valid("from torch.utils.cpp_extension import CUDA_HOME\n\nprint(CUDA_HOME)\n"),
        Valid(
            "from torch.utils.cpp_extension import CUDA_HOME\n"
            "if CUDA_HOME is not None:\n    nvcc = CUDA_HOME + '/bin/nvcc'\n"
        ),
        Valid(
            "import torch\nfrom torch.utils import cpp_extension\n"
            "if torch.version.hip is None:\n"
            "    nvcc = cpp_extension.CUDA_HOME + '/bin/nvcc'\n"
        ),
        Valid(  # the helper only formats the value
            "from torch.utils.cpp_extension import CUDA_HOME\n"
            "def show(home):\n    print('toolkit:', home)\nshow(CUDA_HOME)\n"
        ),
        Valid("import os\nCUDA_HOME = os.environ.get('X', '')\nnvcc = CUDA_HOME + '/bin/nvcc'\n"),
        Valid(  # an op builder's method: its caller checks compatibility before building
            "import os, torch\nclass GDSBuilder:\n    def include_paths(self):\n"
            "        return [os.path.join(torch.utils.cpp_extension.CUDA_HOME, 'include')]\n"
        ),
    ]
    invalid = [
        Invalid(
            "from torch.utils import cpp_extension\nnvcc = cpp_extension.CUDA_HOME + '/bin/nvcc'\n",
            line=2,
            column=8,
        ),
        Invalid(
            "import os\nfrom torch.utils.cpp_extension import CUDA_HOME\n"
            "nvcc = os.path.join(CUDA_HOME, 'bin', 'nvcc')\n",
            line=3,
        ),
        Invalid(  # passed to a helper that builds the nvcc path from its parameter
            "import subprocess\nfrom torch.utils import cpp_extension\n"
            "def cuda_version(cuda_dir):\n"
            "    return subprocess.check_output([cuda_dir + '/bin/nvcc', '-V'])\n"
            "out = cuda_version(cpp_extension.CUDA_HOME)\n",
            line=5,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        refs = qualified_refs(self.ctx, tree_, {_CUDA_HOME})
        if not refs:
            return
        tested = {id(tree_.scope(ref)) for ref in refs if _tested(tree_, ref)}
        builders = _path_parameters(self.ctx, tree_)
        called = _called_at_top(tree_)
        for ref in refs:
            scope = tree_.scope(ref)
            if id(scope) in tested:
                continue
            if scope is not tree_.module and not (
                isinstance(scope, cst.FunctionDef)
                and tree_.parent(scope) is tree_.module
                and scope.name.value in called
            ):
                continue
            if not (_builds_path(self.ctx, tree_, ref) or _passed_to_builder(tree_, ref, builders)):
                continue
            if (
                unreachable_on_rocm(self.ctx, tree_, ref)
                or in_try_catching(tree_, ref, {"TypeError"})
                or _rocm_aware(self.ctx, ref)
            ):
                continue
            self.report(ref, problem=Problem(key=EXTENSION_BUILD))


def _called_at_top(tree_: Tree) -> set[str]:
    """Names called by the module's own statements (outside any function or class)."""
    out: set[str] = set()
    for node in tree_.nodes:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            if not any(
                isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
                for ancestor in tree_.ancestors(node)
            ):
                out.add(node.func.value)
    return out


def _tested(tree_: Tree, ref: cst.CSTNode) -> bool:
    """Whether ``ref`` is tested for a value (``if CUDA_HOME``, ``CUDA_HOME is None``, ``not``,
    an ``and``/``or`` operand)."""
    parent = tree_.parent(ref)
    if isinstance(parent, cst.Comparison):
        return any(
            isinstance(target.comparator, cst.Name) and target.comparator.value == "None"
            for target in parent.comparisons
        )
    if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
        return getattr(parent, "test", None) is ref
    if isinstance(parent, cst.UnaryOperation):
        return isinstance(parent.operator, cst.Not)
    return isinstance(parent, cst.BooleanOperation)


def _builds_path(ctx: PythonContext, tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether ``node`` is a part of a path expression that raises on None: an operand of ``+``
    or an argument of ``os.path.join``/``Path``."""
    parent = tree_.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
        return True
    if isinstance(parent, cst.Arg) and parent.value is node and not parent.keyword:
        call = tree_.parent(parent)
        if isinstance(call, cst.Call):
            return ctx.qualname(call.func) in _PATH_CALLS
    return False


def _path_parameters(ctx: PythonContext, tree_: Tree) -> dict[str, set[int]]:
    """Module functions -> the positions of the parameters they build a path from."""
    out: dict[str, set[int]] = {}
    for inner in tree_.nodes:
        if not isinstance(inner, cst.Name):
            continue
        function = tree_.scope(inner)
        if not isinstance(function, cst.FunctionDef):
            continue
        names = [param.name.value for param in function.params.params]
        if inner.value in names and _builds_path(ctx, tree_, inner):
            out.setdefault(function.name.value, set()).add(names.index(inner.value))
    return out


def _passed_to_builder(tree_: Tree, ref: cst.CSTNode, builders: dict[str, set[int]]) -> bool:
    parent = tree_.parent(ref)
    if not isinstance(parent, cst.Arg) or parent.keyword or parent.star:
        return False
    call = tree_.parent(parent)
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return False
    positions = builders.get(identifier(call) or "")
    if not positions:
        return False
    index = next(i for i, arg in enumerate(call.args) if arg is parent)
    return index in positions
