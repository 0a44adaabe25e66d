"""What a condition (an ``if`` or ``assert`` test, a ternary, an ``and``/``or`` operand) proves
about the build it runs on: the guard labels and ``ConditionClassifier.classify``, which
``migrator.reach.guards`` applies to the conditions of a file during the engine's walk."""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from migrator.knowledge.vendor_tokens import NVIDIA_TOKENS, OTHER_DEVICE_TOKENS, ROCM_TOKENS
from migrator.syntax.astutil import string_value
from migrator.syntax.imports import dotted_name

#: Guard labels (what ``guard_of`` answers). All of them mean "never runs on a ROCm build".
NVIDIA_ONLY = "NVIDIA-only branch"
NON_LINUX = "non-Linux platform branch"
IMPORT_FALLBACK = "import with a portable fallback"
AVAILABILITY = "availability probe"
OTHER_DEVICE = "another vendor's accelerator branch"
#: Not a guard (the code runs on ROCm), answered by ``only_on_rocm``.
ROCM_ONLY = "ROCm-only branch"
_ROCM_STRINGS = frozenset({"hip", "rocm", "amd"})
_NON_LINUX_STRINGS = frozenset({"win32", "cygwin", "darwin", "windows", "nt", "macos", "mac"})
_NON_LINUX_TOKENS = frozenset({"windows", "win32", "macos", "darwin", "osx", "mac"})
_PLATFORM_NAMES = frozenset(
    {"sys.platform", "os.name", "platform.system", "platform.platform", "platform.uname"}
)
#: torch's CUDA toolkit location: set only where nvcc is found (rocm-facts §6, [P9]).
_CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
_PROBE_CALL = re.compile(r"^_*(is|has)_(\w+)_(available|installed)$")
#: Words of ``X`` in ``is_X_available()`` that make it a torch or hardware capability check
#: (true on ROCm builds too, or a decision a rule must see), not a package probe.
_PORTABLE_PROBES = frozenset(
    {"torch", "cuda", "gpu", "accelerate", "accelerator", "bf16", "fp16", "tf32", "fp8", "sdpa"}
)
#: Words of ``X`` in ``is_torch_X_available()`` naming another vendor's accelerator.
_OTHER_DEVICES = OTHER_DEVICE_TOKENS
#: Words that make a name about CUDA devices too (``is_xpu_or_cuda``, ``xpu_or_gpu``).
_ALSO_CUDA = frozenset({"cuda", "gpu", "or", "accelerator", "any"})
#: NVIDIA data-center and workstation GPU model names as projects spell them in settings
#: (``h100_80gb``, ``a100-40g``, ``nvidia-l40s``, ``t4``).
_NVIDIA_GPU_NAME = re.compile(
    r"^(nvidia[ _-]?)?(a100|a10g?|a800|h100|h200|h800|b100|b200|gb200|v100|p100|l4|l40s?|t4)"
    r"(?![a-z])"
)
#: Import names of optional packages whose CUDA wheels a ROCm install lacks by default (their
#: ROCm builds are separate): a name that holds one of them (``_XFormersBlockMask``,
#: ``flash_attn_func``) is what the file's own
#: import probe found, so testing it against None is an availability probe like
#: ``is_xformers_available()``. (A flag the probe sets, ``HAS_FLASH_ATTN``, is one too:
#: ``migrator.syntax.flags``.)
_OPTIONAL_GPU_PACKAGES = ("xformers", "flashattn", "apex", "transformerengine")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: What a test being true (or false) proves about the build: None (nothing), or a label.
Holds = str | None


def tokens(name: str) -> list[str]:
    """Lower-case words of an identifier: ``isROCmBuild`` -> ``["is", "ro", "cm", "build"]``."""
    parts: list[str] = []
    for chunk in name.split("_"):
        parts.extend(match.group(0).lower() for match in _CAMEL.finditer(chunk))
    return parts


def identifier(node: cst.CSTNode) -> str | None:
    """The last identifier of a Name/Attribute/Call chain (``a.b.is_hip()`` -> ``is_hip``)."""
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def _none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


