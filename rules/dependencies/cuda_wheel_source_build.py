"""ROC818: dependencies whose published wheels are CUDA builds and whose AMD GPU support is a
source build of the same package."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class CudaWheelSourceBuild(RequirementRule):
    """
    ## What it does
    Flags dependencies whose published wheels are CUDA builds while their AMD GPU support exists
    only as a source build of the same package: CTranslate2 (`ctranslate2`) and the packages
    that run on it (`faster-whisper`).

    ## Why it breaks on ROCm
    The wheel installs and imports on an AMD machine but finds no CUDA device there: asking it
    for the GPU (`device="cuda"`) fails, and `device="auto"` quietly runs on the CPU. CTranslate2
    builds for AMD GPUs from its own sources (`-DWITH_HIP=ON`, upstream since 4.7.0, ROCm 7);
    no ROCm wheel is published.

    ## Example
    ```python
    # requirements.txt
    faster-whisper>=1.1
    ```

    ## Manual migration
    Build CTranslate2 ≥ 4.7 from source with `-DWITH_HIP=ON` in the ROCm image (its Python
    package then replaces the wheel), or run that stage on the CPU (`device="cpu"`) and keep the
    torch stages on the GPU.

    ## Known problems
    A project that runs CTranslate2 only on the CPU is reported too: the dependency file does
    not say which device the code asks for. A wrapper declared beside the engine it runs on
    (`faster-whisper` with `ctranslate2`) is one problem, reported at the engine.

    ## References
    - rocm-facts.md §9 (`ctranslate2` row)
    """

    code = "ROC818"
    name = "cuda-wheel-source-build"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="project", effort_hours=8.0)
    message = "the published wheels are CUDA builds; AMD GPUs need a source build of the package"
    fact = "§9 ctranslate2 row; [K8]"
    parsing = Parsing(
        triggers=_cases(
            *sorted(
                {
                    spelling
                    for name in _table("source_build")["names"]
                    for spelling in (name, name.replace("-", "_"))
                }
            ),
            "CTranslate2",
        )
    )
    valid = [
        Valid("ctranslate2-rocm-notes\n", path="requirements.txt"),
        Valid("# faster-whisper on the CPU only\ntorch\n", path="requirements.txt"),
        Valid("openai-whisper\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            '[project]\nname = "asr"\ndependencies = [\n    "ctranslate2>=4.5.0",\n'
            '    "torch~=2.8.0",\n]\n',
            path="pyproject.toml",
            line=4,
            column=6,
        ),
        Invalid("faster-whisper>=1.1\n", path="requirements.txt", line=1),
        # a wrapper beside the engine it runs on: one problem, reported at the engine
        Invalid("faster-whisper>=1.1\nctranslate2>=4.5\n", path="requirements.txt", line=2),
        Invalid(
            "from setuptools import setup\n\n"
            "setup(name='x', install_requires=['faster_whisper==1.0.3'])\n",
            path="setup.py",
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("source_build")
        if req.name not in table["names"]:
            return None
        engine = table["runs_on"].get(req.name)
        if engine is not None and any(other.name == engine for other in self._requirements()):
            return None  # the engine it runs on is declared beside it: reported there, once
        return Verdict(f"`{req.parsed.raw_name}`: {table['why'][req.name]}")
