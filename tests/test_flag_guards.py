"""Guards through flags (issue 47, item 4) on small projects shaped like real ones, through the
command line: an availability flag set by a try-import, ``find_spec`` or an ``is_*_available()``
helper guards what it controls across modules and attributes; an opt-in backend option that is
off by default makes what it switches on a hint; a package ``__init__`` that imports a CUDA-only
toolkit is reported, not hidden behind the modules it imports."""

from __future__ import annotations

import ast

from migrator.syntax.flags import module_flags
from migrator.syntax.options import opt_in_options
from tests.conftest import write

UTILS = """\
try:
    import xformers
    import xformers.ops

    XFORMERS_AVAILABLE = True
except ImportError:
    XFORMERS_AVAILABLE = False
"""

MODEL = """\
import torch
import torch.nn.functional as F

from .utils import XFORMERS_AVAILABLE

if XFORMERS_AVAILABLE:
    import xformers.ops


class Attention(torch.nn.Module):
    use_xformers = XFORMERS_AVAILABLE

    def __init__(self, memory_efficient):
        super().__init__()
        self.memory_efficient = XFORMERS_AVAILABLE and memory_efficient

    def forward(self, q, k, v):
        if self.use_xformers:
            return xformers.ops.memory_efficient_attention(q, k, v)
        return F.scaled_dot_product_attention(q, k, v)

    def decode(self, q, k, v):
        if not self.memory_efficient:
            return F.scaled_dot_product_attention(q, k, v)
        return xformers.ops.memory_efficient_attention(q, k, v)


def attend(q, k, v):
    if XFORMERS_AVAILABLE:
        return xformers.ops.memory_efficient_attention(q, k, v)
    return F.scaled_dot_product_attention(q, k, v)
"""

TOOLS = """\
from pkg import XFORMERS_AVAILABLE
import xformers.ops


def fused(q, k, v):
    if XFORMERS_AVAILABLE:
        return xformers.ops.memory_efficient_attention(q, k, v)
    return q
"""


def _findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


def test_a_try_import_flag_guards_its_uses_across_modules_and_attributes(tmp_path, scan_json):
    write(tmp_path, "pkg/__init__.py", "from .utils import XFORMERS_AVAILABLE\n")
    write(tmp_path, "pkg/utils.py", UTILS)
    write(tmp_path, "pkg/model.py", MODEL)
    write(tmp_path, "tools/fused.py", TOOLS)
    assert _findings(scan_json(str(tmp_path)), "ROC410") == []
    shown = _findings(scan_json("--show-guarded", str(tmp_path)), "ROC410")
    assert sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in shown) == [
        ("fused.py", 7),
        ("model.py", 19),
        ("model.py", 25),
        ("model.py", 30),
    ]
    assert all(f["guard"] == "availability probe" for f in shown)


def test_a_flag_the_project_also_sets_otherwise_guards_nothing(tmp_path, scan_json):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/utils.py", UTILS + "\nXFORMERS_AVAILABLE = XFORMERS_AVAILABLE or FORCE\n")
    write(tmp_path, "pkg/model.py", MODEL)
    lines = sorted(f["line"] for f in _findings(scan_json(str(tmp_path)), "ROC410"))
    assert lines == [19, 25, 30]


def test_flags_read_from_a_module():
    text = (
        "import importlib.util\n"
        "from transformers.utils import is_flash_attn_2_available\n"
        "HAS_SPEC = importlib.util.find_spec('apex') is not None\n"
        "HAS_TORCH = importlib.util.find_spec('torch') is not None\n"
        "FLASH = is_flash_attn_2_available()\n"
        "CUDA = is_torch_cuda_available()\n"
        "BOTH = FLASH and HAS_SPEC\n"
        "try:\n"
        "    import apex\n"
        "except ImportError:\n"
        "    apex = None\n"
        "def f(flag=False):\n"
        "    ok = flag\n"
        "    fast = FLASH if flag else False\n"
        "class C:\n"
        "    def __init__(self):\n"
        "        self.fast = FLASH\n"
        "        self.mixed = FLASH\n"
        "    def off(self):\n"
        "        self.mixed = self.other\n"
    )
    flags = module_flags(ast.parse(text), lambda node: None)
    assert flags.names == {
        "HAS_SPEC": "apex",
        "FLASH": "flash_attn_2",
        "BOTH": "flash_attn_2",
        "fast": "flash_attn_2",
    }
    assert flags.attributes == {"fast": "flash_attn_2"}


