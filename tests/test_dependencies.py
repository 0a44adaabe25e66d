"""Dependency (ROC80x) and container (ROC86x) rules: parsing helpers, validity of fixed files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from migrator.rules._dependency_files import pyproject_file, requirements_file
from migrator.rules._requirements import parse_requirement
from migrator.rules._shell import command_segments, pip_requirements
from packaging.requirements import Requirement

from migrator.engine.context import FileInputs
from migrator.engine.engine import analyze
from migrator.engine.registry import all_rules, select_rules
from migrator.files.discovery import file_kind
from migrator.files.tomlcompat import tomllib
from migrator.knowledge.markers import marker_allows_linux
from migrator.knowledge.torch_builds import rocm_for_specs
from migrator.knowledge.versions import poetry_to_pep440, spec_admits
from migrator.model import Applicability

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "llm_app"
MINE = [rule for rule in all_rules() if rule.category in {"dependency", "container"}]


def fix(text: str, path: str, variant: bool = True) -> str:
    """The unsafe-fixed text; ``variant``: as a ROCm variant of the file (vendor swaps allowed)."""
    kind = file_kind(path)
    assert kind is not None
    result = analyze(
        text,
        path,
        kind,
        select_rules(["dependency", "container"], None),
        fix=Applicability.UNSAFE,
        inputs=FileInputs(vendor_swap=variant),
    )
    assert result.fix_error is None, result.fix_error
    return text if result.new_text is None else result.new_text


def requirement_lines(text: str) -> list[str]:
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        code = line.split(" #", 1)[0].strip()
        if code and not code.startswith(("#", "-")):
            out.append(code.split(" --", 1)[0])
    return out


def assert_valid(text: str, path: str) -> None:
    """A fixed file must still be what its format requires."""
    kind = file_kind(path)
    if kind == "requirements":
        for line in requirement_lines(text):
            Requirement(line)
    elif kind == "pyproject":
        data = tomllib.loads(text)
        project = data.get("project", {})
        for requirement in project.get("dependencies", []):
            Requirement(requirement)
        for group in project.get("optional-dependencies", {}).values():
            for requirement in group:
                Requirement(requirement)
    elif kind in {"compose", "conda", "ci-yaml"}:
        yaml.safe_load(text)


# -- examples and fixtures ---------------------------------------------------------------------


EXAMPLES = [
    pytest.param(example, id=f"{rule.code}-invalid-{index}")
    for rule in MINE
    for index, example in enumerate(rule.invalid, start=1)
    if example.fixed is not None
]


@pytest.mark.parametrize("example", EXAMPLES)
def test_fixed_examples_stay_valid(example):
    assert_valid(example.fixed, example.path)


def test_fixture_requirements_fix():
    text = (FIXTURE / "requirements.txt").read_text()
    fixed = fix(text, "requirements.txt")
    assert_valid(fixed, "requirements.txt")
    assert "--extra-index-url https://download.pytorch.org/whl/rocm6.0\n" in fixed
    assert "torch==2.3.1+rocm6.0\n" in fixed
    assert "nvidia-cublas" not in fixed
    assert "bitsandbytes==0.41.1\n" in fixed  # a pin is never widened
    assert "cupy-rocm-7-0        # used by the tokenizer post-processing kernels\n" in fixed
    assert "onnxruntime-migraphx     # ONNX export of the embedding model\n" in fixed
    # untouched: comments, unrelated lines, report-only packages
    for kept in (
        "# CUDA 12.1 wheels of PyTorch (A100 / H100 nodes)\n",
        "flash-attn==2.5.8\n",
        "xformers==0.0.26\n",
        "pynvml              # GPU memory logging\n",
        "transformers>=4.40\n",
        "# serving\nfastapi\nuvicorn\n",
    ):
        assert kept in fixed
    assert fix(fixed, "requirements.txt") == fixed


def test_fixture_pyproject_keeps_the_bitsandbytes_pin():
    text = (FIXTURE / "pyproject.toml").read_text()
    assert fix(text, "pyproject.toml") == text


@pytest.mark.parametrize(
    "path", ["Dockerfile", "docker-compose.yml", "requirements.txt", "scripts/launch.sh"]
)
def test_vendor_swaps_are_never_applied_in_place(path):
    """In place, the fixture's NVIDIA images, indexes, CUDA wheels and GPU flags stay as they are."""
    text = (FIXTURE / path).read_text()
    fixed = fix(text, path, variant=False)
    for kept in ("nvidia/cuda:", "driver: nvidia", "whl/cu121", "+cu121", "cupy-cuda12x", "--gpus"):
        assert (kept in text) == (kept in fixed), kept


