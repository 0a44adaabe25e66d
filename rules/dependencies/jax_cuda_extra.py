"""ROC805: JAX's CUDA extras and CUDA plugin wheels."""

from __future__ import annotations

import re

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _cases, _table


class JaxCudaExtra(RequirementRule):
    """
    ## What it does
    Flags JAX's CUDA extras (`jax[cuda12]`, `jax[cuda12_pip]`, `jax[cuda12-local]`) and CUDA
    plugin wheels (`jax-cuda12-plugin`, `jax-cuda12-pjrt`).

    ## Why it breaks on ROCm
    The extras install JAX's CUDA plugin; on an AMD machine JAX finds no GPU backend and runs
    on the CPU. The ROCm plugin is installed with `jax[rocm7-local]` (= `jax-rocm7-plugin` +
    `jax-rocm7-pjrt`), which uses the ROCm installed on the machine.

    ## Example
    ```python
    # requirements.txt
    jax[cuda12]>=0.4.30
    ```

    ## Fix
    ```python
    # requirements.txt
    jax[rocm7-local]>=0.4.30
    ```

    ## Fix safety
    Unsafe: `rocm7-local` needs a local ROCm 7 installation, and the JAX versions with ROCm 7
    plugins may not include the pinned one.

    ## References
    - rocm-facts.md §9 (`jax[cuda12]` row)
    """

    code = "ROC805"
    fix = Fixing(
        replaces_vendor=True,
        title="Use the JAX ROCm plugin (`jax[rocm7-local]`)",
        applicability=Applicability.UNSAFE,
    )
    name = "jax-cuda-extra"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", effort_hours=0.5)
    message = "JAX CUDA plugin: on ROCm JAX finds no GPU and runs on the CPU"
    fact = "§9 jax row; [K5]"
    parsing = Parsing(triggers=_cases("jax"))
    valid = [
        Valid("jax[rocm7-local]\n", path="requirements.txt"),
        Valid("jax>=0.4\njaxlib\n", path="requirements.txt"),
        Valid("jax[tpu]\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "jax[cuda12]>=0.4.30\n",
            path="requirements.txt",
            fixed="jax[rocm7-local]>=0.4.30\n",
        ),
        Invalid(
            "jax[cuda12_pip, tests]==0.4.28\n",
            path="requirements.txt",
            fixed="jax[rocm7-local,tests]==0.4.28\n",
        ),
        Invalid(
            "jax-cuda12-plugin\njax-cuda12-pjrt\n",
            path="requirements.txt",
            fixed="jax-rocm7-plugin\njax-rocm7-pjrt\n",
            count=2,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("jax")
        if req.name in table["plugins"]:
            target = table["plugins"][req.name]
            return Verdict(
                f"`{req.parsed.raw_name}` is JAX's CUDA plugin; on ROCm use `{target}`",
                Change(name=target),
            )
        if req.name != "jax":
            return None
        cuda = [extra for extra in req.parsed.extras if re.match(table["extra_pattern"], extra)]
        if not cuda:
            return None
        extras: list[str] = []
        for extra in req.parsed.extras:
            new = table["extra_to"] if extra in cuda else extra
            if new not in extras:
                extras.append(new)
        return Verdict(
            f"`jax[{cuda[0]}]` installs JAX's CUDA plugin; on ROCm use `jax[{table['extra_to']}]`",
            Change(extras=tuple(extras)),
        )
