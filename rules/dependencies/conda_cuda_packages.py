"""ROC814: CUDA packages and the ``nvidia`` channel in conda environment files."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._dependency_files import conda_file
from ._table import _table

#: Conda names of PyTorch: installed by conda, torch is a CUDA or CPU build (conda has no
#: ROCm build of it in the facts).
_TORCH = frozenset({"pytorch", "torch", "pytorch-gpu", "torchvision", "torchaudio"})
#: What to do instead, for an environment that installs torch.
_ROCM_TORCH = (
    "on ROCm install torch from the ROCm wheel index in the `pip:` section (`--index-url "
    "https://download.pytorch.org/whl/rocmX.Y`) or use a `rocm/pytorch` image, and drop the "
    "CUDA packages and the `nvidia` channel"
)


class CondaCudaPackages(TextRule):
    """
    ## What it does
    Flags CUDA packages in conda environment files: `pytorch-cuda`, `cudatoolkit`,
    `cuda-toolkit` and friends, and the `nvidia` channel.

    ## Why it breaks on ROCm
    `pytorch-cuda=12.1` makes conda pick the CUDA build of PyTorch, which finds no GPU on an
    AMD machine; the CUDA toolkit packages are unused there. ROCm builds of PyTorch are
    installed with pip from `download.pytorch.org/whl/rocmX.Y` (conda-specific ROCm packaging
    is not covered by the facts).

    ## Example
    ```python
    # environment.yml
    channels: [pytorch, nvidia]
    dependencies:
      - pytorch=2.3.1
      - pytorch-cuda=12.1
    ```

    ## Manual migration
    Drop the CUDA packages and the `nvidia` channel, and install torch in the `pip:` section
    from the ROCm wheel index (`--extra-index-url https://download.pytorch.org/whl/rocm6.0`).

    ## References
    - rocm-facts.md §9 (index URL row); conda packaging of ROCm builds is not covered
    """

    code = "ROC814"
    name = "conda-cuda-packages"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="project", effort_hours=0.5)
    message = "conda CUDA package: selects CUDA builds that find no GPU on ROCm"
    fact = "§9 index-url row (CUDA builds); conda specifics unverified; [P17]"
    parsing = Parsing(triggers=("cuda", "nvidia"), file_kinds=frozenset({"conda"}))
    valid = [
        Valid("name: x\ndependencies:\n  - python=3.11\n  - pip\n", path="environment.yml"),
        Valid(
            "name: x\n# pytorch-cuda=12.1 removed\ndependencies:\n  - numpy\n",
            path="environment.yml",
        ),
    ]
    invalid = [
        Invalid(
            "name: x\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - pytorch=2.3.1\n"
            "  - pytorch-cuda=12.1\n",
            path="environment.yml",
            count=1,
            line=4,
        ),
        Invalid("name: x\ndependencies:\n  - cudatoolkit=11.8\n", path="environment.yml"),
        Invalid(  # torch from conda beside the CUDA toolkit: a CUDA (or CPU) build of torch
            "name: x\nchannels:\n  - pytorch\ndependencies:\n  - pytorch=1.13\n"
            "  - cudatoolkit=11.7\n",
            path="environment.yml",
            count=1,
            line=6,
        ),
    ]

    def check(self) -> None:
        table = _table("conda")
        text = self.ctx.text
        reqs, entries = conda_file(text)
        sites: list[tuple[int, int, str]] = []
        for entry in entries:
            if entry.section == "channels" and entry.value.strip() in table["channels"]:
                sites.append((entry.start, entry.end, f"channel `{entry.value.strip()}`"))
        for req in reqs:
            if req.source == "conda" and req.name in table["packages"]:
                start, end = req.span()
                sites.append((start, end, f"`{req.parsed.raw_name}`"))
        if not sites:
            return
        torch = any(req.source == "conda" and req.name in _TORCH for req in reqs)
        named = ", ".join(what for _, _, what in sites[:3])
        # one problem: what the environment yields, said at each of its CUDA lines
        message = (
            f"this environment installs a CUDA build of torch ({named}), or a CPU build where"
            f" the solver finds no CUDA driver: neither uses an AMD GPU; {_ROCM_TORCH}"
            if torch
            else f"this environment installs CUDA packages ({named}) that nothing on ROCm"
            " uses; drop them, and install torch from the ROCm wheel index"
        )
        for start, end, _ in sites:
            self.report((start, end), message=message)
