"""ROC412 (diffusers-xformers-enable): flags calls of
`enable_xformers_memory_efficient_attention()` and `set_use_memory_efficient_attention_xformers()`
(not with `False`) on a diffusers pipeline, model or attention module (a UNet, a VAE, a
transformer), except inside the library's own forwarding methods and on instances of a class
that the same file defines."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from ._opt_in import _FACT, _MESSAGE

_METHOD = "enable_xformers_memory_efficient_attention"
#: The lower-level switch of diffusers' models and `Attention` modules (what `_METHOD` calls on
#: every sub-module): with a true value it raises without xformers exactly like `_METHOD`.
_SET_METHOD = "set_use_memory_efficient_attention_xformers"

#: Library methods that forward the switch to sub-modules: the switch itself, not a use of it.
_FORWARDERS = frozenset({_METHOD, _SET_METHOD})


#: A class defined at the top of a file (``class PipelineLike:``, ``class Pipe(Base):``).
_TOP_LEVEL_CLASS = re.compile(r"^class[ \t]+(\w+)", re.MULTILINE)
#: The value of an assignment that calls a class by its bare name (``PipelineLike(unet)``).
_CALLED_CLASS = re.compile(r"(\w+)\(")


class DiffusersXformersEnable(PythonRule):
    """
    ## What it does
    Flags calls of `enable_xformers_memory_efficient_attention()` on a diffusers pipeline or
    model (a UNet, a VAE, a transformer), and of the lower-level switch
    `set_use_memory_efficient_attention_xformers(...)` of a model or an `Attention` module unless
    it is given `False`, except inside the library's own forwarding methods.

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

    ## Known problems
    A call on an object that the same file builds from a class it defines itself
    (`pipe = PipelineLike(...)`) is that class's own method, not diffusers' switch, and is not
    reported; objects built elsewhere are taken as diffusers objects.

    ## References
    - facebookresearch/xformers README (ROCm wheels)
    - huggingface/diffusers `ModelMixin.enable_xformers_memory_efficient_attention`
    """

    code = "ROC412"
    #: the call's statement; the classes the file defines and the receiver's assignments come
    #: from the file's text
    parsing = Parsing(scope="statement", triggers=(_METHOD, _SET_METHOD))
    name = "diffusers-xformers-enable"
    category = "xformers"
    severity = Severity.WARNING
    #: One script switching several modules to xformers (the UNet, then the validation
    #: pipeline) is one problem: one finding per file, the other calls as related sites.
    impact = Impact(consequence="performance", effort_hours=0.25, aggregate="file")
    message = _MESSAGE
    fact = _FACT
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
        Valid(  # the script's own pipeline class: its method, not diffusers' switch
            "class PipelineLike:\n"
            "    def __init__(self, unet):\n"
            "        self.unet = unet\n"
            "def main(args, unet):\n"
            "    pipe = PipelineLike(unet)\n"
            "    if args.diffusers_xformers:\n"
            "        pipe.enable_xformers_memory_efficient_attention()\n"
        ),
        Valid(  # built over several lines; `pipe=self,` is a keyword argument, not a binding
            "class PipelineLike:\n"
            "    def run(self):\n"
            "        return helper(\n"
            "            pipe=self,\n"
            "        )\n"
            "def main(unet):\n"
            "    pipe = PipelineLike(\n"
            "        unet,\n"
            "    )\n"
            "    pipe.enable_xformers_memory_efficient_attention()\n"
        ),
        Valid("def disable(vae):\n    vae.set_use_memory_efficient_attention_xformers(False)\n"),
        Valid(  # a helper forwarding its caller's choice to every sub-module
            "def set_flag(model, valid):\n"
            "    def walk(module):\n"
            "        if hasattr(module, 'set_use_memory_efficient_attention_xformers'):\n"
            "            module.set_use_memory_efficient_attention_xformers(valid)\n"
            "        for child in module.children():\n"
            "            walk(child)\n"
            "    walk(model)\n"
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
        Invalid(  # the lower-level switch, unconditional in a module's constructor
            "class SlicingEncoder(nn.Module):\n"
            "    def __init__(self, mid_block):\n"
            "        self.mid_block = mid_block\n"
            "        self.mid_block.attentions[0].set_use_memory_efficient_attention_xformers(True)\n",
            line=4,
        ),
        Invalid(
            "def load(args, vae):\n"
            "    vae.set_use_memory_efficient_attention_xformers(args.xformers)\n",
            line=2,
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self._local_classes = set(_TOP_LEVEL_CLASS.findall(self.ctx.text or self.ctx.code(node)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _FORWARDERS:
            return
        if func.attr.value == _SET_METHOD and (
            _switches_off(node) or self._forwards_parameter(node)
        ):
            return
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef) and ancestor.name.value in _FORWARDERS:
                return
        if isinstance(func.value, cst.Name) and self._built_from_local_class(func.value.value):
            return
        self.report(node)

    def _forwards_parameter(self, call: cst.Call) -> bool:
        """``module.set_use_memory_efficient_attention_xformers(valid)`` where ``valid`` is a
        parameter of a function around the call: a helper that forwards its caller's choice to
        sub-modules (the switch, like the library's own forwarders); its callers decide."""
        first = call.args[0].value if call.args else None
        if not isinstance(first, cst.Name):
            return False
        return any(
            isinstance(ancestor, cst.FunctionDef)
            and any(param.name.value == first.value for param in _parameters(ancestor.params))
            for ancestor in self.ctx.ancestors(call)
        )

    def _built_from_local_class(self, name: str) -> bool:
        """Whether every assignment of ``name`` in the file builds an instance of a class
        defined at the top of the file (``pipe = PipelineLike(...)``): the call is that class's
        own method. Read from the file's text, whatever part of it is parsed; any other
        assignment of the name anywhere in the file keeps the call reported."""
        if not self._local_classes:
            return False
        values = [
            match.group(1)
            for match in re.finditer(
                rf"^[ \t]*{re.escape(name)}[ \t]*=(?!=)[ \t]*(.*)$", self.ctx.text, re.MULTILINE
            )
        ]
        # ``pipe=self,`` on a line of its own is a keyword argument of a call, not a binding
        values = [value for value in values if not value.rstrip().endswith(",")]
        return bool(values) and all(
            (called := _CALLED_CLASS.match(value)) is not None
            and called.group(1) in self._local_classes
            for value in values
        )


def _parameters(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _switches_off(call: cst.Call) -> bool:
    """``set_use_memory_efficient_attention_xformers(False)``: the switch turned off."""
    first = call.args[0].value if call.args else None
    return isinstance(first, cst.Name) and first.value == "False"