def test_opt_in_options_read_from_the_project():
    texts = [
        "p.add_argument('--use_apex', action='store_true')\n"
        "p.add_argument(\n    '--enable-xformers', dest='xformers', action='store_true',\n)\n"
        "p.add_argument('--use_trt', action='store_true', default=True)\n"
        "p.add_argument('--fp16', action='store_true')\n",
        "@dataclass\nclass Config:\n    use_flash_attn: bool = False\n    use_te: bool = False\n",
        "def build(use_te=False):\n    pass\nbuild(use_te=True)\n",
    ]
    assert opt_in_options(texts) == {"use_apex", "xformers", "use_flash_attn"}


TRAIN = """\
import argparse

import torch


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_apex", action="store_true", help="NVIDIA apex AMP")
    return parser.parse_args()


def main():
    args = parse()
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    if args.use_apex:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer
"""


def test_code_behind_an_opt_in_backend_option_is_a_hint(tmp_path, scan_json):
    write(tmp_path, "train.py", TRAIN)
    (finding,) = _findings(scan_json(str(tmp_path)), "ROC502")
    assert finding["severity"] == "info"
    assert "only with the opt-in `args.use_apex` (off by default" in finding["message"]


def test_an_option_the_project_switches_on_stays_a_problem(tmp_path, scan_json):
    write(tmp_path, "train.py", TRAIN.replace('action="store_true"', "default=True"))
    (finding,) = _findings(scan_json(str(tmp_path)), "ROC502")
    assert finding["severity"] == "warning"
    write(tmp_path, "train.py", TRAIN)
    write(tmp_path, "run.py", "from train import main\nparser.set_defaults(use_apex=True)\n")
    (finding,) = _findings(scan_json(str(tmp_path)), "ROC502")
    assert finding["severity"] == "warning"


def test_a_config_field_off_by_default_in_another_module_is_an_opt_in(tmp_path, scan_json):
    write(
        tmp_path,
        "lib/config.py",
        "from dataclasses import dataclass\n\n@dataclass\nclass Config:\n"
        "    use_xformers: bool = False\n",
    )
    write(
        tmp_path,
        "lib/attention.py",
        "import torch.nn.functional as F\n\n\n"
        "def attend(cfg, q, k, v):\n"
        "    if not cfg.use_xformers:\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
        "    else:\n"
        "        import xformers.ops as xops\n\n"
        "        q = k = v = q.view(1, -1, 8, 64)\n"
        "        return xops.memory_efficient_attention(q, k, v, p=0.1)\n",
    )
    report = scan_json(str(tmp_path))
    (call,) = _findings(report, "ROC410")
    assert call["severity"] == "info" and "`cfg.use_xformers`" in call["message"]


def test_a_toolkit_import_in_the_package_init_is_reported_there(tmp_path, scan_json):
    write(tmp_path, "conv/__init__.py", "from .convert import *\nimport tensorrt as trt\n")
    write(tmp_path, "conv/convert.py", "from .version import trt_version\n\n\ndef f():\n    pass\n")
    write(tmp_path, "conv/version.py", "import tensorrt as trt\n\n\ndef trt_version():\n    pass\n")
    write(tmp_path, "conv/utils.py", "import tensorrt as trt\n")
    report = scan_json(str(tmp_path))
    (finding,) = _findings(report, "ROC902")
    assert finding["path"].endswith("conv/__init__.py") and finding["line"] == 2
    assert finding["severity"] == "error"
    assert "every import of `conv` runs" in finding["message"]


def test_a_toolkit_import_in_a_console_script_module_is_reported_there(tmp_path, scan_json):
    # the command's module imports the toolkit itself and a helper written on it: before, it
    # counted as a consequence of the helper and was hidden as guarded, and nothing said that
    # the project's command fails
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "conv"\n[project.scripts]\nconv-export = "conv.export:main"\n',
    )
    write(tmp_path, "conv/__init__.py", "")
    write(tmp_path, "conv/engine.py", "import tensorrt as trt\n\n\ndef build():\n    pass\n")
    write(
        tmp_path,
        "conv/export.py",
        "import tensorrt as trt\n\nfrom .engine import build\n\n\ndef main():\n    build()\n",
    )
    report = scan_json(str(tmp_path))
    (finding,) = _findings(report, "ROC902")
    sites = {(finding["path"], finding["line"])} | {
        (site["path"], site["line"]) for site in finding["related"]
    }
    assert ("conv/export.py", 1) in sites and finding["severity"] == "error"
    assert "`conv/export.py` is the module the `conv-export` command" in finding["message"]