class ConditionClassifier:
    """Classifies conditions, resolving names through the file's imports (``resolve``)."""

    def __init__(
        self,
        resolve: Callable[[cst.CSTNode], str | None],
        flag: Callable[[cst.CSTNode], str | None] | None = None,
    ) -> None:
        self._resolve = resolve
        #: the package an availability flag probes (``ImportTable.flag_of``), None for others
        self._flag = flag
        #: Names a test of this file compared with "hip"/"rocm" so far (``DEVICE_TYPE == "hip"``):
        #: they hold the vendor, so comparing them with "cuda" is an NVIDIA-only test.
        self._vendor_names: set[str] = set()

    def classify(self, test: cst.BaseExpression) -> tuple[Holds, Holds]:
        """(what holds when ``test`` is true, what holds when it is false)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            when_true, when_false = self.classify(test.expression)
            return when_false, when_true
        if isinstance(test, cst.BooleanOperation):
            left = self.classify(test.left)
            right = self.classify(test.right)
            if isinstance(test.operator, cst.And):
                return left[0] or right[0], _either(left[1], right[1])
            return _either(left[0], right[0]), left[1] or right[1]
        if isinstance(test, cst.Call) and identifier(test) == "bool" and len(test.args) == 1:
            return self.classify(test.args[0].value)
        return self._atom(test)

    def _qualified(self, node: cst.BaseExpression) -> str | None:
        """The dotted name of ``node``; ``getattr(torch.version, "hip", None)`` reads as
        ``torch.version.hip`` (the spelling that also works on torch builds without it)."""
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._resolve(node)
        if isinstance(node, cst.Call) and identifier(node) == "getattr" and len(node.args) >= 2:
            attribute = string_value(node.args[1].value)
            base = self._qualified(node.args[0].value)
            return f"{base}.{attribute}" if base and attribute else None
        return None

    def _atom(self, node: cst.BaseExpression) -> tuple[Holds, Holds]:
        qualified = self._qualified(node)
        if qualified == "torch.version.cuda":
            return NVIDIA_ONLY, None
        if qualified == "torch.version.hip":
            return ROCM_ONLY, NVIDIA_ONLY
        if qualified == _CUDA_HOME:
            # found only where the CUDA toolkit (nvcc) is installed, which a ROCm build lacks
            return NVIDIA_ONLY, None
        if isinstance(node, cst.Comparison):
            return self._comparison(node)
        if self._flag is not None and isinstance(node, (cst.Name, cst.Attribute)):
            if self._flag(node):
                # ``if XFORMERS:`` after ``try: import xformers; XFORMERS = True except
                # ImportError: XFORMERS = False`` (or its copy in another module, an attribute)
                return AVAILABILITY, None
        if isinstance(node, cst.Call):
            probe = self._probe(node)
            if probe is not None:
                return probe
        name = identifier(node)
        if name is None:
            return None, None
        parts = set(tokens(name))
        if parts & ROCM_TOKENS:
            return ROCM_ONLY, NVIDIA_ONLY
        if parts & NVIDIA_TOKENS:
            return NVIDIA_ONLY, None
        if parts & _OTHER_DEVICES and not parts & _ALSO_CUDA:
            # ``if xpu_ok:``, ``if use_npu:``: another vendor's accelerator, never a ROCm GPU
            # (not ``_is_xpu_or_cuda_capability_atleast_8_9()``, true on CUDA devices too)
            return OTHER_DEVICE, None
        if parts & _NON_LINUX_TOKENS and ("is" in parts or name.isupper() or "on" in parts):
            return NON_LINUX, None
        return None, None

    def _holds_optional_package(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is what an import of an optional CUDA-build package bound: a name
        imported from it (``flash_attn_func``, resolved through the file's imports), or a
        module attribute named for it (``packing._XFormersBlockMask``); not a local value that
        only mentions it (``flash_attn_padding_info``, an argument)."""
        qualified = self._resolve(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        root = (qualified or "").split(".", 1)[0].replace("_", "").lower()
        if qualified and "." in qualified and root in _OPTIONAL_GPU_PACKAGES:
            return True
        if not isinstance(node, cst.Attribute):
            return False
        squeezed = node.attr.value.replace("_", "").lower()
        return squeezed.startswith(_OPTIONAL_GPU_PACKAGES)

    def _probe(self, node: cst.Call) -> tuple[Holds, Holds] | None:
        qualified = self._resolve(node.func) or identifier(node) or ""
        if qualified.rsplit(".", 1)[-1] == "find_spec" or qualified == "importlib.find_loader":
            return AVAILABILITY, None
        parts = qualified.split(".")
        if len(parts) == 3 and parts[0] == "torch" and parts[1] in _OTHER_DEVICES:
            # ``torch.xpu.is_available()``: false on every ROCm build
            return (OTHER_DEVICE, None) if parts[2] == "is_available" else None
        match = _PROBE_CALL.match(qualified.rsplit(".", 1)[-1])
        words = set(match.group(2).lower().split("_")) if match else set()
        if words & _OTHER_DEVICES:
            return OTHER_DEVICE, None
        if match and not words & _PORTABLE_PROBES:
            return AVAILABILITY, None
        return None

    def _comparison(self, node: cst.Comparison) -> tuple[Holds, Holds]:
        if len(node.comparisons) != 1:
            return None, None
        left = node.left
        target = node.comparisons[0]
        operator = target.operator
        if _none(target.comparator):
            inner = self._atom(left)
            if inner == (None, None) and self._holds_optional_package(left):
                # ``if flash_attn_func is not None:`` after ``except ImportError: ... = None``
                inner = (AVAILABILITY, None)
            if inner == (None, None):
                return None, None
            if isinstance(operator, (cst.Is, cst.Equal)):
                # ``x is None``: true exactly when ``x`` is falsy (for these atoms)
                return inner[1], inner[0]
            if isinstance(operator, (cst.IsNot, cst.NotEqual)):
                return inner
            return None, None
        if isinstance(operator, (cst.In, cst.NotIn)):
            # ``"nvidia" in gpu_name``: no AMD device or vendor name contains it
            text = string_value(left)
            if text is not None and text.lower() in NVIDIA_TOKENS:
                return (NVIDIA_ONLY, None) if isinstance(operator, cst.In) else (None, NVIDIA_ONLY)
            held = self._member_of(left, target.comparator)
            return held if isinstance(operator, cst.In) else (held[1], held[0])
        for one, other in ((left, target.comparator), (target.comparator, left)):
            text = string_value(other)
            if text is None:
                continue
            lower = text.lower()
            if self._is_os(one):
                non_linux = lower in _NON_LINUX_STRINGS or lower.startswith(("win", "darwin"))
                if isinstance(operator, cst.Equal):
                    return (NON_LINUX if non_linux else None), (
                        NON_LINUX if lower == "linux" else None
                    )
                if isinstance(operator, cst.NotEqual):
                    return (NON_LINUX if lower == "linux" else None), (
                        NON_LINUX if non_linux else None
                    )
                return None, None
            if lower in _OTHER_DEVICES and isinstance(operator, cst.Equal):
                return OTHER_DEVICE, None  # ``device_type == "xpu"``
            if lower in _ROCM_STRINGS:
                self.remember_vendor_name(one)
                if isinstance(operator, cst.Equal):
                    return ROCM_ONLY, NVIDIA_ONLY
                if isinstance(operator, cst.NotEqual):
                    return NVIDIA_ONLY, ROCM_ONLY
            if _NVIDIA_GPU_NAME.match(lower) and set(tokens(identifier(one) or "")) & {
                "gpu",
                "device",
            }:
                # ``gpu_type == "h100_80gb"``: no AMD GPU carries an NVIDIA model name
                if isinstance(operator, cst.Equal):
                    return NVIDIA_ONLY, None
                if isinstance(operator, cst.NotEqual):
                    return None, NVIDIA_ONLY
            if lower in {"cuda", "nvidia"} and (_is_vendor(one) or self._holds_vendor(one)):
                if isinstance(operator, cst.Equal):
                    return NVIDIA_ONLY, None
                if isinstance(operator, cst.NotEqual):
                    return None, NVIDIA_ONLY
        return None, None

    def _member_of(
        self, left: cst.BaseExpression, collection: cst.BaseExpression
    ) -> tuple[Holds, Holds]:
        """``device_type in ("xpu", "hip")``: a vendor name tested against literal names. The
        test is false on ROCm when "hip" is not among them and the name holds the vendor."""
        if (
            not isinstance(collection, (cst.Tuple, cst.List, cst.Set))
            or string_value(left) is not None
        ):
            return None, None
        names = [string_value(element.value) for element in collection.elements]
        if not names or any(name is None for name in names):
            return None, None
        lowered = {str(name).lower() for name in names}
        if lowered & _ROCM_STRINGS:
            self.remember_vendor_name(left)
            return (ROCM_ONLY if lowered <= _ROCM_STRINGS else None), NVIDIA_ONLY
        if lowered & {"cuda", "nvidia"} and self._holds_vendor(left):
            return NVIDIA_ONLY, None
        return None, None

    def learn_vendor_arms(self, node: cst.If) -> None:
        """``if kind == "cuda": ... elif kind == "hip": ...``: a later arm that names the ROCm
        vendor makes ``kind`` a vendor name before the first arm is classified."""
        arm: cst.If | cst.Else | None = node.orelse
        while isinstance(arm, cst.If):
            test = arm.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                target = test.comparisons[0]
                text = string_value(target.comparator)
                if (
                    isinstance(target.operator, cst.Equal)
                    and text
                    and text.lower() in _ROCM_STRINGS
                ):
                    self.remember_vendor_name(test.left)
            arm = arm.orelse

    def remember_vendor_name(self, node: cst.BaseExpression) -> None:
        """Note that ``node`` (a name or attribute chain) holds the GPU vendor's name."""
        key = dotted_name(node)
        if key is not None:
            self._vendor_names.add(key)

    def _holds_vendor(self, node: cst.BaseExpression) -> bool:
        key = dotted_name(node)
        return key is not None and key in self._vendor_names

    def _is_os(self, node: cst.BaseExpression) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        qualified = self._resolve(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if qualified in _PLATFORM_NAMES:
            return True
        # ``sys.platform.lower()``, ``platform.system().lower()``
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._is_os(node.func.value)
        return False


def _either(one: Holds, other: Holds) -> Holds:
    """What holds when one of two tests holds: the same label, or, when both keep the code off
    ROCm builds for different reasons (a package probe, another vendor's device), the first."""
    if one == other:
        return one
    if one is None or other is None or ROCM_ONLY in (one, other):
        return None
    return one


def _is_vendor(node: cst.BaseExpression) -> bool:
    name = identifier(node)
    return name is not None and bool(set(tokens(name)) & {"platform", "backend", "vendor"})
