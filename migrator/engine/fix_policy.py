"""Which offered fixes may be applied in this project: none in files or CI jobs that exist for
NVIDIA, and none emitting an API newer than the project (or the version branch) supports."""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

import libcst as cst

from migrator.engine.context import PythonContext, RawPythonFinding, RawTextFinding, TextContext
from migrator.knowledge.vendor_tokens import NVIDIA_GPU_MODEL_TOKENS, NVIDIA_HOSTED_TOKENS
from migrator.knowledge.versions import ProjectFacts, VersionRange, branch_range
from migrator.model import WITHHELD, Applicability
from migrator.syntax.astutil import handler_types

_Raw = TypeVar("_Raw", RawPythonFinding, RawTextFinding)


_NVIDIA_TOKENS = frozenset(
    {
        "cuda",
        "nvidia",
        "nv",
        "ngc",
        "nvcr",
        "tensorrt",
        "trt",
        "trtllm",
        "b200",
        "gb200",
        "h100",
        "h200",
        "a100",
        "hopper",
        "blackwell",
        "cudnn",
        "te",
    }
)
_PYTHON_NVIDIA_TOKENS = frozenset(
    {"nvidia", "ngc", "tensorrt", "trtllm", "cute", "cutlass", "fa3", "fa4"}
    # an NVIDIA GPU model in the path: a script or test for that GPU (``t4_smoke/run_t4.py``)
    | NVIDIA_GPU_MODEL_TOKENS
    # a hosted service with NVIDIA GPUs only (``tests/kaggle/...``, ``colab_demo.py``)
    | NVIDIA_HOSTED_TOKENS
)
#: Packages that exist only for NVIDIA GPUs: a module importing one is NVIDIA code by purpose.
_NVIDIA_ONLY_PACKAGES = (
    "transformer_engine",
    "tensorrt",
    "tensorrt_llm",
    "cutlass",
    "cuda.bindings",
)
_CU_TAG = re.compile(r"^cu\d{2,3}$")


def _tokens(path: str) -> list[str]:
    return [token for token in re.split(r"[^a-z0-9]+", path.lower()) if token]


def nvidia_specific_path(path: str, kind: str) -> bool:
    """Whether a file is for NVIDIA by name (``docker/docker-cuda/…``, ``Dockerfile.B200``,
    ``tests_cuda.yml``, ``requirements-cu121.txt``): such files are never edited in place."""
    tokens = _tokens(path)
    if kind in ("python", "notebook"):
        return any(token in _PYTHON_NVIDIA_TOKENS for token in tokens)
    return any(token in _NVIDIA_TOKENS or _CU_TAG.match(token) for token in tokens)


def imports_nvidia_only_package(modules: Iterable[str]) -> bool:
    """Whether any imported module belongs to a package that exists only for NVIDIA GPUs
    (``transformer_engine``, ``tensorrt``, ``cutlass``): such a module is NVIDIA code by purpose."""
    return any(
        full == package or full.startswith(package + ".")
        for full in modules
        for package in _NVIDIA_ONLY_PACKAGES
    )


def ci_block_is_nvidia(text: str, offset: int) -> bool:
    """Whether the CI job or step holding ``offset`` exists for NVIDIA (never edited in place)."""
    return _ci_job_is_nvidia(text, offset) or _ci_step_is_nvidia(text, offset)


