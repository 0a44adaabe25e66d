"""Version floors from wherever a project states them: a fix whose API is newer than the lowest
torch the project supports (its dependency files, a ``setup.py`` assert or raise, its CI
matrices and pinned CI installs, tox, nox, its README) is withheld, and the reason names the
evidence (``migrator.knowledge.stated_versions``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from migrator.knowledge.stated_versions import stated_floors
from migrator.knowledge.supported_versions import project_facts
from tests.conftest import write

TRAIN = (
    "import torch\n"
    "\n"
    "scaler = torch.cuda.amp.GradScaler()\n"
    "with torch.cuda.amp.autocast():\n"
    "    pass\n"
    "if torch.version.cuda:\n"
    "    pass\n"
)
SETUP_ASSERT = (
    "import torch\n"
    "from packaging import version\n"
    "from setuptools import setup\n"
    "\n"
    'assert version.parse(torch.__version__) >= version.parse("1.8"), "torch>=1.8 needed"\n'
    "\n"
    'setup(name="floors", install_requires=["torch"])\n'
)
CI_MATRIX = (
    "on: push\n"
    "jobs:\n"
    "  test:\n"
    "    runs-on: ubuntu-latest\n"
    "    strategy:\n"
    "      matrix:\n"
    '        python: ["3.9"]\n'
    '        torch: ["1.13", "2.2"]\n'
    "    steps:\n"
    "      - run: pip install torch==${{ matrix.torch }}\n"
)


def _stated_only(root: Path) -> Path:
    """A project whose torch floor is stated only in a setup.py assert and a CI matrix."""
    write(root, "setup.py", SETUP_ASSERT)
    write(root, ".github/workflows/ci.yml", CI_MATRIX)
    write(root, "floors/train.py", TRAIN)
    return root


def test_a_floor_stated_in_a_setup_assert_and_a_ci_matrix_withholds_newer_apis(tmp_path, run_cli):
    root = _stated_only(tmp_path / "p")
    result = run_cli("fix", "--diff", "--select", "ROC520,ROC101", str(root))
    assert "torch.amp" not in result.stdout  # neither GradScaler (2.3) nor autocast (1.12)
    assert "+if torch.version.cuda or torch.version.hip:" in result.stdout
    withheld = [line for line in result.stderr.splitlines() if "withheld" in line]
    assert len(withheld) == 2, result.stderr
    scaler = next(line for line in withheld if ":3 ROC520" in line)
    assert scaler.endswith(
        "needs torch>=2.3 (torch.amp.GradScaler); the project supports torch>=1.8 "
        "(setup.py:5 assert torch>=1.8, .github/workflows/ci.yml matrix torch 1.13)"
    )
    autocast = next(line for line in withheld if ":4 ROC520" in line)
    # the CI matrix's 1.13 has torch.amp.autocast: only the assert is evidence against it
    assert autocast.endswith(
        "needs torch>=1.12 (torch.amp.autocast); the project supports torch>=1.8 "
        "(setup.py:5 assert torch>=1.8)"
    )
    scanned = run_cli("scan", "--no-cache", "--select", "ROC520", str(root))
    assert "no automatic fix: needs torch>=2.3 (torch.amp.GradScaler)" in scanned.stdout


def test_the_ci_matrix_alone_is_a_floor(tmp_path, run_cli):
    root = tmp_path / "p"
    write(root, "requirements.txt", "torch\n")  # declared without a bound
    write(root, ".github/workflows/ci.yml", CI_MATRIX)
    write(root, "train.py", TRAIN)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    assert "torch.amp.GradScaler" not in result.stdout
    assert 'torch.amp.autocast("cuda")' in result.stdout  # 1.13 has it
    assert "(.github/workflows/ci.yml matrix torch 1.13)" in result.stderr


def test_a_project_that_states_only_new_torches_gets_the_fix(tmp_path, run_cli):
    root = tmp_path / "p"
    write(root, "requirements.txt", "torch>=2.4\n")
    write(root, ".github/workflows/ci.yml", CI_MATRIX.replace('"1.13", "2.2"', '"2.4", "2.5"'))
    write(root, "train.py", TRAIN)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    assert 'torch.amp.GradScaler("cuda")' in result.stdout
    assert "withheld" not in result.stderr


@pytest.mark.parametrize(
    ("files", "floor", "where"),
    [
        (
            {
                "setup.py": "import torch\nfrom packaging.version import parse\n"
                'if parse(torch.__version__) < parse("1.9"):\n'
                '    raise RuntimeError("torch>=1.9")\n'
            },
            "1.9",
            "setup.py:3 raise torch>=1.9",
        ),
        (
            {
                "setup.py": 'import torch\nif not torch.__version__ >= "1.7":\n    raise SystemExit(1)\n'
            },
            "1.7",
            "setup.py:2 raise torch>=1.7",
        ),
        (
            {"pkg/__init__.py": 'import torch\nassert torch.__version__ >= "1.6"\n'},
            "1.6",
            "pkg/__init__.py:2 assert torch>=1.6",
        ),
        (
            # unquoted YAML numbers: 1.10 is torch 1.10, not the float 1.1
            {
                ".github/workflows/t.yml": "jobs:\n  t:\n    strategy:\n      matrix:\n"
                "        pytorch-version: [1.10, 2.0]\n"
            },
            "1.10",
            ".github/workflows/t.yml matrix torch 1.10",
        ),
        (
            {
                ".github/workflows/t.yml": "jobs:\n  t:\n    strategy:\n      matrix:\n"
                "        include:\n          - torch-version: '2.1'\n          - torch-version: '1.12.1'\n"
            },
            "1.12.1",
            ".github/workflows/t.yml matrix torch 1.12.1",
        ),
        (
            {
                ".gitlab-ci.yml": "test:\n  parallel:\n    matrix:\n      - TORCH_VERSION: ['1.11', '2.0']\n"
            },
            "1.11",
            ".gitlab-ci.yml matrix torch 1.11",
        ),
        (
            {
                ".github/workflows/t.yml": "jobs:\n  t:\n    steps:\n      - run: pip install torch==1.13.1\n"
            },
            "1.13.1",
            ".github/workflows/t.yml installs torch 1.13.1",
        ),
        (
            {
                "tox.ini": "[tox]\nenvlist = py39-torch{113,20}\n[testenv]\ndeps =\n"
                "    torch113: torch==1.13.1\n    torch20: torch==2.0.1\n"
            },
            "1.13.1",
            "tox.ini:5 torch 1.13.1",
        ),
        (
            {
                "noxfile.py": "import nox\n\n@nox.session\n"
                '@nox.parametrize("torch", ["1.12", "2.1"])\n'
                "def tests(session, torch):\n"
                '    session.install(f"torch=={torch}")\n'
            },
            "1.12",
            "noxfile.py:4 torch 1.12",
        ),
        # a version the code was tested or developed with is one it runs on
        ({"README.md": "Tested with PyTorch 1.9.\n"}, "1.9", "README.md:1 torch 1.9"),
        ({"README.md": "Requires PyTorch 1.9 and above.\n"}, "1.9", "README.md:1 torch 1.9"),
        (
            {
                "README.md": "# Model\n\nThis codebase has been developed with python version "
                "3.6, PyTorch version 1.7.1, CUDA 11.0 and torchvision 0.8.2.\n"
            },
            "1.7.1",
            "README.md:3 torch 1.7.1",
        ),
        (
            {"README.md": "* 64-bit Python 3.7 and PyTorch 1.7.1. See pytorch.org to install.\n"},
            "1.7.1",
            "README.md:1 torch 1.7.1",
        ),
        # a bare mention states nothing
        ({"README.md": "The profiling runs on one A100 with PyTorch 2.0.1.\n"}, None, None),
        # an install guide beside the README: its pinned install and its minimum
        (
            {
                "README.md": "See get_started.md.\n",
                "get_started.md": "- Install `PyTorch>=1.8.0`:\n\n```bash\n"
                "conda install pytorch==1.8.0 torchvision==0.9.0 cudatoolkit=10.2 -c pytorch\n```\n",
            },
            "1.8.0",
            "get_started.md:1 torch 1.8.0",  # the README states none
        ),
        (
            {
                "docs/INSTALL.md": "## Dependencies\n\n- Python >= 3.7\n- [PyTorch >= 1.7](https://pytorch.org/)\n"
            },
            "1.7",
            "docs/INSTALL.md:4 torch 1.7",
        ),
        (
            {
                "README.md": "pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cu118\n"
            },
            "2.1.1",
            "README.md:1 torch 2.1.1",
        ),
    ],
)
def test_each_place_a_floor_is_stated(tmp_path, files, floor, where):
    for relative, text in files.items():
        write(tmp_path, relative, text)
    found = stated_floors(tmp_path).get("torch", [])
    if floor is None:
        assert found == []
        return
    assert [(f.version, f.where) for f in found] == [(Version(floor), where)]
    assert project_facts(tmp_path).range("torch").low == Version(floor)


def test_the_lowest_of_every_statement_is_the_floor(tmp_path):
    write(tmp_path, "requirements.txt", "torch>=2.1\n")
    write(tmp_path, ".github/workflows/ci.yml", CI_MATRIX)
    facts = project_facts(tmp_path)
    assert facts.range("torch").low == Version("1.13")
    assert facts.unmet({"torch": "2.3"}) == (
        "needs torch>=2.3; the project supports torch>=1.13 "
        "(.github/workflows/ci.yml matrix torch 1.13, requirements.txt torch>=2.1)"
    )


def test_an_unknown_floor_withholds_fixes_that_need_a_recent_torch(tmp_path, run_cli):
    """Nothing states a torch floor (no bound in requirements, no assert, CI, tox, nox or
    README): fixes needing torch newer than 2.0 (GradScaler: 2.3) are withheld and say so;
    ``torch.amp.autocast`` (1.12) is still offered."""
    root = tmp_path / "p"
    write(root, "requirements.txt", "torch\nnumpy\n")
    write(root, "train.py", TRAIN)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    assert "torch.amp.GradScaler" not in result.stdout
    assert 'torch.amp.autocast("cuda")' in result.stdout
    assert (
        "needs torch>=2.3 (torch.amp.GradScaler); the project states no torch floor (not in "
        "its dependency files, setup.py, CI matrices, tox, nox, README or install guide), and an "
        "unknown floor "
        "withholds fixes that need torch newer than 2.0"
    ) in result.stderr


def test_an_old_python_the_project_supports_is_named_as_evidence(tmp_path, run_cli):
    """`python_requires=">=3.7"` and no torch floor: torch 1.13 is the newest on Python 3.7
    (pytorch RELEASE.md), so GradScaler (2.3) is withheld and the reason names the statement."""
    root = tmp_path / "p"
    write(
        root,
        "setup.py",
        'from setuptools import setup\nsetup(name="p", python_requires=">=3.7", install_requires=["torch"])\n',
    )
    write(root, "train.py", TRAIN)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    assert "torch.amp.GradScaler" not in result.stdout
    assert "setup.py python_requires >=3.7 (Python 3.7: torch 1.13 at most)" in result.stderr
    facts = project_facts(root)
    assert facts.range("torch").low is None  # a cap on the floor, not a floor


def test_a_floor_stated_only_in_the_readme_and_the_install_guide_withholds_autocast(
    tmp_path, run_cli
):
    """The README says what the code was developed with and the install guide installs an old
    torch: ``torch.amp.autocast`` (1.12) is withheld under the hygiene selection, naming both."""
    root = tmp_path / "p"
    write(root, "README.md", "Developed with PyTorch version 1.7.1 and CUDA 11.0.\n")
    write(root, "docs/install.md", "conda install pytorch==1.8.0 cudatoolkit=10.2 -c pytorch\n")
    write(
        root, "train.py", "import torch\n\nwith torch.cuda.amp.autocast(enabled=True):\n    pass\n"
    )
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    assert "torch.amp.autocast" not in result.stdout
    assert (
        "needs torch>=1.12 (torch.amp.autocast); the project supports torch>=1.7.1 "
        "(README.md:1 torch 1.7.1, docs/install.md:1 torch 1.8.0)"
    ) in result.stderr
