"""ROC815 (cuda-wheel-url): flags direct wheel URLs of CUDA builds in requirement files,
`pyproject.toml`, conda files, shell scripts, Dockerfiles and CI files."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid
from migrator.api.knowledge import CUDA_INDEX_RE

from .._shell import iter_lines
from ._shared import _INSTALL_KINDS

# A wheel URL whose file name carries a CUDA local version label (`+cu124`, `+cu12torch2.5...`,
# URL-encoded `%2Bcu121`), also in a later dot-separated segment of the label
# (`+20260318.cu128torch2100...`: PEP 440 local versions are segments joined by dots).
_CUDA_WHEEL = re.compile(
    r"https?://[^\s\"'<>]*/(?P<file>[^\s\"'<>/]*(?:\+|%2[Bb])(?:[A-Za-z0-9]+\.)*(?:pt\d+)?"
    r"(?P<label>cu\d{2,3})[^\s\"'<>/]*\.whl)"
)


class CudaWheelUrl(TextRule):
    """
    ## What it does
    Flags direct wheel URLs of CUDA builds in requirement files, `pyproject.toml`, conda files,
    shell scripts, Dockerfiles and CI files: a `.whl` whose file name carries a CUDA local
    version (`torch-2.4.0+cu121-...whl`, `flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-...whl`,
    `...%2Bcu124...whl`, PyG's `+pt24cu121`, a later segment of the label as in
    `+20260318.cu128torch2100`). URLs under `download.pytorch.org/whl/cuXYZ/` are left to ROC802 and
    ROC865, which report the CUDA index itself.

    ## Why it breaks on ROCm
    pip installs exactly that file, whatever GPU the machine has. A CUDA build of torch finds no
    GPU on an AMD machine and runs everything on the CPU; a CUDA build of an extension package
    (flash-attn, a quantisation kernel) fails to load its CUDA libraries at import.

    ## Example
    ```python
    # requirements.txt
    https://data.pyg.org/whl/torch-2.4.0%2Bcu121/torch_scatter-2.1.2%2Bpt24cu121-cp310-cp310-linux_x86_64.whl
    ```

    ## Manual migration
    Install the ROCm build instead (the `whl/rocmX.Y` index for torch), or build the extension
    from its ROCm source; keep the URL for NVIDIA machines behind a marker or a separate file.

    ## References
    - https://download.pytorch.org/whl/ (local version labels)
    """

    code = "ROC815"
    name = "cuda-wheel-url"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.5)
    message = (
        "direct wheel URL of a CUDA build: pip installs it on ROCm too, where it cannot use the GPU"
    )
    fact = "§9 index-url/local-version row; [P17][K1]"
    parsing = Parsing(triggers=(".whl",), file_kinds=_INSTALL_KINDS)
    valid = [
        Valid(
            "https://download.pytorch.org/whl/rocm6.1/torch-2.4.0%2Brocm6.1-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
        Valid(
            "# https://x.org/flash_attn-2.7.3+cu12torch2.5-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
        Valid("pip install ./dist/mypkg-1.0-py3-none-any.whl\n", path="setup.sh"),
        Valid(
            "https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
    ]
    invalid = [
        Invalid(
            "https://example.org/wheels/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
            line=1,
            column=1,
        ),
        Invalid(
            "RUN pip install https://github.com/Dao-AILab/flash-attention/releases/download/"
            "v2.7.3/flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl\n",
            path="Dockerfile",
            column=17,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = [\n'
            '  "kernels @ https://example.org/kernels-0.3+cu128torch2.9-cp312-linux_x86_64.whl",\n]\n',
            path="pyproject.toml",
            line=4,
        ),
        Invalid(  # the CUDA tag in a later segment of the local version label
            "flash-attn-3 @ https://example.org/flash_attn_3-3.0.0%2B20260318.cu128torch2100"
            "cxx11abitrue.8afc61-cp39-abi3-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if ".whl" not in code:
                continue
            for match in _CUDA_WHEEL.finditer(code):
                if CUDA_INDEX_RE.search(match.group()):
                    continue  # a download.pytorch.org/whl/cuXYZ URL: ROC802/ROC865 report it
                label = match.group("label")
                self.report(
                    (offset + match.start(), offset + match.end()),
                    message=(
                        f"direct wheel URL of a CUDA build (`+{label}`, {match.group('file')}): "
                        "pip installs that file on ROCm too, where a CUDA torch runs on the CPU "
                        "and a CUDA extension fails to load; install the ROCm build or build "
                        "from source"
                    ),
                )
