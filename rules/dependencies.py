"""ROC80x: declared Python dependencies that are CUDA-only or need a ROCm counterpart.

Every rule reads requirements/constraints files, ``pyproject.toml`` (PEP 621, dependency
groups, uv/pdm lists, Poetry tables), ``setup.cfg``, conda environment files (the ``pip:``
subsection) and the string literals that reach ``setup(install_requires=..., extras_require=...)``
in ``setup.py``. The parsing lives in ``_dependency_files`` and ``_requirement_rule``; the tables
in ``data/packages.toml`` and ``data/torch_rocm.toml``.
"""

from __future__ import annotations

import re
from typing import Any

from migrator.model import Applicability, Severity
from migrator.rule import Invalid, TextRule, Valid

from ._dependency_files import conda_file, pyproject_file, requirements_file
from ._requirement_rule import RequirementRule, Verdict
from ._requirements import Change, Req, packages
from ._torch_builds import (
    CUDA_INDEX_RE,
    LOCAL_CUDA_RE,
    companion_torch_version,
    index_url_for,
    rocm_for_specs,
    rocm_for_torch_version,
)
from ._versions import parse_version, spec_admits


def _table(section: str) -> Any:
    return packages()[section]


def _cases(*words: str) -> tuple[str, ...]:
    """Prefilter triggers for case-insensitive package names: lower, Title and UPPER spellings
    (plus any mixed spelling given explicitly)."""
    out: list[str] = []
    for word in words:
        for variant in (word, word.lower(), word.title(), word.upper()):
            if variant not in out:
                out.append(variant)
    return tuple(out)


# --------------------------------------------------------------------------------------------