def _ci_job_is_nvidia(text: str, offset: int) -> bool:
    """Whether the CI job (a block under ``jobs:``) holding ``offset`` is for NVIDIA by name,
    runner labels or container image."""
    start = text.rfind("\n", 0, offset) + 1
    lines_before = text[:start].splitlines()
    job_indent = None
    job_start = 0
    for index in range(len(lines_before) - 1, -1, -1):
        line = lines_before[index]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            if line.startswith("jobs:") and job_indent is not None:
                break
            return False
        if job_indent is None or indent < job_indent:
            job_indent = indent
            job_start = index
    if job_indent is None:
        return False
    lines = text.splitlines()
    block = [lines[job_start]]
    for line in lines[job_start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= job_indent:
            break
        block.append(line)
    header = "\n".join(
        line for line in block if re.match(r"\s*(runs-on|image|container|\w[\w-]*:\s*$)", line)
    )
    return any(token in _NVIDIA_TOKENS - {"te"} for token in _tokens(header))


_SWAP_REASON = (
    "the change would replace NVIDIA's build for everyone using this file; put it in a ROCm "
    "variant beside it (Dockerfile.rocm, docker-compose.rocm.yml, requirements-rocm.txt, a ROCm "
    "CI job)"
)


_KERNEL_REASON = (
    "the rewrite would replace the NVIDIA kernel for everyone; dispatch by hand (keep this call "
    "where its package imports, the portable one elsewhere, and make the import optional)"
)


def _ci_step_is_nvidia(text: str, offset: int) -> bool:
    """Whether the CI step (a ``- `` list item) holding ``offset`` runs only for NVIDIA
    (its ``if:`` or ``name:`` names CUDA or NVIDIA)."""
    line_start = text.rfind("\n", 0, offset) + 1
    before = text[:line_start].splitlines()
    here = text[line_start:].split("\n", 1)[0]
    step = [here]
    if not here.lstrip().startswith("- "):
        indent = len(here) - len(here.lstrip())
        for index in range(len(before) - 1, -1, -1):
            stripped = before[index].lstrip()
            if stripped.startswith("- ") and len(before[index]) - len(stripped) < indent:
                step = [*before[index:], here]
                break
    step_indent = len(step[0]) - len(step[0].lstrip())
    for line in text[line_start:].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= step_indent:
            break
        step.append(line)
    header = " ".join(line for line in step if re.match(r"\s*(-\s+)?(if|name)\s*:", line))
    return any(token in {"cuda", "nvidia", "cudnn", "tensorrt"} for token in _tokens(header))


def _withhold(raw: RawPythonFinding | RawTextFinding, reason: str) -> None:
    """Drop ``raw``'s fix, saying why; a report that declared the problem it belongs to
    without its fix joins that problem."""
    raw.replacement = None
    raw.applicability = Applicability.NONE
    raw.message = f"{raw.message}; {WITHHELD}{reason}"
    if isinstance(raw, RawPythonFinding) and raw.problem_without_fix:
        raw.problem = raw.problem_without_fix


def version_constants(module: cst.Module) -> dict[str, str]:
    """The module-level names bound once to a version test (``TORCH_GE_2 =
    version.parse(torch.__version__) >= version.parse("2.0")``, ``HAS_AMP = hasattr(torch,
    "amp")``), name -> the test's code, so that ``if TORCH_GE_2:`` reads as that test."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            target: cst.BaseExpression | None = None
            value: cst.BaseExpression | None = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            if not isinstance(target, cst.Name) or value is None:
                continue
            if target.value in seen:
                found.pop(target.value, None)  # bound twice: not a constant
                continue
            seen.add(target.value)
            code = module.code_for_node(value)
            if "version" in code or "hasattr" in code or "is_" in code:
                found[target.value] = code
    return found


def _branch_ranges(
    context: PythonContext, node: cst.CSTNode, constants: dict[str, str] | None = None
) -> dict[str, VersionRange]:
    """Version constraints of the ``if``/``else`` branches enclosing ``node`` (``constants``:
    the file's ``version_constants``)."""
    found: dict[str, VersionRange] = {}
    child = node
    for ancestor in context.ancestors(node):
        test: cst.BaseExpression | None = None
        negate = False
        if isinstance(ancestor, cst.If | cst.IfExp):
            if child is ancestor.body:
                test = ancestor.test
            elif child is ancestor.orelse:
                test, negate = ancestor.test, True
        if test is not None:
            for package, bound in branch_range(context.code(test), negate, constants).items():
                found[package] = found.get(package, VersionRange()).intersect(bound)
        child = ancestor
    return found


def police_python(context: PythonContext) -> None:
    """Withhold the fixes of a Python file that the project's versions or purpose rule out."""
    facts = context.inputs.facts or ProjectFacts()
    nvidia_only = imports_nvidia_only_package(context.imports.bindings.values())
    if nvidia_only or nvidia_specific_path(context.path, "python"):
        for raw in _fixable(context.reports):
            _withhold(raw, "this file is for NVIDIA; leave it and add a ROCm variant beside it")
        return
    swap = context.inputs.vendor_swap
    flags = availability_flags(context.module)
    constants: dict[str, str] | None = None
    for raw in _fixable(context.reports):
        if raw.rule.fix.replaces_vendor and not swap:
            _withhold(raw, _KERNEL_REASON)
            continue
        fallback = _fallback_for(context, raw)
        if fallback:
            _withhold(
                raw,
                f"this `except` handler is the fallback for versions without `{fallback}`, "
                "which its `try` already uses; it is left as written",
            )
            continue
        flag = _flag_over(context, raw.node, flags) if raw.rule.category in _KERNELS else None
        if flag:
            _withhold(
                raw,
                f"this code already runs only when `{flag}` is set, after its optional import "
                "succeeded, and the other branch is the fallback; it is left as written",
            )
            continue
        if not raw.requires:
            continue
        api = _new_api(context, raw)
        if constants is None:
            constants = version_constants(context.module)
        reason = facts.unmet(raw.requires, _branch_ranges(context, raw.node, constants), api)
        if reason:
            _withhold(raw, reason)
        elif _imports_new_api(raw) and (outside := facts.unmet(raw.requires, api=api)):
            # the branch admits the new API, but the import the fix adds sits at module level
            _withhold(raw, f"the import it adds runs outside the version branch: {outside}")
    _couple(context.reports)


#: Rule categories whose fixes replace or dispatch a vendor kernel package.
_KERNELS = frozenset({"flash-attn", "xformers", "apex"})


def availability_flags(module: cst.Module) -> set[str]:
    """Module-level names set to ``True`` in a ``try`` body after an import, where the ``try``
    catches ``ImportError`` (``try: import flash_attn; HAS_FLASH_ATTN = True``)."""
    flags: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.Try) or not isinstance(statement.body, cst.IndentedBlock):
            continue
        if not any(_catches_import_error(handler) for handler in statement.handlers):
            continue
        seen_import = False
        for line in statement.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.Import | cst.ImportFrom):
                    seen_import = True
                elif (
                    seen_import
                    and isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Name)
                    and small.value.value == "True"
                ):
                    flags.update(
                        t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                    )
    return flags


