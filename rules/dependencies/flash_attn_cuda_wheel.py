"""ROC808: ``flash-attn`` listed as a dependency."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._problems import FLASH_ATTN_BUILD
from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class FlashAttnCudaWheel(RequirementRule):
    """
    ## What it does
    Flags `flash-attn` listed as a dependency.

    ## Why it breaks on ROCm
    The prebuilt `flash-attn` wheels target CUDA, so `pip install flash-attn` gets no usable
    binary on an AMD machine. On ROCm the same `flash_attn` API comes from
    ROCm/flash-attention, built from source (CK backend for MI200/MI300, Triton backend for
    other AMD GPUs, ROCm ≥ 6.0).
    PyTorch's `scaled_dot_product_attention` covers most uses without any extra package.

    ## Example
    ```python
    # requirements.txt
    flash-attn==2.5.8
    ```

    ## Manual migration
    Build ROCm/flash-attention in the image (`GPU_ARCHS=gfx942` for MI300X), or move the model
    to `torch.nn.functional.scaled_dot_product_attention` / `attn_implementation="sdpa"` and
    drop the dependency.

    ## Known problems
    One finding per project: the declarations (requirements, `pyproject.toml`, `setup.py`, images)
    and the places where the user asks for FlashAttention explicitly (`if use_flash_attention_2:
    attn_implementation = "flash_attention_2"`, ROC403) are one problem, anchored at the first
    declaration, the others as related sites.

    ## References
    - rocm-facts.md §4a and §9 (`flash-attn` row)
    """

    code = "ROC808"
    name = "flash-attn-cuda-wheel"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path", aggregate="project", problem=FLASH_ATTN_BUILD, effort_hours=2.0
    )
    message = "`flash-attn` wheels are CUDA-only; on ROCm build ROCm/flash-attention or use SDPA"
    fact = "§4a, §9 flash-attn row; [F1]"
    parsing = Parsing(triggers=_cases("flash", "FlashAttn"))
    valid = [
        Valid("flash-attn-rocm-notes\n", path="requirements.txt"),
        Valid("# flash-attn is optional\ntorch\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("flash-attn==2.5.8\n", path="requirements.txt", fixed=None, line=1, column=1),
        Invalid(
            '[project]\nname = "x"\ndependencies = [\n    "flash_attn>=2.5",\n]\n',
            path="pyproject.toml",
            fixed=None,
            line=4,
            column=6,
        ),
        Invalid(
            "from setuptools import setup\nextra_deps = {}\nextra_deps['gpu'] = "
            "['flash-attn==2.7.4.post1']\nsetup(name='x', extras_require=extra_deps)\n",
            path="setup.py",
            fixed=None,
            line=3,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name not in _table("flash_attn")["names"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` wheels are CUDA-only; on ROCm build ROCm/flash-attention "
            "from source or move to `scaled_dot_product_attention`"
        )