def test_fixture_compose_fix():
    text = (FIXTURE / "docker-compose.yml").read_text()
    fixed = fix(text, "docker-compose.yml")
    service = yaml.safe_load(fixed)["services"]["llm"]
    assert service["devices"] == ["/dev/kfd", "/dev/dri"]
    assert service["group_add"] == ["video"]
    assert "deploy" not in service
    original = yaml.safe_load(text)["services"]["llm"]
    for key in ("build", "image", "ports", "volumes", "environment", "shm_size"):
        assert service[key] == original[key]


def test_fixture_dockerfile_and_script_fix():
    dockerfile = fix((FIXTURE / "Dockerfile").read_text(), "Dockerfile")
    assert dockerfile.startswith("FROM rocm/dev-ubuntu-22.04:6.3.4-complete\n")
    script = fix((FIXTURE / "scripts" / "launch.sh").read_text(), "scripts/launch.sh")
    assert (
        "docker run --rm --device /dev/kfd --device /dev/dri --group-add video "
        "--security-opt seccomp=unconfined \\\n"
    ) in script
    assert "--gpus" not in script


def test_compose_with_several_services_and_runtime():
    text = (
        "services:\n"
        "  a:\n    image: x\n    runtime: nvidia\n    deploy:\n      resources:\n"
        "        reservations:\n          devices:\n            - capabilities: [gpu]\n"
        "  b:\n    image: y\n    gpus: all\n"
        "  c:\n    image: z\n"
    )
    fixed = fix(text, "compose.yaml")
    data = yaml.safe_load(fixed)["services"]
    for name in ("a", "b"):
        assert data[name]["devices"] == ["/dev/kfd", "/dev/dri"]
        assert data[name]["group_add"] == ["video"]
        assert not {"runtime", "deploy", "gpus"} & set(data[name])
    assert data["c"] == {"image": "z"}


def test_requirements_hashes_markers_and_continuations_preserved():
    text = (
        "torch==2.3.1+cu121 ; sys_platform == 'linux' \\\n"
        "    --hash=sha256:0123456789abcdef\n"
        "nvidia-cudnn-cu12==8.9.2.26 \\\n    --hash=sha256:abc\n"
        "numpy  # comment\n"
    )
    fixed = fix(text, "requirements.txt")
    assert fixed == (
        "torch==2.3.1+rocm6.0 ; sys_platform == 'linux' \\\n"
        "    --hash=sha256:0123456789abcdef\n"
        "numpy  # comment\n"
    )


def test_pyproject_dependency_groups_poetry_and_uv():
    text = (
        '[project]\nname = "x"\ndependencies = [\n'
        '    "torch==2.4.1",\n    "nvidia-cuda-runtime-cu12",  # runtime\n]\n\n'
        '[dependency-groups]\ndev = ["triton", {include-group = "lint"}]\nlint = ["ruff"]\n\n'
        '[tool.poetry.dependencies]\npython = "^3.10"\ncupy-cuda12x = "^13.2"\n'
        'flash-attn = {version = "2.5.8", optional = true}\n\n'
        '[[tool.uv.index]]\nname = "torch"\nurl = "https://download.pytorch.org/whl/cu124"\n'
    )
    fixed = fix(text, "pyproject.toml")
    data = tomllib.loads(fixed)
    assert data["project"]["dependencies"] == ["torch==2.4.1"]
    assert data["dependency-groups"]["dev"] == [{"include-group": "lint"}]
    assert data["tool"]["poetry"]["dependencies"]["cupy-rocm-5-0"] == "^13.2"
    assert data["tool"]["uv"]["index"][0]["url"] == "https://download.pytorch.org/whl/rocm6.1"
    assert fix(fixed, "pyproject.toml") == fixed


def test_companion_packages_without_a_torch_pin():
    text = "torch\ntorchvision==0.18.1+cu121\ntorchaudio==2.3.1+cu121\n"
    assert fix(text, "requirements.txt") == (
        "torch\ntorchvision==0.18.1+rocm6.0\ntorchaudio==2.3.1+rocm6.0\n"
    )


def test_setup_py_requirements_lists():
    text = (
        "import setuptools\n\n"
        "install_requires = [\n    'torch==2.4.0+cu121',\n    'pynvml',\n]\n"
        "extras = {'quant': ['bitsandbytes==0.41.1']}\n"
        "extras['gpu'] = ['flash-attn==2.7.4.post1', 'nvidia-nccl-cu12']\n"
        "setuptools.setup(name='x', install_requires=install_requires, extras_require=extras)\n"
    )
    fixed = fix(text, "setup.py")
    assert "'torch==2.4.0+rocm6.1'" in fixed
    assert "'bitsandbytes==0.41.1'" in fixed
    assert "nvidia-nccl-cu12" not in fixed
    assert "extras['gpu'] = ['flash-attn==2.7.4.post1']" in fixed
    compile(fixed, "setup.py", "exec")


