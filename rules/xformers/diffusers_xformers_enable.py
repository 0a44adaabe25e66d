"""ROC412 (diffusers-xformers-enable): flags calls of
`enable_xformers_memory_efficient_attention()` on a diffusers pipeline or model (a UNet, a VAE,
a transformer), except inside the library's own forwarding methods."""

from __future__ import annotations

import libcst as cst

from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, Valid

from ._opt_in import _FACT, _MESSAGE

_METHOD = "enable_xformers_memory_efficient_attention"

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