class NvidiaRuntimeWheel(RequirementRule):
    """
    ## What it does
    Flags NVIDIA CUDA runtime wheels (`nvidia-cublas-cu12`, `nvidia-cudnn-cu12`,
    `nvidia-nccl-cu12`, any `nvidia-*-cuNN`) listed as dependencies.

    ## Why it breaks on ROCm
    These wheels only carry CUDA libraries. ROCm builds of PyTorch bring their own ROCm
    libraries, so on an AMD machine the CUDA wheels are gigabytes of unused downloads, and their
    pins tie the environment to one CUDA release.

    ## Example
    ```python
    # requirements.txt
    torch==2.3.1
    nvidia-cublas-cu12==12.1.3.1
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.3.1
    ```

    ## Fix safety
    Safe: CUDA builds of PyTorch declare these wheels themselves, so dropping the explicit line
    still installs them on NVIDIA machines. In `setup.py` the list element is removed; in
    `pyproject.toml` the array element (with its own line when it has one).

    ## References
    - rocm-facts.md §9 (`nvidia-*` runtime wheels row)
    """

    code = "ROC800"
    problem = "nvidia-cuda-runtime-wheels"
    name = "nvidia-cuda-runtime-wheel"
    category = "dependency"
    severity = Severity.INFO
    message = "NVIDIA CUDA runtime wheel: unused on ROCm, where PyTorch ships its ROCm libraries"
    fix_title = "Remove the CUDA runtime wheel"
    applicability = Applicability.SAFE
    fact = "§9 nvidia-* wheels row; [K2]"
    triggers = _cases("nvidia-", "nvidia_", "nvidia.")
    effort_hours = 0.1
    valid = [
        Valid("torch==2.3.1\nnvidia-ml-py>=12\n", path="requirements.txt"),
        Valid("# nvidia-cublas-cu12 is pulled in by torch\ntorch\n", path="requirements.txt"),
        Valid(
            '[project]\nname = "x"\ndescription = "needs nvidia-cudnn-cu12"\ndependencies = []\n',
            path="pyproject.toml",
        ),
    ]
    invalid = [
        Invalid(
            "torch==2.3.1\nnvidia-cublas-cu12==12.1.3.1\nnumpy\n",
            path="requirements.txt",
            fixed="torch==2.3.1\nnumpy\n",
            line=2,
            column=1,
        ),
        Invalid(
            "numpy==2.0.2\nnvidia-cudnn-cu12==9.5.1.17\n    # via torch\ntorch==2.7.0\n",
            path="requirements.txt",
            fixed="numpy==2.0.2\ntorch==2.7.0\n",
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = [\n    "torch>=2.3",\n'
            '    "nvidia-nccl-cu12>=2.20",  # NCCL\n    "numpy",\n]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = [\n    "torch>=2.3",\n    "numpy",\n]\n',
            line=5,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch", "Nvidia_Cublas_CU12"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch"]\n',
        ),
        Invalid(
            "from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    install_requires=[\n        'torch',\n        'nvidia-cublas-cu12',\n    ],\n)\n",
            path="setup.py",
            fixed="from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    install_requires=[\n        'torch',\n    ],\n)\n",
            line=5,
        ),
        Invalid(
            "from setuptools import setup\nreqs = ['nvidia-cudnn-cu12', 'torch']\n"
            "setup(install_requires=reqs)\n",
            path="setup.py",
            fixed="from setuptools import setup\nreqs = ['torch']\nsetup(install_requires=reqs)\n",
            line=2,
            column=9,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("nvidia_runtime")
        if not re.match(table["pattern"], req.name) or req.name in table["exclude"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` is an NVIDIA CUDA runtime wheel: unused on ROCm, where "
            "PyTorch ships its ROCm libraries",
            Change(remove=True),
        )


# --------------------------------------------------------------------------------------------


class TorchCudaLocalVersion(RequirementRule):
    """
    ## What it does
    Flags `torch`, `torchvision` and `torchaudio` pins with a CUDA local version label, such as
    `torch==2.3.1+cu121`.

    ## Why it breaks on ROCm
    The `+cuXYZ` label selects the CUDA build of the wheel. Installed on an AMD machine, that
    build finds no CUDA device: `torch.cuda.is_available()` is False and everything runs on
    the CPU. ROCm builds carry `+rocmX.Y` labels instead, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # requirements.txt
    torch==2.3.1+cu121
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.3.1+rocm6.0
    ```

    ## Fix safety
    Unsafe: the ROCm label comes from the PyTorch→ROCm table (2.0→5.4 … 2.14→7.14), and the
    file must also point pip at the matching `download.pytorch.org/whl/rocmX.Y` index (ROC802).
    The rewritten pin no longer installs on NVIDIA machines.

    ## References
    - rocm-facts.md §9 (index URL and local version row)
    """

    code = "ROC801"
    replaces_vendor = True
    name = "torch-cuda-local-version"
    category = "dependency"
    severity = Severity.ERROR
    message = "CUDA build of PyTorch pinned: on ROCm it finds no GPU and runs on the CPU"
    fix_title = "Pin the ROCm build (`+rocmX.Y`) of the same release"
    applicability = Applicability.UNSAFE
    fact = "§9 index-url/local-version row; [P17][K1]"
    triggers = ("+cu",)
    effort_hours = 0.25
    valid = [
        Valid("torch==2.3.1+rocm6.0\n", path="requirements.txt"),
        Valid("torch==2.3.1  # was 2.3.1+cu121\n", path="requirements.txt"),
        Valid("mylib==1.0+cu121\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n",
            path="requirements.txt",
            fixed="--extra-index-url https://download.pytorch.org/whl/cu121\n"
            "torch==2.3.1+rocm6.0\n",
            line=2,
            column=1,
        ),
        Invalid(
            "torch==2.6.0+cu124 ; sys_platform == 'linux'\ntorchvision==0.21.0+cu124\n",
            path="requirements.txt",
            fixed="torch==2.6.0+rocm6.2.4 ; sys_platform == 'linux'\n"
            "torchvision==0.21.0+rocm6.2.4\n",
            count=2,
        ),
        Invalid(
            '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "2.1.2+cu118"\n',
            path="pyproject.toml",
            fixed='[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "2.1.2+rocm5.6"\n',
        ),
        Invalid(
            "torch==1.13.1+cu117\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            'import setuptools\nsetuptools.setup(install_requires=["torch==2.4.0+cu121"])\n',
            path="setup.py",
            fixed="import setuptools\n"
            'setuptools.setup(install_requires=["torch==2.4.0+rocm6.1"])\n',
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name not in _table("torch_builds")["packages"]:
            return None
        spec = req.parsed.spec
        local = LOCAL_CUDA_RE.search(spec)
        if local is None:
            return None
        rocm = self._rocm(req)
        label = local.group()
        if rocm is None:
            return Verdict(
                f"`{req.parsed.raw_name}` pinned to the CUDA build `{label}`: on ROCm it finds no "
                "GPU; no ROCm build of this release is in the PyTorch→ROCm table, pick one by hand"
            )
        new_spec = LOCAL_CUDA_RE.sub(f"+rocm{rocm}", spec)
        return Verdict(
            f"`{req.parsed.raw_name}` pinned to the CUDA build `{label}`: on ROCm it finds no GPU "
            f"and runs on the CPU; the ROCm build is `+rocm{rocm}`",
            Change(spec=new_spec),
        )

    def _rocm(self, req: Req) -> str | None:
        version = re.sub(r"^[=~<>! ]+", "", req.spec.split(",")[0])
        if req.name != "torch":
            specs = [spec for spec in self.torch_specs() if spec]
            if specs:
                found = rocm_for_specs(specs)
                return None if found is None else found[1]
            torch_version = companion_torch_version(req.name, version)
            return None if torch_version is None else rocm_for_torch_version(torch_version)
        return rocm_for_torch_version(version)


# --------------------------------------------------------------------------------------------


def cuda_index_edits(
    matches: list[tuple[int, int, re.Match[str]]], rocm: str | None
) -> list[tuple[int, int, str, str | None]]:
    """(start, end, message, replacement) for each PyTorch CUDA index URL found."""
    out: list[tuple[int, int, str, str | None]] = []
    for start, end, match in matches:
        cuda = match.group("cuda")
        nightly = match.group("nightly")
        page = re.match(r"/[\w.-]", match.string[match.end() : match.end() + 2])
        if nightly or rocm is None or page:
            if nightly:
                why = (
                    f"the {nightly.rstrip('/')} ROCm index tracks its own ROCm release; "
                    "choose it by hand"
                )
            elif page:
                why = "point it at the `whl/rocmX.Y` index of your torch release instead"
            else:
                why = "no ROCm release is known for the torch pinned here; choose it by hand"
            out.append(
                (
                    start,
                    end,
                    f"PyTorch {cuda} wheel index: pip installs CUDA builds of torch, "
                    f"which find no GPU on ROCm; {why}",
                    None,
                )
            )
            continue
        new = index_url_for(rocm)
        out.append(
            (
                start,
                end,
                f"PyTorch {cuda} wheel index: pip installs CUDA builds of torch, which "
                f"find no GPU on ROCm; use `{new}`",
                new,
            )
        )
    return out


def url_matches(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, re.Match[str]]]:
    """CUDA index URL matches inside the given spans of ``text``."""
    out = []
    for start, end in spans:
        for match in CUDA_INDEX_RE.finditer(text, start, end):
            out.append((match.start(), match.end(), match))
    return out


class PytorchCudaWheelIndex(TextRule):
    """
    ## What it does
    Flags PyTorch CUDA wheel indexes (`https://download.pytorch.org/whl/cu121`) in
    requirements files (`--index-url`, `--extra-index-url`, `--find-links`), in
    `pyproject.toml` (uv / Poetry / PDM index tables) and in conda `pip:` sections.

    ## Why it breaks on ROCm
    The `whl/cuXYZ` index only serves CUDA builds of torch, torchvision and torchaudio. On an
    AMD machine they find no GPU and everything runs on the CPU. ROCm builds live at
    `https://download.pytorch.org/whl/rocmX.Y`, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # requirements.txt
    --extra-index-url https://download.pytorch.org/whl/cu121
    torch==2.3.1
    ```

    ## Fix
    ```python
    # requirements.txt
    --extra-index-url https://download.pytorch.org/whl/rocm6.0
    torch==2.3.1
    ```

    ## Fix safety
    Unsafe: the ROCm release comes from the torch requirement in the same file (the newest
    PyTorch minor it admits, per the table 2.0→5.4 … 2.14→7.14; the newest entry when torch is
    not declared there). Other files may pin a different torch. Nightly indexes are reported
    without a fix.

    ## References
    - rocm-facts.md §9 (index URL row)
    """

    code = "ROC802"
    replaces_vendor = True
    name = "pytorch-cuda-wheel-index"
    category = "dependency"
    severity = Severity.ERROR
    aggregate = "project"
    message = "PyTorch CUDA wheel index: pip installs CUDA builds that find no GPU on ROCm"
    fix_title = "Use the PyTorch ROCm wheel index for the pinned torch"
    applicability = Applicability.UNSAFE
    fact = "§9 index-url/local-version row; [P17][K1]"
    triggers = ("download.pytorch.org/whl/",)
    file_kinds = frozenset({"requirements", "pyproject", "conda"})
    effort_hours = 0.25
    valid = [
        Valid(
            "--extra-index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\n",
            path="requirements.txt",
        ),
        Valid(
            "# use https://download.pytorch.org/whl/cu121 on NVIDIA\ntorch\n",
            path="requirements.txt",
        ),
        Valid("--index-url https://download.pytorch.org/whl/cpu\ntorch\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n",
            path="requirements.txt",
            fixed="--extra-index-url https://download.pytorch.org/whl/rocm6.0\n"
            "torch==2.3.1+cu121\n",
            line=1,
            column=19,
        ),
        Invalid(
            "-i https://download.pytorch.org/whl/cu118\ntorch>=2.1,<2.3\n",
            path="requirements.txt",
            fixed="-i https://download.pytorch.org/whl/rocm5.7\ntorch>=2.1,<2.3\n",
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch==2.6.0"]\n\n[[tool.uv.index]]\n'
            'name = "pytorch"\nurl = "https://download.pytorch.org/whl/cu124"\nexplicit = true\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch==2.6.0"]\n\n[[tool.uv.index]]\n'
            'name = "pytorch"\nurl = "https://download.pytorch.org/whl/rocm6.2.4"\n'
            "explicit = true\n",
            line=7,
        ),
        Invalid(
            "name: env\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
            "      - --extra-index-url https://download.pytorch.org/whl/cu124\n"
            "      - torch==2.5.1\n",
            path="environment.yml",
            fixed="name: env\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
            "      - --extra-index-url https://download.pytorch.org/whl/rocm6.2\n"
            "      - torch==2.5.1\n",
        ),
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/nightly/cu126\n--pre\ntorch\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            "-f https://download.pytorch.org/whl/cu113/torch_stable.html\ntorch==1.12.1+cu113\n",
            path="requirements.txt",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        ctx = self.ctx
        text = ctx.text
        specs: list[str]
        if ctx.kind == "requirements":
            reqs, options = requirements_file(text)
            spans = [(option.start, option.end) for option in options]
        elif ctx.kind == "pyproject":
            reqs, strings = pyproject_file(text)
            spans = [(value.start, value.end) for value in strings if value.editable]
        else:
            reqs, entries = conda_file(text)
            spans = [(entry.start, entry.end) for entry in entries if entry.section == "pip"]
        specs = [req.spec for req in reqs if req.name == "torch" and req.spec]
        found = rocm_for_specs(specs)
        rocm = None if found is None else found[1]
        for start, end, message, replacement in cuda_index_edits(url_matches(text, spans), rocm):
            self.report(start, end, message=message, replacement=replacement)


# --------------------------------------------------------------------------------------------


class CupyCudaWheel(RequirementRule):
    """
    ## What it does
    Flags CuPy's CUDA wheels (`cupy-cuda11x`, `cupy-cuda12x`, older `cupy-cuda1NN`).

    ## Why it breaks on ROCm
    These wheels link against the CUDA runtime; on an AMD machine `import cupy` works but every
    array operation fails for lack of a CUDA driver. CuPy publishes ROCm wheels under other
    names: `cupy-rocm-5-0` (CuPy 13.x) and `cupy-rocm-7-0` (CuPy 14.x).

    ## Example
    ```python
    # requirements.txt
    cupy-cuda12x>=13.0,<14
    ```

    ## Fix
    ```python
    # requirements.txt
    cupy-rocm-5-0>=13.0,<14
    ```

    ## Fix safety
    Unsafe: the package is chosen by the CuPy major version the specifier admits (14 or
    unpinned → `cupy-rocm-7-0`, which needs ROCm 7; 13 → `cupy-rocm-5-0`). Older pins are
    reported without a fix. Some CuPy features (cuDNN, cuTENSOR, NCCL bindings) differ on ROCm.

    ## References
    - rocm-facts.md §9 (`cupy-cuda12x` row)
    """

    code = "ROC803"
    replaces_vendor = True
    name = "cupy-cuda-wheel"
    category = "dependency"
    severity = Severity.ERROR
    message = "CuPy CUDA wheel: its kernels need a CUDA driver and fail on ROCm"
    fix_title = "Use the CuPy ROCm wheel of the same major version"
    applicability = Applicability.UNSAFE
    fact = "§9 cupy row; [K3]"
    triggers = _cases("cupy", "CuPy")
    effort_hours = 0.5
    valid = [
        Valid("cupy-rocm-7-0\n", path="requirements.txt"),
        Valid("cupy\n", path="requirements.txt"),
        Valid("# cupy-cuda12x\nnumpy\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "cupy-cuda12x        # kernels\n",
            path="requirements.txt",
            fixed="cupy-rocm-7-0        # kernels\n",
            line=1,
            column=1,
        ),
        Invalid(
            "cupy-cuda11x>=13.0,<14\n",
            path="requirements.txt",
            fixed="cupy-rocm-5-0>=13.0,<14\n",
        ),
        Invalid("cupy-cuda12x==12.3.0\n", path="requirements.txt", fixed=None),
        Invalid(
            '[project]\nname = "x"\n[project.optional-dependencies]\ngpu = ["cupy-cuda12x>=14"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\n[project.optional-dependencies]\n'
            'gpu = ["cupy-rocm-7-0>=14"]\n',
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("cupy")
        if not re.match(table["pattern"], req.name):
            return None
        target = None
        for major in sorted(table["by_major"], key=int, reverse=True):
            probes = [f"{major}.{minor}.{patch}" for minor in range(6) for patch in range(4)]
            if any(spec_admits(req.spec, probe) is not False for probe in probes):
                target = table["by_major"][major]
                break
        if target is None:
            return Verdict(
                f"`{req.parsed.raw_name}` is a CuPy CUDA wheel; CuPy's ROCm wheels start at 13.x "
                "(`cupy-rocm-5-0`) and 14.x (`cupy-rocm-7-0`): raise the pin and switch package"
            )
        return Verdict(
            f"`{req.parsed.raw_name}` is a CuPy CUDA wheel that fails on ROCm; use `{target}` "
            f"(built for ROCm {target.split('-', 2)[2].replace('-', '.')})",
            Change(name=target),
        )


# --------------------------------------------------------------------------------------------


class OnnxruntimeGpu(RequirementRule):
    """
    ## What it does
    Flags `onnxruntime-gpu`, ONNX Runtime's CUDA build.

    ## Why it breaks on ROCm
    `onnxruntime-gpu` offers the `CUDAExecutionProvider` only. On an AMD machine the session
    silently falls back to the CPU provider. ONNX Runtime's AMD GPU build is
    `onnxruntime-migraphx` (`MIGraphXExecutionProvider`); the ROCm execution provider was
    removed (absent from ORT ≥ 1.23; `onnxruntime-rocm` stopped at 1.22.x).

    ## Example
    ```python
    # requirements.txt
    onnxruntime-gpu>=1.17
    ```

    ## Fix
    ```python
    # requirements.txt
    onnxruntime-migraphx>=1.17
    ```

    ## Fix safety
    Unsafe: the code must also ask for `"MIGraphXExecutionProvider"` instead of
    `"CUDAExecutionProvider"`, and MIGraphX builds are published for fewer ORT versions, so the
    version pin may need to change.

    ## References
    - rocm-facts.md §9 (`onnxruntime-gpu` row)
    """

    code = "ROC804"
    replaces_vendor = True
    name = "onnxruntime-gpu"
    category = "dependency"
    severity = Severity.ERROR
    message = "`onnxruntime-gpu` has only the CUDA execution provider; on ROCm it runs on the CPU"
    fix_title = "Use `onnxruntime-migraphx`"
    applicability = Applicability.UNSAFE
    fact = "§9 onnxruntime row; [K4][K3]"
    triggers = _cases("onnxruntime", "OnnxRuntime")
    effort_hours = 0.5
    valid = [
        Valid("onnxruntime-migraphx\n", path="requirements.txt"),
        Valid("onnxruntime>=1.17\n", path="requirements.txt"),
        Valid("onnxruntime-gpu; sys_platform == 'win32'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "onnxruntime-gpu     # ONNX export\n",
            path="requirements.txt",
            fixed="onnxruntime-migraphx     # ONNX export\n",
        ),
        Invalid(
            "[options]\ninstall_requires =\n    numpy\n    onnxruntime_gpu>=1.17\n",
            path="setup.cfg",
            fixed="[options]\ninstall_requires =\n    numpy\n    onnxruntime-migraphx>=1.17\n",
            line=4,
            column=5,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("onnxruntime")
        if req.name not in table["names"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` has only the CUDA execution provider and falls back to the "
            f"CPU on ROCm; use `{table['to']}` with `MIGraphXExecutionProvider`",
            Change(name=table["to"]),
        )


# --------------------------------------------------------------------------------------------


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
    replaces_vendor = True
    name = "jax-cuda-extra"
    category = "dependency"
    severity = Severity.ERROR
    message = "JAX CUDA plugin: on ROCm JAX finds no GPU and runs on the CPU"
    fix_title = "Use the JAX ROCm plugin (`jax[rocm7-local]`)"
    applicability = Applicability.UNSAFE
    fact = "§9 jax row; [K5]"
    triggers = _cases("jax")
    effort_hours = 0.5
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


# --------------------------------------------------------------------------------------------


class TensorflowCuda(RequirementRule):
    """
    ## What it does
    Flags `tensorflow[and-cuda]` and the old `tensorflow-gpu` package.

    ## Why it breaks on ROCm
    Both pull NVIDIA's CUDA libraries; on an AMD machine TensorFlow finds no GPU and runs on
    the CPU. The ROCm build is `tensorflow-rocm`, whose newest PyPI release is 2.14.0.600
    (January 2024); newer builds come from AMD's own repositories or containers.

    ## Example
    ```python
    # requirements.txt
    tensorflow[and-cuda]==2.16.1
    ```

    ## Manual migration
    Choose a TensorFlow release that AMD builds for your ROCm version (`tensorflow-rocm` on PyPI
    stops at 2.14) or use AMD's TensorFlow container, and pin that instead.

    ## References
    - rocm-facts.md §9 (`tensorflow[and-cuda]` row)
    """

    code = "ROC806"
    name = "tensorflow-cuda-build"
    category = "dependency"
    severity = Severity.ERROR
    message = "CUDA build of TensorFlow: on ROCm it finds no GPU and runs on the CPU"
    fact = "§9 tensorflow row; [K3]"
    triggers = _cases("tensorflow", "TensorFlow")
    effort_hours = 2.0
    valid = [
        Valid("tensorflow-rocm==2.14.0.600\n", path="requirements.txt"),
        Valid("tensorflow==2.16.1\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("tensorflow[and-cuda]==2.16.1\n", path="requirements.txt", fixed=None),
        Invalid("tensorflow-gpu==2.10\n", path="requirements.txt", fixed=None),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("tensorflow")
        if req.name == "tensorflow" and set(req.parsed.extras) & set(table["extras"]):
            what = "`tensorflow[and-cuda]`"
        elif req.name in table["names"]:
            what = f"`{req.parsed.raw_name}`"
        else:
            return None
        return Verdict(
            f"{what} is TensorFlow's CUDA build and runs on the CPU on ROCm; use an AMD build "
            f"(`{table['rocm']}`, PyPI releases stop at 2.14) or AMD's TensorFlow container"
        )


# --------------------------------------------------------------------------------------------


class PypiTriton(RequirementRule):
    """
    ## What it does
    Flags `triton` from PyPI listed as a dependency.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch depend on `pytorch-triton-rocm` (from
    `download.pytorch.org/whl/triton-rocm`), which provides the same `triton` module built for
    the torch release. Installing PyPI `triton` over it replaces that module with a different
    version, and `torch.compile` / Triton kernels can fail to compile or load.

    ## Example
    ```python
    # requirements.txt
    torch==2.7.0
    triton==3.3.0
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.7.0
    ```

    ## Fix safety
    Unsafe: on NVIDIA, torch still installs the `triton` it needs, but a project that pins a
    newer Triton than its torch for its own kernels loses that pin.

    ## References
    - rocm-facts.md §7 (`torch.compile` row) and §9 (`triton` row)
    """

    code = "ROC807"
    name = "pypi-triton"
    category = "dependency"
    severity = Severity.WARNING
    message = "PyPI `triton` would replace `pytorch-triton-rocm`, which ROCm torch depends on"
    fix_title = "Remove `triton`; ROCm torch brings `pytorch-triton-rocm`"
    applicability = Applicability.UNSAFE
    fact = "§7 torch.compile row, §9 triton row; [P17][R1]"
    triggers = _cases("triton")
    effort_hours = 0.25
    valid = [
        Valid("pytorch-triton-rocm\n", path="requirements.txt"),
        Valid("tritonclient[all]\n", path="requirements.txt"),
        Valid("triton-ascend==3.2.1\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "torch==2.7.0\ntriton==3.3.0\n    # via torch\n",
            path="requirements.txt",
            fixed="torch==2.7.0\n",
            line=2,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch", "triton>=3.0", "numpy"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch", "numpy"]\n',
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name not in _table("triton")["names"]:
            return None
        return Verdict(self.message, Change(remove=True))


# --------------------------------------------------------------------------------------------


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

    ## References
    - rocm-facts.md §4a and §9 (`flash-attn` row)
    """

    code = "ROC808"
    name = "flash-attn-cuda-wheel"
    category = "dependency"
    severity = Severity.WARNING
    message = "`flash-attn` wheels are CUDA-only; on ROCm build ROCm/flash-attention or use SDPA"
    fact = "§4a, §9 flash-attn row; [F1]"
    triggers = _cases("flash", "FlashAttn")
    effort_hours = 2.0
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


# --------------------------------------------------------------------------------------------


class XformersCudaWheel(RequirementRule):
    """
    ## What it does
    Flags `xformers` listed as a dependency.

    ## Why it breaks on ROCm
    PyPI `xformers` wheels are CUDA builds. ROCm wheels exist from 0.0.28 (September 2024) on
    PyTorch's `whl/rocmX.Y` indexes and are labelled experimental; older releases have no ROCm
    build at all. Its `memory_efficient_attention` maps to PyTorch SDPA for most masks.

    ## Example
    ```python
    # requirements.txt
    xformers==0.0.26
    ```

    ## Manual migration
    Install `xformers>=0.0.28` from the ROCm wheel index matching your torch, or rewrite
    `xformers.ops.memory_efficient_attention` calls to `scaled_dot_product_attention` and drop
    the dependency.

    ## References
    - rocm-facts.md §4d and §9 (`xformers` row)
    """

    code = "ROC809"
    name = "xformers-cuda-wheel"
    category = "dependency"
    severity = Severity.WARNING
    message = "PyPI `xformers` wheels are CUDA builds; ROCm wheels are experimental (≥ 0.0.28)"
    fact = "§4d, §9 xformers row; [X3]"
    triggers = _cases("xformers", "xFormers")
    effort_hours = 1.0
    valid = [
        Valid("# xformers==0.0.26\ntorch\n", path="requirements.txt"),
        Valid("xformers; sys_platform == 'darwin'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("xformers==0.0.26\n", path="requirements.txt", fixed=None),
        Invalid("xformers>=0.0.28\n", path="requirements.txt", fixed=None),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("xformers")
        if req.name not in table["names"]:
            return None
        first = table["first_rocm"]
        if req.spec and not _admits_from(req.spec, first):
            return Verdict(
                f"`{req.parsed.raw_name}{req.parsed.spec}` predates xformers' ROCm wheels "
                f"({first}); raise it and install from the PyTorch ROCm index, or use SDPA"
            )
        return Verdict(
            f"PyPI `{req.parsed.raw_name}` wheels are CUDA builds; install the experimental ROCm "
            f"wheel (≥ {first}) from the PyTorch ROCm index, or use SDPA"
        )


def _admits_from(spec: str, first: str) -> bool:
    """Whether ``spec`` admits some release at or after ``first`` (probing nearby versions)."""
    release = parse_version(first)
    if release is None:
        return True
    probes = [first]
    for bump in range(1, 40):
        probes.append(".".join(map(str, (*release[:-1], release[-1] + bump))))
    probes += ["0.1.0", "1.0.0"]
    return any(spec_admits(spec, probe) is not False for probe in probes)


# --------------------------------------------------------------------------------------------


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
    aggregate = "project"
    problem = "bitsandbytes-rocm-binaries"
    message = "bitsandbytes before 0.49 has no ROCm binaries"
    fix_title = None
    applicability = Applicability.NONE
    fact = "§5 bitsandbytes row, §10 item 7; [B1]"
    triggers = _cases("bitsandbytes", "BitsAndBytes")
    targets = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200")
    effort_hours = 0.5
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


# --------------------------------------------------------------------------------------------


class CudaOnlyPackage(RequirementRule):
    """
    ## What it does
    Flags dependencies that exist only for NVIDIA GPUs and have no ROCm build: TensorRT
    (`tensorrt`, `torch-tensorrt`), CUDA driver bindings (`pycuda`, `cuda-python`), NVIDIA
    DALI, CUDA-only kernel packages (`eetq`, `deepspeed-kernels`, `grouped-gemm`) and NVIDIA's
    Transformer Engine (`transformer-engine`; AMD's fork is built from source).

    ## Why it breaks on ROCm
    These packages need the CUDA driver and NVIDIA libraries: they fail to install or to import
    on an AMD machine, and whatever imports them stops there.

    ## Example
    ```python
    # requirements.txt
    pycuda==2024.1
    tensorrt==10.0.1
    ```

    ## Manual migration
    TensorRT → MIGraphX (`torch-migraphx`) or `torch.compile`; PyCUDA / cuda-python →
    `hip-python` (`hip-python-interop` keeps CUDA-style names); DALI → AMD rocAL / MIVisionX.
    Make the import optional where the feature is not essential.

    ## References
    - rocm-facts.md §9 (tensorrt, pycuda, nvidia-dali rows)
    """

    code = "ROC811"
    name = "cuda-only-package"
    category = "dependency"
    severity = Severity.ERROR
    message = "CUDA-only package with no ROCm build"
    fact = "§9 tensorrt/pycuda/dali/eetq/transformer-engine rows; [R1][K3][K6]"
    triggers = _cases(
        "tensorrt",
        "TensorRT",
        "pycuda",
        "PyCUDA",
        "cuda-python",
        "cuda_python",
        "dali",
        "eetq",
        "EETQ",
        "deepspeed-kernels",
        "deepspeed_kernels",
        "grouped-gemm",
        "grouped_gemm",
        "transformer-engine",
        "transformer_engine",
    )
    effort_hours = 8.0
    blocker = True
    valid = [
        Valid("torch-migraphx\n", path="requirements.txt"),
        Valid("hip-python\n", path="requirements.txt"),
        Valid("tensorrt; sys_platform == 'win32'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("pycuda==2024.1\ntensorrt==10.0.1\n", path="requirements.txt", count=2),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch-tensorrt>=2.3"]\n',
            path="pyproject.toml",
        ),
        Invalid("nvidia-dali-cuda120\n", path="requirements.txt"),
        Invalid(
            "eetq\ndeepspeed-kernels ; sys_platform == 'linux'\n", path="requirements.txt", count=2
        ),
        Invalid(
            "from setuptools import setup\n\n"
            "setup(name='x', extras_require={'moe': ['grouped-gemm==0.3.0',"
            " 'transformer-engine[pytorch]>=1.13']})\n",
            path="setup.py",
            count=2,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = packages()["no_equivalent"]
        if req.name not in table:
            return None
        return Verdict(f"`{req.parsed.raw_name}` is CUDA-only: {table[req.name]}")


# --------------------------------------------------------------------------------------------


class NvmlBindings(RequirementRule):
    """
    ## What it does
    Flags NVML bindings (`pynvml`, `nvidia-ml-py`) listed as dependencies.

    ## Why it breaks on ROCm
    NVML ships with the NVIDIA driver; on an AMD machine `nvmlInit()` raises. AMD's equivalent
    is `amdsmi` (shipped with ROCm; the PyPI `amdsmi` must match the installed ROCm), with
    different function names and units. ROCm builds of PyTorch use `amdsmi` themselves for
    `torch.cuda.utilization()` and friends.

    ## Example
    ```python
    # requirements.txt
    pynvml>=11.5
    ```

    ## Manual migration
    Port the NVML calls (§3a of the facts lists each pair) to `amdsmi`, or to `torch.cuda`
    telemetry (`mem_get_info`, `utilization`), then depend on `amdsmi` where needed.

    ## References
    - rocm-facts.md §3a and §9 (`pynvml` row)
    """

    code = "ROC812"
    name = "nvml-bindings"
    category = "dependency"
    severity = Severity.WARNING
    message = "NVML bindings: NVML needs the NVIDIA driver; on ROCm use `amdsmi`"
    fact = "§3a, §9 pynvml row; [A1]"
    triggers = _cases("nvml", "pyNVML", "nvidia-ml", "nvidia_ml")
    effort_hours = 1.0
    valid = [
        Valid("amdsmi\n", path="requirements.txt"),
        Valid("torch  # needs pynvml for telemetry\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("pynvml              # GPU memory logging\n", path="requirements.txt"),
        Invalid(
            "[options]\ninstall_requires = nvidia-ml-py >= 11.450.51, < 13.596.0a0\n",
            path="setup.cfg",
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("nvml")
        if req.name not in table["names"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` binds NVML, which needs the NVIDIA driver; port the calls "
            f"to `{table['rocm']}` (or torch.cuda telemetry)"
        )


# --------------------------------------------------------------------------------------------


class DeprecatedQuantPackage(RequirementRule):
    """
    ## What it does
    Flags AutoGPTQ (`auto-gptq`) and AutoAWQ (`autoawq`).

    ## Why it breaks on ROCm
    Both projects are deprecated. Their ROCm support (AutoGPTQ wheels from an old index,
    AutoAWQ's ROCm kernels) is frozen at old PyTorch and ROCm releases, so a current ROCm
    stack will not get working kernels from them.

    ## Example
    ```python
    # requirements.txt
    auto-gptq==0.7.1
    ```

    ## Manual migration
    GPTQ → `gptqmodel` (what transformers uses now); AWQ → llm-compressor; or AMD Quark
    (`amd-quark`) for FP8/INT8/INT4 on AMD GPUs.

    ## References
    - rocm-facts.md §5 (quantization alternatives) and §9 (`auto-gptq` row)
    """

    code = "ROC813"
    name = "deprecated-quantization-package"
    category = "dependency"
    severity = Severity.WARNING
    message = "deprecated quantization package with no maintained ROCm kernels"
    fact = "§5 quantization alternatives, §9 auto-gptq row; [Q1][Q2][Q3]"
    triggers = _cases("gptq", "awq", "AutoGPTQ", "AutoAWQ")
    effort_hours = 2.0
    valid = [
        Valid("gptqmodel>=2.0\n", path="requirements.txt"),
        Valid("llmcompressor\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("auto-gptq==0.7.1\n", path="requirements.txt"),
        Invalid("AutoAWQ>=0.2\n", path="requirements.txt"),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = packages()["deprecated_quant"]
        if req.name not in table:
            return None
        return Verdict(f"`{req.parsed.raw_name}` is {table[req.name]}")


# --------------------------------------------------------------------------------------------


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
    aggregate = "project"
    message = "conda CUDA package: selects CUDA builds that find no GPU on ROCm"
    fact = "§9 index-url row (CUDA builds); conda specifics unverified; [P17]"
    triggers = ("cuda", "nvidia")
    file_kinds = frozenset({"conda"})
    effort_hours = 0.5
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
    ]

    def check(self) -> None:
        table = _table("conda")
        text = self.ctx.text
        reqs, entries = conda_file(text)
        for entry in entries:
            if entry.section == "channels" and entry.value.strip() in table["channels"]:
                self.report(
                    entry.start,
                    entry.end,
                    message=f"conda channel `{entry.value}` serves CUDA packages; "
                    "not needed on ROCm",
                )
        for req in reqs:
            if req.source == "conda" and req.name in table["packages"]:
                start, end = req.span()
                self.report(
                    start,
                    end,
                    message=f"conda package `{req.parsed.raw_name}` is CUDA-specific"
                    + (
                        ": it selects the CUDA build of PyTorch, which finds no GPU on ROCm"
                        if req.name == "pytorch-cuda"
                        else "; unused on ROCm"
                    ),
                )