def test_setup_py_look_alikes_do_not_fire():
    text = (
        '"""Install with pip install flash-attn nvidia-cublas-cu12."""\n'
        "def setup(**kw):\n    pass\n"
        "setup(install_requires=['flash-attn', 'nvidia-cublas-cu12'])\n"
        "REQS = ['flash-attn']  # not passed to setuptools\n"
    )
    assert fix(text, "setup.py") == text
    kinds = analyze(text, "setup.py", "python", tuple(MINE)).findings
    assert kinds == []


def test_conda_environment():
    text = (
        "name: app\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.11\n"
        "  - pytorch-cuda=12.1\n  - pip\n  - pip:\n"
        "    - --extra-index-url https://download.pytorch.org/whl/cu121\n"
        "    - torch==2.3.1+cu121\n    - nvidia-cublas-cu12\n    - flash-attn\n"
    )
    fixed = fix(text, "environment.yml")
    data = yaml.safe_load(fixed)
    pip = data["dependencies"][-1]["pip"]
    assert pip == [
        "--extra-index-url https://download.pytorch.org/whl/rocm6.0",
        "torch==2.3.1+rocm6.0",
        "flash-attn",
    ]


# -- helpers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        ("==0.41.1", "0.49.0", False),
        (">=0.39.0", "0.49.0", True),
        (">=0.45.2,<0.50", "0.49.0", True),
        ("<0.49", "0.49.0", False),
        ("~=0.41.1", "0.49.0", False),
        ("~=0.41", "0.49.0", True),
        ("==2.3.*", "2.3.7", True),
        ("!=2.3.*", "2.3.7", False),
        ("", "1.0", True),
        ("==$VERSION", "1.0", None),
    ],
)
def test_spec_admits(spec, version, expected):
    assert spec_admits(spec, version) is expected


@pytest.mark.parametrize(
    ("marker", "linux"),
    [
        ("sys_platform == 'darwin'", False),
        ("sys_platform=='linux' or sys_platform=='win32'", True),
        ("platform_system == 'Windows'", False),
        ("python_version < '3.11'", True),
        ("platform_system != 'Windows' and python_version >= '3.9'", True),
        ("(sys_platform == 'darwin') and platform_machine == 'arm64'", False),
        ("extra == 'cuda' and os_name == 'posix'", True),
        # Linux with Python < 3.8 is ruled out by the second clause: only Windows is left
        ("(sys_platform == 'win32' or python_version < '3.8') and python_version >= '3.9'", False),
        ("sys_platform ==", True),  # unreadable: allowed
    ],
)
def test_marker_allows_linux(marker, linux):
    assert marker_allows_linux(marker) is linux


def test_parse_requirement_forms():
    parsed = parse_requirement("Flash_Attn[x, y] >=2.5 ; python_version > '3.8'")
    assert parsed is not None
    assert (parsed.name, parsed.extras, parsed.spec) == ("flash-attn", ("x", "y"), ">=2.5")
    assert parsed.marker == "python_version > '3.8'"
    url = parse_requirement("torch @ https://x/torch-2.3.1.whl ; sys_platform == 'linux'")
    assert url is not None and url.url == "https://x/torch-2.3.1.whl"
    for not_a_requirement in ("git+https://github.com/x/y.git", "./local", "https://x/y.whl"):
        assert parse_requirement(not_a_requirement) is None


def test_poetry_specs():
    assert poetry_to_pep440("^0.41.1") == ">=0.41.1,<0.42"
    assert poetry_to_pep440("^2.3") == ">=2.3,<3"
    assert poetry_to_pep440("~1.2.3") == ">=1.2.3,<1.3"
    assert poetry_to_pep440("2.3.1+cu121") == "==2.3.1+cu121"


def test_rocm_for_specs():
    assert rocm_for_specs(["==2.3.1+cu121"]) == ("2.3", "6.0")
    assert rocm_for_specs([">=2.1,<2.3"]) == ("2.2", "5.7")
    assert rocm_for_specs(["==1.13.1"]) is None
    newest = rocm_for_specs([])
    assert newest is not None and rocm_for_specs([">=2.3"]) == newest


def test_command_tokenizer_terminates_on_shell_operators():
    text = (
        'X=$(gh api "x" --jq .p 2>/dev/null || echo "none")\nrun &\n'
        '(cd a && pip install b) & wait\necho "unterminated\n'
    )
    segments = list(command_segments(text))
    assert segments
    reqs = pip_requirements(text)
    assert [req.name for req in reqs] == ["b"]


def test_requirements_parser_options_and_urls():
    text = (
        "-r base.txt\n-e .\n--index-url=https://download.pytorch.org/whl/cu118\n"
        "git+https://github.com/huggingface/peft.git\nfoo @ https://x/foo.whl\n"
    )
    reqs, options = requirements_file(text)
    assert [req.name for req in reqs] == ["foo"]
    assert [option.value for option in options] == ["https://download.pytorch.org/whl/cu118"]


def test_pyproject_scanner_on_invalid_toml_is_quiet():
    assert pyproject_file("[project\ndependencies = [") == ([], [])
