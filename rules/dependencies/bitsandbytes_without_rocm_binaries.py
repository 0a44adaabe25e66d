"""ROC810: ``bitsandbytes`` specifiers that only admit releases without ROCm binaries."""

from __future__ import annotations

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import spec_admits

from .._problems import BITSANDBYTES_BINARIES
from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class BitsandbytesWithoutRocm(RequirementRule):
    """
    ## What it does
    Flags `bitsandbytes` version specifiers that only admit releases older than 0.49.0.

    ## Why it breaks on ROCm
    bitsandbytes wheels on PyPI carry ROCm binaries from 0.49.0 (December 2025, preview; CDNA
    lacks 4-bit blocksize 64) and support ROCm officially from 0.50.0 (LLM.int8, QLoRA 4-bit,
    8-bit optimizers on CDNA and RDNA). Older releases have CUDA binaries only: on ROCm the
    8-bit/4-bit layers and optimizers fail to load their native library.

    ## Example
    ```python
    # requirements.txt
    bitsandbytes==0.41.1
    ```

    ## Fix
    None automatic: every flagged specifier caps bitsandbytes below 0.49 (an exact pin, a `<`
    bound, a caret range), and the project chose that cap. Raise it by hand to a release with ROCm
    binaries (0.49 preview, 0.50 official), after checking the API and default changes between
    the two releases; a tool must not turn a pin into an open range.

    ## Fix safety
    No fix is offered (a pin is never widened silently). Unpinned or open-ended specifiers are
    not flagged.

    ## References
    - rocm-facts.md §5 (bitsandbytes row), §10 item 7
    """

    code = "ROC810"
    name = "bitsandbytes-without-rocm-binaries"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(
        consequence="crash-path",
        aggregate="project",
        problem=BITSANDBYTES_BINARIES,
        targets=("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200"),
        effort_hours=0.5,
    )
    message = "bitsandbytes before 0.49 has no ROCm binaries"
    fix = Fixing(title=None, applicability=Applicability.NONE)
    fact = "§5 bitsandbytes row, §10 item 7; [B1]"
    parsing = Parsing(triggers=_cases("bitsandbytes", "BitsAndBytes"))
    valid = [
        Valid("bitsandbytes\n", path="requirements.txt"),
        Valid("bitsandbytes>=0.39.0\n", path="requirements.txt"),
        Valid("bitsandbytes>=0.45.2,<0.50\n", path="requirements.txt"),
        Valid("bitsandbytes>=0.42,<0.43; sys_platform=='darwin'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "bitsandbytes==0.41.1\n",
            path="requirements.txt",
            line=1,
            column=1,
        ),
        Invalid(
            '[project]\nname = "x"\n\n[project.optional-dependencies]\n'
            'quant = ["bitsandbytes==0.41.1"]\n',
            path="pyproject.toml",
            line=5,
            column=11,
        ),
        Invalid(
            "bitsandbytes>=0.40,<0.44 ; platform_machine == 'x86_64'\n",
            path="requirements.txt",
        ),
        Invalid(
            '[tool.poetry.dependencies]\nbitsandbytes = "^0.41.1"\n',
            path="pyproject.toml",
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("bitsandbytes")
        if req.name not in table["names"] or not req.spec:
            return None
        if any(spec_admits(req.spec, probe) is not False for probe in table["probes"]):
            return None
        return Verdict(
            f"`bitsandbytes{req.parsed.spec.strip()}` has no ROCm binaries (first in "
            f"{table['first_rocm']}, official in {table['official']}); raise the pin by hand "
            "(a tool must not widen the project's pin)"
        )
