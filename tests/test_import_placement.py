"""Imports added by fixes land where isort puts them: in the block that already imports from the
same package, in that block's order, never after the first-party imports."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from migrator.engine.import_placement import place_imports
from migrator.engine.runner import fix_tree
from migrator.model import Applicability

HEAD = (
    '"""Tests."""\n\n'
    "from copy import deepcopy\n\n"
    "import pytest\n"
    "import torch\n"
    "from torch._dynamo.backends import debugging\n"
    "from torch.backends.cuda import SDPBackend\n"
    "from transformers import AutoConfig\n\n"
    "import mypkg.config as config_module\n"
    "from mypkg import GPT\n"
)


def _placed(code: str, adds: list[tuple[str, str | None]]) -> str:
    return place_imports(cst.parse_module(code), adds).code


def test_from_import_joins_its_package_in_sort_order():
    assert _placed(HEAD, [("torch.nn.attention", "sdpa_kernel")]) == HEAD.replace(
        "from torch.backends.cuda import SDPBackend\n",
        "from torch.backends.cuda import SDPBackend\nfrom torch.nn.attention import sdpa_kernel\n",
    )


def test_import_sorting_first_takes_over_the_blocks_leading_lines():
    code = "import os\n\n# third party\nimport torch.cuda\n\nimport mypkg\n"
    assert _placed(code, [("torch", None), ("os", None)]) == (
        "import os\n\n# third party\nimport torch\nimport torch.cuda\n\nimport mypkg\n"
    )
    assert _placed("import os\n\n# gpu\nimport zlib\n", [("os.path", None)]) == (
        "import os\nimport os.path\n\n# gpu\nimport zlib\n"
    )


def test_package_not_imported_yet_is_left_to_the_default_insertion():
    code = "import os\n\nimport mypkg\n"
    assert _placed(code, [("torch.nn.attention", "sdpa_kernel")]) == code


def test_fix_adds_the_import_in_the_third_party_block(tmp_path: Path):
    body = (
        "\n\ndef run(model, x):\n"
        "    with torch.backends.cuda.sdp_kernel(enable_flash=False):\n"
        "        model(x)\n"
    )
    (tmp_path / "requirements.txt").write_text("torch>=2.3\n")
    (tmp_path / "test_attn.py").write_text(HEAD + body)
    run = fix_tree(tmp_path, level=Applicability.SAFE, select=["ROC150"], write=False, jobs=1)
    (outcome,) = [o for o in run.outcomes if o.new_text is not None]
    text = outcome.new_text
    assert text is not None
    assert text.startswith(
        HEAD.replace(
            "from torch.backends.cuda import SDPBackend\n",
            "from torch.backends.cuda import SDPBackend\n"
            "from torch.nn.attention import sdpa_kernel\n",
        )
    )
    assert "    with sdpa_kernel([" in text
