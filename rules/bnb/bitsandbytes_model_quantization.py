"""ROC511 (bitsandbytes-model-quantization): flags `BitsAndBytesConfig(...)` (transformers,
diffusers, …) and `load_in_4bit=` / `load_in_8bit=` passed to `from_pretrained`/`from_config`."""

from __future__ import annotations

import libcst as cst

from migrator.api import CallShape, Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._imports import matches_package
from .._literals import is_literal
from .._problems import BITSANDBYTES_BINARIES
from ._table import _data


def _calls() -> tuple[CallShape, ...]:
    """The calls ``visit_Call`` reports: a config class's, or a loader's with a load keyword."""
    data = _data()
    return (
        CallShape(names=frozenset(data["config_classes"])),
        CallShape(
            prefixes=tuple(data["hf_prefixes"]),
            attributes=frozenset(data["hf_methods"]),
            keywords=frozenset(data["load_keywords"]),
        ),
    )


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
    impact = Impact(
        dependency="bitsandbytes",
        rocm_release="0.49",
        consequence="performance",
        aggregate="project",
        problem=BITSANDBYTES_BINARIES,
        effort_hours=0.5,
    )
    parsing = Parsing(
        scope="statement",
        triggers=("BitsAndBytesConfig", "load_in_4bit", "load_in_8bit"),
        statement_calls=_calls(),
    )
    name = "bitsandbytes-model-quantization"
    category = "bitsandbytes"
    severity = Severity.WARNING
    message = "bitsandbytes quantization needs bitsandbytes>=0.49 on ROCm"
    fact = "§5 bitsandbytes row; [B1]"
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
