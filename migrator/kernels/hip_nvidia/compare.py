"""Compares what an op of the CUDA original and of its hipified translation returned (and
wrote into its tensor arguments), element by element with a tolerance per dtype, naming the
first element that differs. Imports torch only inside the functions (the runner has it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: (rtol, atol) per floating dtype: both builds run the same arithmetic on the same GPU, so
#: differences come from instruction selection alone (fused multiply-add, fast math).
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-12),
}


def tolerance(
    dtype: str, rtol: float | None = None, atol: float | None = None
) -> tuple[float, float]:
    """The (rtol, atol) for ``dtype`` (``float32``…); integers and booleans compare exactly."""
    base = TOLERANCES.get(dtype, (0.0, 0.0))
    return (base[0] if rtol is None else rtol, base[1] if atol is None else atol)


@dataclass(slots=True)
class Difference:
    """One output of one op compared: where and by how much it differs, if it does."""

    name: str  # "return", "return[1]", "arg 2 (written)"
    dtype: str = ""
    shape: list[int] = field(default_factory=list)
    equal: bool = True
    rtol: float = 0.0
    atol: float = 0.0
    max_abs: float = 0.0
    mismatched: int = 0
    first_index: list[int] | None = None
    original: str = ""
    translated: str = ""
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def compare_tensors(
    name: str, original: Any, translated: Any, rtol: float | None = None, atol: float | None = None
) -> Difference:
    """Compare two tensors: shape and dtype first, then values within the dtype's tolerance
    (NaN equals NaN at the same place)."""
    import torch

    result = Difference(name, _dtype_name(original), list(original.shape))
    if original.dtype != translated.dtype or original.shape != translated.shape:
        result.equal = False
        result.note = (
            f"original {_dtype_name(original)}{list(original.shape)} vs translated "
            f"{_dtype_name(translated)}{list(translated.shape)}"
        )
        return result
    result.rtol, result.atol = tolerance(result.dtype, rtol, atol)
    a = original.detach().cpu()
    b = translated.detach().cpu()
    if a.is_floating_point():
        close = torch.isclose(a, b, rtol=result.rtol, atol=result.atol, equal_nan=True)
        both = torch.isfinite(a) & torch.isfinite(b)
        if bool(both.any()):
            result.max_abs = float((a[both].double() - b[both].double()).abs().max())
    else:
        close = a == b
        if a.numel() and a.dtype != torch.bool:
            result.max_abs = float((a.long() - b.long()).abs().max())
    wrong = ~close
    result.mismatched = int(wrong.sum())
    if result.mismatched:
        result.equal = False
        index = [int(i) for i in wrong.nonzero()[0].tolist()]
        result.first_index = index
        result.original = repr(a[tuple(index)].item())
        result.translated = repr(b[tuple(index)].item())
    return result


def compare_values(
    name: str, original: Any, translated: Any, rtol: float | None = None, atol: float | None = None
) -> list[Difference]:
    """Compare two results of an op: tensors, tuples and lists of them, numbers, None."""
    import torch

    if isinstance(original, torch.Tensor) and isinstance(translated, torch.Tensor):
        return [compare_tensors(name, original, translated, rtol, atol)]
    if isinstance(original, (tuple, list)) and isinstance(translated, (tuple, list)):
        if len(original) != len(translated):
            return [
                Difference(
                    name,
                    equal=False,
                    note=f"{len(original)} values vs {len(translated)}",
                )
            ]
        found: list[Difference] = []
        for position, (left, right) in enumerate(zip(original, translated, strict=True)):
            found.extend(compare_values(f"{name}[{position}]", left, right, rtol, atol))
        return found
    same = original == translated
    if isinstance(original, float) and isinstance(translated, float):
        scale = tolerance("float64", rtol, atol)
        same = abs(original - translated) <= scale[1] + scale[0] * abs(translated)
    return [
        Difference(
            name,
            dtype=type(original).__name__,
            equal=bool(same),
            original=repr(original)[:80],
            translated=repr(translated)[:80],
        )
    ]


def describe(op: str, difference: Difference) -> str:
    """One line naming the op, the output and the first element that differs."""
    if difference.note:
        return f"{op}: {difference.name} differs: {difference.note}"
    where = f"[{', '.join(map(str, difference.first_index))}]" if difference.first_index else ""
    return (
        f"{op}: {difference.name}{where} original {difference.original} vs translated "
        f"{difference.translated} ({difference.mismatched} element(s) outside rtol "
        f"{difference.rtol:g}, atol {difference.atol:g}; max |diff| {difference.max_abs:.6g})"
    )
