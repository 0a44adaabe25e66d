"""Fix policy on real project layouts: declared version floors and version branches withhold fixes
that emit newer APIs; NVIDIA-specific files and CI jobs are never edited; line length is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrator.engine.runner import fix_tree
from migrator.knowledge.supported_versions import project_facts
from migrator.knowledge.versions import ProjectFacts, Version, branch_range
from migrator.model import Applicability, Severity


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return tmp_path


def _fix(root: Path, unsafe: bool = False) -> tuple[dict[str, str], dict[str, list[str]]]:
    """New texts by file, and the messages of the findings left, by file."""
    level = Applicability.UNSAFE if unsafe else Applicability.SAFE
    # the rules checked here are hygiene (deprecations), shown only when asked for
    run = fix_tree(root, level=level, write=False, jobs=1, min_severity=Severity.HYGIENE)
    texts = {o.relative: o.new_text for o in run.outcomes if o.new_text is not None}
    left: dict[str, list[str]] = {}
    for finding in run.scan.findings:
        left.setdefault(finding.path, []).append(f"{finding.rule} {finding.message}")
    return texts, left


SCALER = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def test_grad_scaler_withheld_below_torch_2_3(tmp_path):
    root = _project(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname="x"\ndependencies=["torch>=2.2"]\n',
            "train.py": SCALER,
        },
    )
    texts, left = _fix(root)
    assert "train.py" not in texts
    assert any(
        m.endswith(
            "needs torch>=2.3 (torch.amp.GradScaler); the project supports torch>=2.2 "
            "(pyproject.toml torch>=2.2)"
        )
        for m in left["train.py"]
    )


def test_grad_scaler_fixed_from_torch_2_3(tmp_path):
    root = _project(tmp_path, {"requirements.txt": "torch>=2.3.1\n", "train.py": SCALER})
    texts, _ = _fix(root)
    assert texts["train.py"] == 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'


def test_grad_scaler_in_the_old_torch_branch_is_left(tmp_path):
    code = (
        "import torch\nfrom packaging import version\n"
        'if version.parse(torch.__version__) >= version.parse("2.3"):\n'
        '    scaler = torch.amp.GradScaler("cuda")\n'
        "else:\n"
        "    scaler = torch.cuda.amp.GradScaler()\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch>=2.0\n", "train.py": code})
    texts, left = _fix(root)
    assert "train.py" not in texts
    assert any("this code runs on torch>=2.0,<2.3" in m for m in left["train.py"])


def test_grad_scaler_in_the_new_torch_branch_is_fixed(tmp_path):
    code = (
        "import torch\nfrom transformers.utils import is_torch_version\n"
        'if is_torch_version(">=", "2.3"):\n'
        "    scaler = torch.cuda.amp.GradScaler()\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch>=2.0\n", "train.py": code})
    texts, _ = _fix(root)
    assert '    scaler = torch.amp.GradScaler("cuda")\n' in texts["train.py"]


def test_sdpa_kernel_withheld_below_torch_2_3(tmp_path):
    code = "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False):\n    pass\n"
    root = _project(tmp_path, {"requirements.txt": "torch>=2.1,<2.3\n", "attn.py": code})
    texts, left = _fix(root)
    assert "attn.py" not in texts
    assert any("ROC150" in m and "needs torch>=2.3" in m for m in left["attn.py"])


SDP_KERNEL = "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False):\n    pass\n"


def test_sdpa_kernel_fixed_from_torch_2_3(tmp_path):
    root = _project(tmp_path, {"requirements.txt": "torch>=2.3\n", "attn.py": SDP_KERNEL})
    texts, _ = _fix(root)
    assert texts["attn.py"] == (
        "import torch\n"
        "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
        "\n"
        "with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, "
        "SDPBackend.CUDNN_ATTENTION]):\n"
        "    pass\n"
    )


def test_sdpa_kernel_in_a_new_torch_branch_below_the_floor_is_left(tmp_path):
    """The call sits in a torch>=2.3 branch, but `from torch.nn.attention import sdpa_kernel`
    would be added at module level, where it fails on the torch 2.1 the project supports."""
    code = (
        "import torch\n"
        'if torch.__version__ >= "2.3":\n'
        "    ctx = torch.backends.cuda.sdp_kernel(enable_flash=False)\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch>=2.1\n", "attn.py": code})
    texts, left = _fix(root)
    assert "attn.py" not in texts
    assert left["attn.py"] == [
        "ROC150 `torch.backends.cuda.sdp_kernel` is deprecated: use "
        "`torch.nn.attention.sdpa_kernel`; no automatic fix: "
        "the import it adds runs outside the version branch: needs torch>=2.3 "
        "(torch.nn.attention.sdpa_kernel); the project supports torch>=2.1 "
        "(requirements.txt torch>=2.1)"
    ]


def test_enable_gqa_withheld_on_torch_2_4(tmp_path):
    _check_enable_gqa(tmp_path)


def test_flash_attn_call_dispatches_and_keeps_the_nvidia_call(tmp_path):
    """The flash-attn call stays where flash_attn imports; the import becomes optional."""
    code = "from flash_attn import flash_attn_func\ndef f(q, k, v):\n    return flash_attn_func(q, k, v)\n"
    root = _project(tmp_path, {"requirements.txt": "torch>=2.6\n", "attn.py": code})
    texts, left = _fix(root, unsafe=True)
    assert texts["attn.py"] == (
        "import torch\n\n"
        "try:\n"
        "    from flash_attn import flash_attn_func\n"
        "except ImportError:\n"
        "    flash_attn_func = None\n"
        "def f(q, k, v):\n"
        "    return (\n"
        "        flash_attn_func(q, k, v)\n"
        "        if flash_attn_func is not None\n"
        "        else torch.nn.functional.scaled_dot_product_attention(\n"
        "            q.transpose(1, 2),\n"
        "            k.transpose(1, 2),\n"
        "            v.transpose(1, 2),\n"
        "            enable_gqa=True,\n"
        "        ).transpose(1, 2).contiguous()\n"
        "    )\n"
    )
    assert "attn.py" not in left  # the hard import (ROC402) is gone with it


def test_flash_attn_import_stays_when_one_call_is_withheld(tmp_path):
    """One call below the torch floor (a version branch) withholds the whole group: the import
    must not become optional while a call still needs it."""
    code = (
        "import torch\n"
        "from flash_attn import flash_attn_func\n"
        "def f(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=True)\n"
        "def g(q, k, v):\n"
        "    if torch.__version__ < '2.5':\n"
        "        return flash_attn_func(q, k, v)\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch>=2.5\n", "attn.py": code})
    texts, left = _fix(root, unsafe=True)
    assert "attn.py" not in texts
    # the calls without their fix are uses of the unguarded import, reported there with why
    (message,) = left["attn.py"]
    assert message.startswith("ROC402 unguarded import of `flash_attn`")
    assert message.endswith(
        "(+2 more sites); no automatic fix at line 4: another call of the same import cannot be "
        "rewritten here, and the import can become optional only when every call dispatches; "
        "no automatic fix at line 7: needs torch>=2.5; this code runs only on torch<2.5, which "
        "the project does not support (torch>=2.5)"
    )


def _check_enable_gqa(tmp_path: Path) -> None:
    code = (
        "from flash_attn import flash_attn_func\n"
        "def attend(q, k, v):\n"
        "    return flash_attn_func(q, k, v)\n"
    )
    root = _project(tmp_path, {"requirements.txt": "torch==2.4.1\n", "attn.py": code})
    texts, left = _fix(root, unsafe=True)
    assert "attn.py" not in texts
    # the call without its fix is a use of the unguarded import, reported there with why
    assert left["attn.py"] == [
        "ROC402 unguarded import of `flash_attn`: PyPI flash-attn wheels are CUDA builds; build "
        "ROCm/flash-attention or fall back to torch SDPA (+1 more site); no automatic fix at "
        "line 3: needs torch>=2.5; this code runs on torch>=2.4.1,<2.4.2"
    ]
    (root / "requirements.txt").write_text("torch>=2.5\n")
    texts, _ = _fix(root, unsafe=True)
    assert "enable_gqa=True" in texts["attn.py"]


def test_nvidia_specific_files_stay_byte_identical(tmp_path):
    files = {
        "docker/docker-cuda/Dockerfile": "FROM ubuntu:22.04\nRUN nvidia-smi\n",
        "Dockerfile.B200": "FROM ubuntu:22.04\nRUN nvidia-smi\n",
        ".github/workflows/tests_cuda.yml": "jobs:\n  t:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: nvidia-smi\n",
        ".github/workflows/ci.yml": (
            "jobs:\n  gpu:\n    runs-on: [self-hosted, nvidia-a100]\n    steps:\n      - run: nvidia-smi\n"
            "  gpu2:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: nvidia-smi\n"
        ),
    }
    root = _project(tmp_path, files)
    texts, left = _fix(root, unsafe=True)
    assert set(texts) == {".github/workflows/ci.yml"}
    new_ci = texts[".github/workflows/ci.yml"].splitlines()
    assert new_ci[4] == "      - run: nvidia-smi"  # the NVIDIA runner's job is untouched
    assert "amd-smi" in new_ci[8]  # the generic job gets the guarded command
    assert any("this file is for NVIDIA" in m for m in left["Dockerfile.B200"])


#: A GPU test whose fix (``torch.version.cuda or torch.version.hip``) lengthens a line past 79.
_LONG_CALL = (
    "import torch\n\nworld_size = 2\n"
    "if torch.version.cuda and torch.cuda.device_count() > 1 and world_size > 1:\n    pass\n"
)


def test_rewrite_over_the_configured_line_length_is_dropped(tmp_path):
    """A line length the project's linter enforces, and no formatter to lay the rewrite out:
    the rewrite that would break it is dropped and reported."""
    pyproject = '[project]\nname="x"\ndependencies=["torch>=2.4"]\n[tool.ruff]\nline-length = 79\n'
    root = _project(tmp_path, {"pyproject.toml": pyproject, "train.py": _LONG_CALL})
    run = fix_tree(root, level=Applicability.SAFE, write=False, jobs=1)
    (outcome,) = [o for o in run.outcomes if o.relative == "train.py"]
    assert outcome.error is not None and "line length 79" in outcome.error


def test_a_rewrite_the_projects_formatter_lays_out_is_kept(tmp_path):
    """The same rewrite in a project formatted by black (line length 79): black lays the
    rewritten call out, so it is kept and fits."""
    pyproject = '[project]\nname="x"\ndependencies=["torch>=2.4"]\n[tool.black]\nline-length = 79\n'
    root = _project(tmp_path, {"pyproject.toml": pyproject, "train.py": _LONG_CALL})
    run = fix_tree(root, level=Applicability.SAFE, write=False, jobs=1)
    (outcome,) = [o for o in run.outcomes if o.relative == "train.py"]
    assert outcome.error is None and outcome.new_text is not None
    assert "(torch.version.cuda or torch.version.hip)" in outcome.new_text
    assert max(len(line) for line in outcome.new_text.splitlines()) <= 79


@pytest.mark.parametrize(
    ("test", "negate", "low", "high"),
    [
        ('torch.__version__ < "2.3"', False, None, "2.3"),
        ('torch.__version__ < "2.3"', True, "2.3", None),
        ('version.parse(torch.__version__) >= version.parse("2.5.0")', False, "2.5.0", None),
        ('is_torch_version(">=", "2.4")', True, None, "2.4"),
        ('is_torch_greater_or_equal("2.6")', False, "2.6", None),
    ],
)
def test_branch_range(test, negate, low, high):
    found = branch_range(test, negate)["torch"]
    assert found.low == (Version(low) if low else None)
    assert found.high == (Version(high) if high else None)


def test_project_facts_from_setup_py_and_requirements(tmp_path):
    root = _project(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(install_requires=['torch>=2.1,<2.6', 'jax[cuda12]==0.4.30'])\n",
            "requirements.txt": "transformers~=4.40.0\n",
        },
    )
    facts = project_facts(root)
    assert facts.range("torch").low == Version("2.1")
    assert facts.range("torch").high == Version("2.6")
    assert facts.range("jax").low == Version("0.4.30")
    assert facts.range("transformers").high == Version("4.41")
    assert ProjectFacts().unmet({"torch": "2.3"}) is None  # nothing declared: nothing withheld


def test_nvidia_only_ci_step_and_transformer_engine_module_are_left(tmp_path):
    workflow = (
        "jobs:\n  test:\n    runs-on: ${{ inputs.runner }}\n    steps:\n"
        "      - name: Show GPU\n        if: inputs.backend == 'cuda'\n        run: nvidia-smi\n"
        "      - name: Show any GPU\n        run: nvidia-smi\n"
    )
    bench = (
        "import os\nimport transformer_engine.pytorch as te\n"
        'os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'
    )
    root = _project(tmp_path, {".github/workflows/test.yml": workflow, "bench/fp8.py": bench})
    texts, left = _fix(root, unsafe=True)
    new = texts[".github/workflows/test.yml"].splitlines()
    assert new[6] == "        run: nvidia-smi"  # the CUDA-only step is untouched
    assert "amd-smi" in new[8]
    assert "bench/fp8.py" not in texts
    assert any("this file is for NVIDIA" in m for m in left["bench/fp8.py"])


def test_scan_shows_the_withheld_reason_instead_of_a_fix(tmp_path):
    """`scan` applies fix's policy: below the declared torch floor the finding offers no fix and
    says why; the cached result follows a change of the declared range."""
    from migrator.engine.runner import scan

    root = _project(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname="x"\ndependencies=["torch>=2.2"]\n',
            "train.py": SCALER,
        },
    )

    def scaler_finding():
        run = scan(root, min_severity=Severity.HYGIENE, jobs=1)
        (finding,) = [f for f in run.scan.findings if f.rule == "ROC520"]
        return finding

    withheld = scaler_finding()
    assert withheld.fix is None
    assert withheld.message.endswith(
        "no automatic fix: needs torch>=2.3 (torch.amp.GradScaler); the project supports "
        "torch>=2.2 (pyproject.toml torch>=2.2)"
    )
    (root / "pyproject.toml").write_text('[project]\nname="x"\ndependencies=["torch>=2.3"]\n')
    offered = scaler_finding()
    assert offered.fix is not None and offered.fix.applicability is Applicability.SAFE
    assert "no automatic fix" not in offered.message


def test_kernel_code_under_a_module_level_availability_flag_is_left(tmp_path):
    """`if HAS_FLASH_ATTN:` where the flag is set True only after `import flash_attn` succeeded
    already dispatches: the flash-attn call and the `flash_attention_2` request inside stay as
    written, and are not reported (the flag is an availability probe: the other branch runs on
    ROCm); the same call outside the branch is fixed."""
    attn = (
        "import torch.nn.functional as F\n"
        "try:\n"
        "    from flash_attn import flash_attn_func\n"
        "    HAS_FLASH_ATTN = True\n"
        "except ImportError:\n"
        "    flash_attn_func = None\n"
        "    HAS_FLASH_ATTN = False\n"
        "def attend(q, k, v):\n"
        "    if HAS_FLASH_ATTN and q.is_cuda:\n"
        "        return flash_attn_func(q, k, v)\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    model = (
        "from transformers import AutoModelForCausalLM\n"
        "HAS_FA = False\n"
        "try:\n"
        "    import flash_attn  # noqa: F401\n"
        "    HAS_FA = True\n"
        "except ImportError:\n"
        "    pass\n"
        "def load(name):\n"
        "    if HAS_FA:\n"
        '        return AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n'
        "    return AutoModelForCausalLM.from_pretrained(name)\n"
    )
    root = _project(
        tmp_path, {"requirements.txt": "torch>=2.5\n", "attn.py": attn, "model.py": model}
    )
    texts, left = _fix(root, unsafe=True)
    assert texts == {}
    assert not any(m.startswith(("ROC400", "ROC403")) for m in left.get("model.py", ()))
    assert not any(m.startswith(("ROC400", "ROC403")) for m in left.get("attn.py", ()))
    # without the flag the same call is rewritten to dispatch
    (root / "attn.py").write_text(attn.replace("HAS_FLASH_ATTN and q.is_cuda", "q.is_cuda"))
    texts, _ = _fix(root, unsafe=True)
    assert "if flash_attn_func is not None" in texts["attn.py"]


def test_torch_floor_stated_in_the_readme_counts_when_packaging_declares_none(tmp_path):
    root = _project(
        tmp_path,
        {
            "setup.py": 'from setuptools import setup\nsetup(name="x", install_requires=["torch"])\n',
            "README.md": "# x\n\nRequirements:\n- PyTorch 2.2 and above.\n",
            "attn.py": SDP_KERNEL,
        },
    )
    texts, left = _fix(root)
    assert "attn.py" not in texts
    assert left["attn.py"][0].endswith(
        "no automatic fix: needs torch>=2.3 (torch.nn.attention.sdpa_kernel); the project "
        "supports torch>=2.2 (README.md:4 torch 2.2)"
    )
    (root / "README.md").write_text("# x\n\nRequirements: PyTorch >= 2.3\n")
    texts, _ = _fix(root)
    assert "sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION" in texts["attn.py"]
    # a declared floor wins over the README
    (root / "setup.py").write_text(
        'from setuptools import setup\nsetup(name="x", install_requires=["torch>=2.1"])\n'
    )
    texts, _ = _fix(root)
    assert "attn.py" not in texts


NVML_TOOL = {
    "pyproject.toml": '[project]\nname="gputool"\ndependencies=["nvidia-ml-py>=12", "psutil"]\n',
    "gputool/select.py": (
        "import os\n\nfrom gputool.device import Device\n\n\n"
        "def main(inherit):\n"
        "    os.environ['CUDA_VISIBLE_DEVICES'] = inherit\n"
        "    return Device.from_cuda_visible_devices()\n\n\n"
        "def export(uuids):\n"
        "    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(uuids)\n"
    ),
}


def test_nvml_only_tool_gets_no_hip_copy(tmp_path):
    root = _project(tmp_path, NVML_TOOL)
    texts, left = _fix(root, unsafe=True)
    assert "gputool/select.py" not in texts
    messages = left["gputool/select.py"]
    # handed to the project's own NVML parser in the same function: not reported at all
    assert len([m for m in messages if m.startswith("ROC700")]) == 1
    run = fix_tree(root, level=Applicability.UNSAFE, write=False, jobs=1)
    assert [f.line for f in run.scan.findings if f.rule == "ROC700"] == [12]
    assert not any("more site" in m for m in messages)
    assert any(
        "no `HIP_VISIBLE_DEVICES` copy is offered: this project reads GPUs only through NVML" in m
        for m in messages
    )


def test_hip_copy_kept_when_the_project_declares_a_compute_framework(tmp_path):
    files = dict(NVML_TOOL)
    files["pyproject.toml"] = (
        '[project]\nname="gputool"\ndependencies=["nvidia-ml-py>=12", "torch>=2.3"]\n'
    )
    texts, _ = _fix(_project(tmp_path, files))
    assert texts["gputool/select.py"].count("os.environ['HIP_VISIBLE_DEVICES'] = ") == 2


def test_restore_of_a_saved_value_saves_and_restores_hip_on_its_own(tmp_path):
    code = (
        "import os\n\n\nclass Determinism:\n"
        "    def __enter__(self):\n"
        '        self.saved_cuda_launch_blocking = os.environ.get("CUDA_LAUNCH_BLOCKING", "")\n'
        '        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n\n'
        "    def __exit__(self, *exc):\n"
        '        os.environ["CUDA_LAUNCH_BLOCKING"] = self.saved_cuda_launch_blocking\n'
    )
    texts, _ = _fix(_project(tmp_path, {"requirements.txt": "torch>=2.3\n", "util.py": code}))
    assert texts["util.py"] == (
        "import os\n\n\nclass Determinism:\n"
        "    def __enter__(self):\n"
        '        self.saved_cuda_launch_blocking = os.environ.get("CUDA_LAUNCH_BLOCKING", "")\n'
        '        self.saved_hip_launch_blocking = os.environ.get("HIP_LAUNCH_BLOCKING", "")\n'
        '        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
        '        os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]\n\n'
        "    def __exit__(self, *exc):\n"
        '        os.environ["CUDA_LAUNCH_BLOCKING"] = self.saved_cuda_launch_blocking\n'
        '        os.environ["HIP_LAUNCH_BLOCKING"] = self.saved_hip_launch_blocking\n'
    )


def test_script_for_an_nvidia_gpu_model_stays_byte_identical(tmp_path):
    code = "import os\n\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
    root = _project(
        tmp_path,
        {
            "requirements.txt": "torch>=2.3\n",
            "tests/t4_smoke/run_grpo_t4.py": code,
            "tests/run_grpo.py": code,
        },
    )
    texts, left = _fix(root, unsafe=True)
    assert "tests/t4_smoke/run_grpo_t4.py" not in texts
    # never runs on ROCm: not reported either (``--show-guarded`` shows it, marked)
    assert "tests/t4_smoke/run_grpo_t4.py" not in left
    assert texts["tests/run_grpo.py"] == (
        code + "os.environ['HIP_VISIBLE_DEVICES'] = os.environ['CUDA_VISIBLE_DEVICES']\n"
    )


HANDLED_LATER = """import os


