"""ROC412-ROC413: diffusers' opt-in xformers attention, switched on in code or by a training
script flag (category ``xformers``)."""

from __future__ import annotations

import re

import libcst as cst

from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, TextRule, Valid

from ._shell import iter_lines

_METHOD = "enable_xformers_memory_efficient_attention"
_FACT = "§4d xformers wheels; [X3]"
_MESSAGE = (
    "xformers attention switched on: PyPI xformers wheels are CUDA builds and its ROCm wheels "
    "are experimental (own index); diffusers raises without xformers and uses torch SDPA "
    "(AOTriton kernels on ROCm) when this is left off"
)
#: Library methods that forward the switch to sub-modules: the switch itself, not a use of it.
_FORWARDERS = frozenset({_METHOD, "set_use_memory_efficient_attention_xformers"})


class DiffusersXformersEnable(PythonRule):
    """
    ## What it does
    Flags calls of `enable_xformers_memory_efficient_attention()` on a diffusers pipeline or
    model (a UNet, a VAE, a transformer), except inside the library's own forwarding methods.

    ## Why it breaks on ROCm
    The call makes every attention processor use `xformers.ops.memory_efficient_attention`.
    diffusers raises at once when xformers is not importable, and the PyPI xformers wheels are
    CUDA builds; ROCm wheels exist only on xformers' own experimental index (since 0.0.28).
    Without the call, diffusers already uses `torch.nn.functional.scaled_dot_product_attention`,
    which runs AOTriton flash / memory-efficient kernels on MI200 and MI300.

    ## Example
    ```python
    if args.enable_xformers_memory_efficient_attention:
        unet.enable_xformers_memory_efficient_attention()
    ```

    ## Manual migration
    Leave the call out on ROCm (SDPA is the default and as memory-efficient), or install the
    experimental ROCm xformers wheel and test it.

    ## References
    - facebookresearch/xformers README (ROCm wheels)
    - huggingface/diffusers `ModelMixin.enable_xformers_memory_efficient_attention`
    """

    code = "ROC412"
    parse_scope = "statement"
    name = "diffusers-xformers-enable"
    category = "xformers"
    severity = Severity.WARNING
    message = _MESSAGE
    fact = _FACT
    triggers = (_METHOD,)
    effort_hours = 0.25
    #: One script switching several modules to xformers (the UNet, then the validation
    #: pipeline) is one problem: one finding per file, the other calls as related sites.
    aggregate = "file"
    valid = [
        Valid("pipe.enable_attention_slicing()\n"),
        Valid(
            "class Combined:\n"
            "    def enable_xformers_memory_efficient_attention(self, op=None):\n"
            "        self.decoder.enable_xformers_memory_efficient_attention(op)\n"
        ),
        Valid('"""Call pipe.enable_xformers_memory_efficient_attention() for speed."""\n'),
        Valid(
            "import pytest\nfrom diffusers.utils import is_xformers_available\n\n"
            "@pytest.mark.skipif(not is_xformers_available(), reason='needs xformers')\n"
            "def test_xformers(pipe):\n"
            "    pipe.enable_xformers_memory_efficient_attention()\n"
        ),
    ]
    invalid = [
        Invalid(
            "def main(args, unet):\n"
            "    if args.enable_xformers_memory_efficient_attention:\n"
            "        unet.enable_xformers_memory_efficient_attention()\n",
            line=3,
            column=9,
        ),
        Invalid("pipe = load()\npipe.vae.enable_xformers_memory_efficient_attention(None)\n"),
        Invalid(
            "from diffusers.utils import is_xformers_available\n"
            "if is_xformers_available():\n"
            "    unet.enable_xformers_memory_efficient_attention()\n"
            "else:\n"
            "    raise ValueError('xformers is not available')\n",
            line=3,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != _METHOD:
            return
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and ancestor.name.value in _FORWARDERS:
                return
        self.report(node)


_FLAG = re.compile(r"(?<![\w-])--enable[_-]xformers[_-]memory[_-]efficient[_-]attention(?![\w-])")


class XformersAttentionFlag(TextRule):
    """
    ## What it does
    Flags `--enable_xformers_memory_efficient_attention` passed to a training or inference
    script from shell scripts, Dockerfiles and CI files (the diffusers example scripts' flag).

    ## Why it breaks on ROCm
    The script then calls `enable_xformers_memory_efficient_attention()` (ROC412): it stops
    with "xformers is not available" unless the experimental ROCm xformers wheel is installed.

    ## Example
    ```python
    # train.sh
    accelerate launch train_text_to_image.py --mixed_precision fp16 \\
      --enable_xformers_memory_efficient_attention
    ```

    ## Manual migration
    Drop the flag on ROCm: the scripts use torch SDPA by default.

    ## References
    - facebookresearch/xformers README (ROCm wheels)
    """

    code = "ROC413"
    name = "xformers-attention-flag"
    category = "xformers"
    severity = Severity.WARNING
    message = _MESSAGE.replace("xformers attention switched on", "xformers attention flag")
    fact = _FACT
    triggers = ("xformers",)
    file_kinds = frozenset({"shell", "dockerfile", "ci-yaml"})
    effort_hours = 0.1
    aggregate = "file"
    valid = [
        Valid("# add --enable_xformers_memory_efficient_attention on NVIDIA\n", path="t.sh"),
        Valid("python train.py --enable_xformers_memory_efficient_attention_v2\n", path="t.sh"),
    ]
    invalid = [
        Invalid(
            "accelerate launch train.py \\\n  --enable_xformers_memory_efficient_attention \\\n"
            "  --mixed_precision fp16\n",
            path="train.sh",
            line=2,
            column=3,
        ),
        Invalid(
            "jobs:\n  t:\n    steps:\n"
            "      - run: python train.py --enable_xformers_memory_efficient_attention\n",
            path=".github/workflows/t.yml",
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "xformers" not in code:
                continue
            for match in _FLAG.finditer(code):
                self.report(offset + match.start(), offset + match.end())