#: Exceptions a missing attribute, module or signature raises: what a fallback for an older
#: library version catches.
_VERSION_ERRORS = frozenset(
    {"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "NameError"}
    | {"Exception", "BaseException", "RuntimeError"}
)


def _fallback_for(context: PythonContext, raw: RawPythonFinding) -> str | None:
    """The API the fix would emit that the ``try`` of the ``except`` handler around the fixed
    code already uses (``try: torch.amp.GradScaler("cuda") except (AttributeError, TypeError):
    torch.cuda.amp.GradScaler()``): the handler is that API's fallback for older versions, runs
    only where it failed, and must keep the old API (None when the fix is in no such handler)."""
    ancestors = context.ancestors(raw.node)
    for index, ancestor in enumerate(ancestors):
        if isinstance(ancestor, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            return None
        if not isinstance(ancestor, cst.ExceptHandler | cst.ExceptStarHandler):
            continue
        try_node = next(
            (node for node in ancestors[index + 1 :] if isinstance(node, cst.Try | cst.TryStar)),
            None,
        )
        kinds = handler_types(ancestor) if isinstance(ancestor, cst.ExceptHandler) else None
        names = None if kinds is None else {context.code(k).rsplit(".", 1)[-1] for k in kinds}
        if try_node is None or (names is not None and not names & _VERSION_ERRORS):
            return None
        body = context.code(try_node.body)
        return next(
            (name for name in _emitted_names(context, raw) if _uses(body, name)),
            None,
        )
    return None


def _emitted_names(context: PythonContext, raw: RawPythonFinding) -> list[str]:
    """The dotted names (and imported names) a fix writes that the code it replaces lacks,
    longest first."""
    from libcst.helpers import get_full_name_for_node

    replacement = raw.replacement() if callable(raw.replacement) else raw.replacement
    if replacement is None:
        return []
    before = context.code(raw.node)
    found: set[str] = set()
    for module, name in raw.imports:
        found.update(part for part in (name, module if module.count(".") else None) if part)

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            full = get_full_name_for_node(node)
            if full and full.count(".") >= 1:
                found.add(full)

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    replacement.visit(_Names())
    new = [
        name
        for name in found
        if len(name) > 2 and name not in _BUILTIN_NAMES and not _uses(before, name)
    ]
    return sorted(new, key=lambda name: (-len(name), name))


#: Names every version has (``None``, ``isinstance``): never the new API of a fallback.
_BUILTIN_NAMES = frozenset(dir(builtins))


def _uses(code: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", code) is not None


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    kinds = handler_types(handler)
    if kinds is None:
        return True
    return any(
        isinstance(name, cst.Name)
        and name.value in {"ImportError", "ModuleNotFoundError", "Exception"}
        for name in kinds
    )


def _flag_over(context: PythonContext, node: cst.CSTNode, flags: set[str]) -> str | None:
    """The availability flag whose truth an enclosing ``if``/conditional expression requires
    for ``node`` to run (``if HAS_X:``, ``if HAS_X and ...:``), or None."""
    if not flags:
        return None
    child = node
    for ancestor in context.ancestors(node):
        if isinstance(ancestor, cst.If | cst.IfExp) and child is ancestor.body:
            test = ancestor.test
            required = [test]
            while required:
                current = required.pop()
                if isinstance(current, cst.BooleanOperation) and isinstance(
                    current.operator, cst.And
                ):
                    required.extend((current.left, current.right))
                elif isinstance(current, cst.Name) and current.value in flags:
                    return current.value
        child = ancestor
    return None


def _new_api(context: PythonContext, raw: RawPythonFinding) -> str:
    """The API a version-bound fix calls, to name in why it is withheld: the callee of the
    call (or decorator) the fix writes, where it is new (``torch.amp.GradScaler``, or
    ``torch.nn.attention.sdpa_kernel`` through the import the fix adds); "" otherwise (a
    keyword or a dispatch needing the version names no API)."""
    packages = {package.replace("-", "_") for package in raw.requires}
    replacement = raw.replacement() if callable(raw.replacement) else raw.replacement
    callee: cst.CSTNode | None = replacement
    if isinstance(callee, cst.Decorator):
        callee = callee.decorator
    if isinstance(callee, cst.Call):
        callee = callee.func
    name = _plain_dotted(callee) if isinstance(callee, cst.BaseExpression) else None
    if name is None or _uses(context.code(raw.node), name):
        return ""
    head, _, rest = name.partition(".")
    for module, imported in raw.imports:
        if imported == head and module.split(".")[0] in packages:
            return ".".join(part for part in (module, head, rest) if part)
    return name if head in packages else ""


def _plain_dotted(node: cst.BaseExpression) -> str | None:
    """``torch.amp.GradScaler`` for an attribute chain of plain names (None through a call)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        value = _plain_dotted(node.value)
        return None if value is None else f"{value}.{node.attr.value}"
    return None


def _imports_new_api(raw: RawPythonFinding) -> bool:
    """Whether the fix adds an import from a package whose version it requires (``from
    torch.nn.attention import sdpa_kernel``; a bare ``import torch`` exists at every version)."""
    packages = {package.replace("-", "_") for package in raw.requires}
    return any(
        module.split(".")[0] in packages and (module.count(".") > 0 or name is not None)
        for module, name in raw.imports
    )


def _couple(reports: Sequence[RawPythonFinding]) -> None:
    """Withhold every fix of a ``together`` group of which one fix was withheld: making an
    import optional is right only when every call of it dispatches."""
    offered: dict[str, int] = {}
    for raw in _fixable(reports):
        if raw.together:
            offered[raw.together] = offered.get(raw.together, 0) + 1
    for raw in list(_fixable(reports)):
        if raw.together and offered[raw.together] < raw.together_size:
            _withhold(
                raw,
                "another call of the same import cannot be rewritten here, and the import can "
                "become optional only when every call dispatches",
            )


def police_text(context: TextContext) -> None:
    """Withhold the fixes of a text file (or CI job) that exists for NVIDIA or that the
    project's declared versions rule out."""
    facts = context.inputs.facts or ProjectFacts()
    whole_file = nvidia_specific_path(context.path, context.kind)
    swap = context.inputs.vendor_swap
    generator = generated_by(context.text)
    for raw in _fixable(context.reports):
        if generator is not None:
            _withhold(
                raw, f"this file is generated ({generator}); change its source and regenerate it"
            )
        elif raw.rule.fix.replaces_vendor and not swap:
            _withhold(raw, _SWAP_REASON)
        elif whole_file and not swap:
            _withhold(raw, "this file is for NVIDIA; leave it and add a ROCm variant beside it")
        elif context.kind == "ci-yaml" and not swap and _ci_job_is_nvidia(context.text, raw.start):
            _withhold(raw, "this CI job is for NVIDIA; add a ROCm job beside it")
        elif context.kind == "ci-yaml" and not swap and _ci_step_is_nvidia(context.text, raw.start):
            _withhold(raw, "this CI step runs only for NVIDIA; add a ROCm step beside it")
        elif raw.requires and (reason := facts.unmet(raw.requires)):
            _withhold(raw, reason)


#: The header a lock or export tool writes at the top of a generated requirements file.
_GENERATED = re.compile(
    r"^#.*\b(?:auto-?generated|generated)\b.*\b(pip-compile|uv|poetry|pdm|pipenv|pip-tools|rye|hatch)\b",
    re.IGNORECASE | re.MULTILINE,
)
_GENERATOR_COMMAND = re.compile(r"^#\s+((?:uv|pip-compile|poetry|pdm|rye)\b[^\n]*)$", re.MULTILINE)


def generated_by(text: str) -> str | None:
    """The tool (and its command, when the header names it) that generated this file, from
    the comment header its first lines carry (``# This file was autogenerated by uv via the
    following command:``); None for a file people write. A generated file is never edited: the
    next export overwrites the edit, and a sync of the locked set installs exactly what it lists."""
    head = "\n".join(text.splitlines()[:12])
    match = _GENERATED.search(head)
    if match is None:
        return None
    command = _GENERATOR_COMMAND.search(head)
    if command is not None:
        return f"by `{command.group(1).strip()[:200]}`"
    return f"by {match.group(1)}"


def _fixable(reports: Sequence[_Raw]) -> Iterator[_Raw]:
    return (raw for raw in reports if raw.replacement is not None)


def check_line_length(
    old: str, new: str, limit: int | None = None, facts: ProjectFacts | None = None
) -> None:
    """Raise FixError when the rewrite adds a line longer than the project's line length (``limit``,
    the one its formatter is run with, else black/ruff ``line-length`` of ``facts``): the
    project's formatter check would fail on it."""
    from migrator.engine.fixer import FixError

    limit = limit or (facts or ProjectFacts()).line_length
    if not limit:
        return
    before = set(old.splitlines())
    for number, line in enumerate(new.splitlines(), start=1):
        if len(line) > limit and line not in before:
            raise FixError(
                f"line {number} of the rewrite would be {len(line)} characters, over the "
                f"project's line length {limit}; file left unchanged"
            )
