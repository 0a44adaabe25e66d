"""Version branches read as the interpreter reads them: code that only an older torch runs
(the ``else`` of transformers' ``is_torch_greater_or_equal_than_1_10``, of ``hasattr(torch,
"amp")``, of a project's own ``TORCH_GE_1_10 = version.parse(...) >= ...``) keeps the API that
exists there, and ``not``, ``and`` and ``or`` narrow or widen a branch as Python evaluates them."""

from __future__ import annotations

import pytest

from migrator.knowledge.versions import Version, branch_range
from tests.conftest import write

OLD_AUTOCAST = "        with torch.cuda.amp.autocast():\n            return model(x)\n"
NEW_AUTOCAST = '        with torch.autocast("cuda"):\n            return model(x)\n'


def _run(run_cli, tmp_path, source: str, requirements: str = "torch\n") -> str:
    root = tmp_path / "p"
    write(root, "requirements.txt", requirements)
    write(root, "model.py", source)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(root))
    return result.stdout + result.stderr


@pytest.mark.parametrize(
    "header",
    [
        "from transformers.pytorch_utils import is_torch_greater_or_equal_than_1_10\n\n"
        "def run(model, x):\n    if is_torch_greater_or_equal_than_1_10:\n",
        "from transformers import pytorch_utils\n\n"
        "def run(model, x):\n    if pytorch_utils.is_torch_greater_or_equal_than_1_10:\n",
        "from packaging import version\n\n"
        'TORCH_GE_1_10 = version.parse(torch.__version__) >= version.parse("1.10")\n\n'
        "def run(model, x):\n    if TORCH_GE_1_10:\n",
        "def run(model, x):\n    if hasattr(torch, 'amp'):\n",
        "def run(model, x):\n    if hasattr(torch, 'autocast'):\n",
    ],
    ids=[
        "transformers-constant",
        "module-attribute",
        "project-constant",
        "hasattr",
        "hasattr-1.10",
    ],
)
def test_the_old_torch_fallback_is_left_as_written(run_cli, tmp_path, header):
    source = "import torch\n" + header + NEW_AUTOCAST + "    else:\n" + OLD_AUTOCAST
    out = _run(run_cli, tmp_path, source)
    assert "+        with torch.amp.autocast" not in out, out
    assert "withheld" in out and "needs torch>=1.12 (torch.amp.autocast); this code runs on" in out


def test_a_negated_check_guards_its_body(run_cli, tmp_path):
    source = (
        "import torch\nfrom transformers.pytorch_utils import is_torch_greater_or_equal_than_1_10\n"
        "\n\ndef run(model, x):\n    if not is_torch_greater_or_equal_than_1_10:\n" + OLD_AUTOCAST
    )
    out = _run(run_cli, tmp_path, source)
    assert "torch.amp.autocast" not in out.split("withheld", 1)[0], out
    assert "this code runs on torch<1.10" in out


def test_the_new_torch_branch_is_fixed(run_cli, tmp_path):
    """Where the branch runs only on a torch that has the API, the project's floor is no
    obstacle."""
    source = (
        "import torch\n\n\ndef run(model, x):\n"
        '    if torch.__version__ >= "2.3":\n'
        "        return torch.cuda.amp.GradScaler()\n"
        "    return None\n"
    )
    out = _run(run_cli, tmp_path, source, "torch>=2.0\n")
    assert '+        return torch.amp.GradScaler("cuda")' in out, out


@pytest.mark.parametrize(
    "branch",
    [
        # `or`: the body also runs on any torch when FORCE is set
        '    if torch.__version__ >= "2.3" or FORCE:\n        return torch.cuda.amp.GradScaler()\n',
        # the `else` of `and`: runs on an old torch whenever SLOW is false
        '    if torch.__version__ < "2.3" and SLOW:\n        return None\n'
        "    else:\n        return torch.cuda.amp.GradScaler()\n",
    ],
    ids=["or", "else-of-and"],
)
def test_a_branch_that_also_runs_on_old_torch_keeps_the_projects_floor(run_cli, tmp_path, branch):
    source = "import torch\n\nFORCE = SLOW = False\n\n\ndef run():\n" + branch
    out = _run(run_cli, tmp_path, source, "torch>=2.0\n")
    assert "torch.amp.GradScaler(" not in out.split("withheld", 1)[0], out
    assert "needs torch>=2.3 (torch.amp.GradScaler); the project supports torch>=2.0" in out


@pytest.mark.parametrize(
    ("test", "negate", "low", "high"),
    [
        ("is_torch_greater_or_equal_than_1_10", False, "1.10", None),
        ("is_torch_greater_or_equal_than_1_10", True, None, "1.10"),
        ("not is_torch_greater_or_equal_than_2_0", False, None, "2.0"),
        ("is_torch_less_than_1_11", False, None, "1.11"),
        ('hasattr(torch.amp, "GradScaler")', False, "2.3", None),
        ('hasattr(torch, "amp")', True, None, "1.12"),
        ('torch.__version__ >= "2.0" and torch.__version__ < "2.3"', False, "2.0", "2.3"),
        ('torch.__version__ < "2.0" or torch.__version__ < "2.2"', False, None, "2.2"),
    ],
)
def test_branch_range_reads_the_test_as_python_does(test, negate, low, high):
    found = branch_range(test, negate)["torch"]
    assert found.low == (Version(low) if low else None)
    assert found.high == (Version(high) if high else None)


@pytest.mark.parametrize(
    ("test", "negate"),
    [
        ('torch.__version__ >= "2.3" or FORCE', False),
        ('torch.__version__ < "2.3" and SLOW', True),
        ('torch.__version__ >= "2.0" and torch.__version__ < "2.3"', True),
    ],
)
def test_a_test_that_does_not_bound_torch_gives_no_range(test, negate):
    assert "torch" not in branch_range(test, negate)