def apply_gpu_ids(value, is_rocm):
    os.environ["CUDA_VISIBLE_DEVICES"] = value
    if is_rocm:
        os.environ["HIP_VISIBLE_DEVICES"] = value


def pin(value):
    os.environ["CUDA_VISIBLE_DEVICES"] = value
"""

TEST_DATA = """import subprocess


def test_scrub_keeps_runtime_vars():
    raw = {"HF_TOKEN": "x", "CUDA_VISIBLE_DEVICES": "0"}
    assert "CUDA_VISIBLE_DEVICES" in scrub_env(raw)


def test_host_without_gpus():
    env = {}
    env["CUDA_VISIBLE_DEVICES"] = ""
    assert detect(env) == "cpu"


def test_child_sees_no_gpu():
    subprocess.run(["python", "-c", "pass"], env={"CUDA_VISIBLE_DEVICES": ""})


def test_child_sees_two_gpus():
    env = {"CUDA_VISIBLE_DEVICES": "0,1"}
    subprocess.check_output(["python", "-c", "pass"], env=env)
"""


def test_a_function_that_handles_the_hip_variable_itself_is_left(tmp_path):
    root = _project(tmp_path, {"pkg/gpus.py": HANDLED_LATER})
    texts, left = _fix(root, unsafe=True)
    new = texts["pkg/gpus.py"]
    # only `pin`, which never names a ROCm variable, gets the copy
    assert new.count('os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]') == 1
    assert new.index('HIP_VISIBLE_DEVICES"] = os.environ') > new.index("def pin")


def test_test_data_mappings_are_not_mirrored_but_a_child_env_is(tmp_path):
    root = _project(tmp_path, {"tests/test_env.py": TEST_DATA})
    texts, left = _fix(root, unsafe=True)
    new = texts["tests/test_env.py"]
    assert 'raw = {"HF_TOKEN": "x", "CUDA_VISIBLE_DEVICES": "0"}\n' in new
    assert 'env["CUDA_VISIBLE_DEVICES"] = ""\n    assert' in new
    assert 'env={"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}' in new
    assert 'env = {"CUDA_VISIBLE_DEVICES": "0,1", "HIP_VISIBLE_DEVICES": "0,1"}' in new


def test_tests_of_a_project_that_resolves_device_masks_itself_get_no_hip_copy(tmp_path):
    """A test's CUDA_VISIBLE_DEVICES is input for the project's own mask resolver (which reads
    HIP_VISIBLE_DEVICES): ``-1`` there hides only NVIDIA on a mixed host, so neither a finding
    nor a HIP copy; the same test in a project without such a resolver keeps both."""
    test = (
        "import os\nfrom unittest.mock import patch\n\n\ndef test_hidden():\n"
        "    env = {}\n    env['CUDA_VISIBLE_DEVICES'] = '-1'\n"
        "    with patch.dict(os.environ, env, clear=True):\n        assert resolve() == []\n"
    )
    shell = "run() {\n    export CUDA_VISIBLE_DEVICES=-1\n    get_index_url\n}\n"
    resolver = (
        "import os\n\n\ndef resolve():\n"
        "    return os.environ.get('HIP_VISIBLE_DEVICES') or os.environ.get('CUDA_VISIBLE_DEVICES')\n"
    )
    files = {"requirements.txt": "torch>=2.3\n", "tests/test_hw.py": test, "tests/sh/t.sh": shell}
    plain = _project(tmp_path / "plain", {**files, "pkg/hw.py": resolver.replace("HIP", "MY")})
    texts, left = _fix(plain, unsafe=True)
    assert "tests/test_hw.py" in texts and "tests/sh/t.sh" in texts
    own = _project(tmp_path / "own", {**files, "pkg/hw.py": resolver})
    texts, left = _fix(own, unsafe=True)
    assert "tests/test_hw.py" not in texts and "tests/sh/t.sh" not in texts
    assert "tests/test_hw.py" not in left and "tests/sh/t.sh" not in left  # nor reported
