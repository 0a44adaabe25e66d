"""ROC51x: bitsandbytes quantization and 8-bit optimizers (category ``bitsandbytes``)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, Valid
from migrator.ruledata import load_table

from ._imports import guarded_imports, imported_modules, matches_package
from ._literals import is_literal


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("bitsandbytes")
    return data


def _api_uses(ctx: Any, package: str) -> list[tuple[cst.CSTNode, str]]:
    """Maximal Name/Attribute chains that resolve into ``package`` (imports excluded), in source
    order: read from the nodes the engine's walk already listed, not from a second walk."""
    skipped: set[int] = set()
    parents = ctx.parents
    uses: list[tuple[cst.CSTNode, str]] = []
    for node in ctx.nodes:
        parent = parents.get(id(node))
        if parent is not None and id(parent) in skipped:
            skipped.add(id(node))
        elif isinstance(node, cst.Import | cst.ImportFrom):
            skipped.add(id(node))
        elif isinstance(node, cst.Attribute | cst.Name):
            qualified = ctx.qualname(node)
            if qualified and matches_package(qualified, [package]) and qualified != package:
                uses.append((node, qualified))
                skipped.add(id(node))
    return uses


class BitsandbytesDependency(PythonRule):
    """
    ## What it does
    Flags a file's use of bitsandbytes (`bnb.optim.*8bit`, `bnb.nn.Linear8bitLt`,
    `bnb.nn.Linear4bit`, `bnb.functional.*`, …) once, at the first use (or at the import when
    the module is only imported), naming the APIs the file uses.

    ## Why it breaks on ROCm
    Up to 0.48 bitsandbytes had ROCm support only in alpha/preview wheels of its multi-backend
    refactor; the PyPI wheel carries ROCm binaries from 0.49.0 (Dec 2025, labelled preview)
    and 0.50.0 (Jul 2026) is the first release with official ROCm support for LLM.int8, QLoRA
    4-bit and the 8-bit optimizers (Linux: gfx90a, gfx942, gfx950, gfx110x, gfx115x, gfx120x).
    An older pin fails to load its CUDA library on ROCm. On CDNA GPUs 0.49 lacks 4-bit
    blocksize 64 and falls back to 128.

    ## Example
    ```python
    import bitsandbytes as bnb

    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)
    ```

    ## Manual migration
    Require `bitsandbytes>=0.49` (prefer `>=0.50`) in the project's requirements (the
    dependency rules flag the pin itself), and re-validate 4-bit accuracy on MI200/MI300 when
    0.49 is used (blocksize 128 instead of 64). The Python code needs no change.

    ## References
    - bitsandbytes-foundation/bitsandbytes `docs/source/installation.mdx` (0.44.0–0.50.0)
    """

    code = "ROC510"
    dependency = "bitsandbytes"
    rocm_release = "0.49"
    parse_scope = "statement"
    name = "bitsandbytes-dependency"
    category = "bitsandbytes"
    severity = Severity.WARNING
    aggregate = "project"
    problem = "bitsandbytes-rocm-binaries"
    message = "bitsandbytes has ROCm binaries only from 0.49 (preview; 0.50 official)"
    fact = "§5 bitsandbytes row, §10.7; [B1]"
    triggers = ("import bitsandbytes", "from bitsandbytes")
    effort_hours = 0.5
    valid = [
        Valid("import torch\nopt = torch.optim.AdamW(params)\n"),
        Valid('"""Optionally uses bitsandbytes 8-bit Adam."""\n# import bitsandbytes as bnb\n'),
        Valid("from bitsandbytes_utils import AdamW8bit\nopt = AdamW8bit(params)\n"),
        Valid(
            "try:\n    import bitsandbytes\n    info = bitsandbytes.__version__\n"
            "except Exception:\n    pass\n"
        ),
    ]
    invalid = [
        Invalid(
            "import bitsandbytes as bnb\n\n"
            "opt = bnb.optim.AdamW8bit(params, lr=1e-4)\n"
            "layer = bnb.nn.Linear8bitLt(1024, 1024)\n",
            line=3,
            column=7,
            count=1,
        ),
        Invalid("import bitsandbytes\nprint(bitsandbytes.__version__)\n", line=1, count=1),
        Invalid(
            "try:\n    import bitsandbytes as bnb\nexcept ImportError:\n    bnb = None\n"
            "opt_class = bnb.optim.AdamW8bit if bnb else None\n",
            line=5,
        ),
        Invalid(
            "from bitsandbytes.nn import Linear4bit\n"
            "layer = Linear4bit(4096, 4096, quant_type='nf4')\n",
            line=2,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        data = _data()
        package = data["package"]
        apis: list[str] = []
        first: cst.CSTNode | None = None
        for node, qualified in _api_uses(self.ctx, package):
            short = qualified[len(package) + 1 :]
            if short.startswith("__"):  # __version__ and friends: no kernels involved
                continue
            first = first or node
            if short not in apis:
                apis.append(short)
        if first is not None:
            four_bit = any(api.rsplit(".", 1)[-1] in data["four_bit"] for api in apis)
            listed = ", ".join(f"`{api}`" for api in apis[:5]) + (", …" if len(apis) > 5 else "")
            message = f"uses bitsandbytes ({listed}): {data['version_note']}"
            if four_bit:
                message += f"; {data['four_bit_note']}"
            self.report(first, message=message)
            return
        # Only imported (maybe to print its version): matters when the import is unguarded.
        guarded = guarded_imports(original_node)
        for node in self.ctx.nodes:
            if (
                isinstance(node, cst.Import | cst.ImportFrom)
                and id(node) not in guarded
                and any(matches_package(module, [package]) for module in imported_modules(node))
            ):
                self.report(node, message=f"imports bitsandbytes: {data['version_note']}")
                return


class BitsandbytesTransformersQuantization(PythonRule):
    """
    ## What it does
    Flags `BitsAndBytesConfig(...)` (transformers, diffusers, …) and `load_in_4bit=` /
    `load_in_8bit=` passed to `from_pretrained`/`from_config`: model loading that quantizes
    through bitsandbytes.

    ## Why it breaks on ROCm
    The quantized layers run bitsandbytes kernels, which exist for ROCm only from bitsandbytes
    0.49 (preview; 0.50 official). With an older bitsandbytes, loading fails or falls back to
    CPU; with 0.49 on CDNA GPUs, 4-bit (QLoRA/NF4) quantization uses blocksize 128 instead of 64.

    ## Example
    ```python
    config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
    model = AutoModelForCausalLM.from_pretrained(name, quantization_config=config)
    ```

    ## Manual migration
    Require `bitsandbytes>=0.49` (prefer `>=0.50`) and re-check 4-bit accuracy on MI200/MI300.
    Alternatives on AMD: AMD Quark (FP8/INT8/INT4) or GPTQ checkpoints (GPTQModel).
    `load_in_4bit=`/`load_in_8bit=` on `from_pretrained` are deprecated in transformers: pass
    `quantization_config=BitsAndBytesConfig(...)` instead.

    ## References
    - bitsandbytes-foundation/bitsandbytes `docs/source/installation.mdx`
    - https://huggingface.co/docs/transformers/quantization/bitsandbytes
    """

    code = "ROC511"
    dependency = "bitsandbytes"
    rocm_release = "0.49"
    parse_scope = "statement"
    name = "bitsandbytes-model-quantization"
    category = "bitsandbytes"
    severity = Severity.WARNING
    aggregate = "project"
    problem = "bitsandbytes-rocm-binaries"
    message = "bitsandbytes quantization needs bitsandbytes>=0.49 on ROCm"
    fact = "§5 bitsandbytes row; [B1]"
    triggers = ("BitsAndBytesConfig", "load_in_4bit", "load_in_8bit")
    effort_hours = 0.5
    valid = [
        Valid("from transformers import AutoModel\nm = AutoModel.from_pretrained(name)\n"),
        Valid("m = AutoModel.from_pretrained(name, load_in_8bit=False)\n"),
        Valid("def load(load_in_8bit=True):\n    pass\nload(load_in_8bit=True)\n"),
        Valid('"""BitsAndBytesConfig(load_in_4bit=True)"""\n'),
    ]
    invalid = [
        Invalid(
            "from transformers import BitsAndBytesConfig\n"
            "config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4')\n",
            line=2,
            column=10,
        ),
        Invalid(
            "import transformers\n"
            "model = transformers.AutoModelForCausalLM.from_pretrained(\n"
            "    base_model, load_in_8bit=load_8bit, device_map='auto'\n"
            ")\n",
            line=3,
            column=17,
        ),
        Invalid(
            "from diffusers import BitsAndBytesConfig as DiffusersBnb\n"
            "q = DiffusersBnb(load_in_8bit=True)\n"
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        data = _data()
        qualified = self.ctx.call_name(node) or ""
        last = qualified.rsplit(".", 1)[-1]
        if last in data["config_classes"] and matches_package(qualified, data["config_packages"]):
            message = f"{self.message}: {data['version_note']}"
            if self._four_bit(node):
                message += f"; {data['four_bit_note']}"
            self.report(node, message=message)
            return
        if not self._is_hf_loader(node, qualified):
            return
        for argument in node.args:
            keyword = argument.keyword.value if argument.keyword is not None else None
            if keyword in data["load_keywords"] and not is_literal(argument.value, False):
                message = f"`{keyword}=` quantizes through bitsandbytes: {data['version_note']}"
                if keyword == "load_in_4bit":
                    message += f"; {data['four_bit_note']}"
                self.report(argument, message=message)
                return

    def _four_bit(self, node: cst.Call) -> bool:
        for argument in node.args:
            if argument.keyword is None:
                continue
            name = argument.keyword.value
            if name == "load_in_4bit" and not is_literal(argument.value, False):
                return True
            if name.startswith("bnb_4bit"):
                return True
        return False

    @staticmethod
    def _is_hf_loader(node: cst.Call, qualified: str) -> bool:
        data = _data()
        if any(qualified.startswith(prefix) for prefix in data["hf_prefixes"]):
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in data["hf_methods"]
