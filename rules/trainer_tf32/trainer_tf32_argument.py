"""ROC142 (trainer-tf32-argument): flags `tf32=True` passed to transformers' `TrainingArguments`
(and its subclasses such as `Seq2SeqTrainingArguments` or TRL's `SFTConfig`), and a `"tf32"` key
that can be True in a dict named for training arguments (`training_args_kwargs["tf32"] = True if
cfg.tf32 else False`), which is unpacked into `TrainingArguments` elsewhere."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._literals import is_literal
from ._shared import _FACT, _MESSAGE

#: Argument classes that are (or derive from) transformers' TrainingArguments: the library's own
#: and TRL's trainer configs, which subclass it.
_ARGUMENT_CLASSES = re.compile(
    r"(?:TrainingArguments|^(?:SFT|DPO|GRPO|ORPO|KTO|CPO|Reward)Config)$"
)

#: A dict that collects TrainingArguments keywords (``training_args_kwargs``, ``trainer_args``).
_ARGUMENT_DICT = re.compile(r"train(?:ing|er)_?arg", re.IGNORECASE)


def _may_be_true(value: cst.BaseExpression) -> bool:
    """``True``, or ``True if ... else ...`` (either branch): the key is True on some runs."""
    if is_literal(value, True):
        return True
    if isinstance(value, cst.IfExp):
        return _may_be_true(value.body) or _may_be_true(value.orelse)
    return False


class TrainerTf32Argument(PythonRule):
    """
    ## What it does
    Flags `tf32=True` passed to transformers' `TrainingArguments` (and its subclasses such as
    `Seq2SeqTrainingArguments` or TRL's `SFTConfig`), and a `"tf32"` key that can be True in a
    dict named for training arguments (`training_args_kwargs["tf32"] = True if cfg.tf32 else
    False`), which is unpacked into `TrainingArguments` elsewhere.

    ## Why it breaks on ROCm
    `TrainingArguments.__post_init__` calls `is_torch_tf32_available()`, which returns False
    whenever `torch.version.cuda` is None — on every ROCm build of PyTorch — and then raises
    `ValueError("--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7")`.
    Training stops before the first step, even on MI300X, which can run TF32 matmuls.

    ## Example
    ```python
    from transformers import TrainingArguments

    args = TrainingArguments(output_dir="out", bf16=True, tf32=True)
    ```

    ## Manual migration
    Leave `tf32` unset (None) on ROCm, or pass it only where `torch.version.hip` is None; to use
    TF32 matmuls on gfx942, set `torch.backends.cuda.matmul.allow_tf32 = True` and export
    `HIPBLASLT_ALLOW_TF32=1` yourself. `tf32=False` is harmless and not flagged.

    ## References
    - huggingface/transformers `src/transformers/training_args.py` (`tf32` check) and
      `src/transformers/utils/import_utils.py` (`is_torch_tf32_available`)
    """

    code = "ROC142"
    parsing = Parsing(scope="statement", triggers=("tf32",))
    name = "trainer-tf32-argument"
    category = "tf32"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.25)
    message = _MESSAGE
    fact = _FACT
    valid = [
        Valid("from transformers import TrainingArguments\nTrainingArguments('o', tf32=False)\n"),
        Valid("from transformers import TrainingArguments\nTrainingArguments('o', bf16=True)\n"),
        Valid("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"),
        Valid("def build(tf32=True):\n    return dict(tf32=tf32)\n"),
        Valid('def precision(training_args_kwargs):\n    training_args_kwargs["tf32"] = False\n'),
        Valid(
            'def model(model_kwargs, cfg):\n    model_kwargs["tf32"] = True if cfg.tf32 else False\n'
        ),
    ]
    invalid = [
        Invalid(
            "from transformers import TrainingArguments\n\n"
            "args = TrainingArguments(output_dir='out', bf16=True, tf32=True)\n",
            line=3,
            column=55,
        ),
        Invalid(
            "import transformers\n"
            "args = transformers.Seq2SeqTrainingArguments(\n    'out',\n    tf32=True,\n)\n",
            line=4,
        ),
        Invalid("from trl import SFTConfig\ncfg = SFTConfig(output_dir='o', tf32=True)\n"),
        Invalid(  # a keyword dict filled here and unpacked into TrainingArguments elsewhere
            "class Builder:\n"
            "    def _configure_precision_settings(self, training_args_kwargs: dict):\n"
            '        training_args_kwargs["tf32"] = True if self.cfg.tf32 is True else False\n',
            line=3,
            column=40,
        ),
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        """``training_args_kwargs["tf32"] = True if cfg.tf32 else False``: the dict is unpacked
        into TrainingArguments elsewhere (another method or module)."""
        if not _may_be_true(node.value):
            return
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript) or len(subscript.slice) != 1:
                continue
            index = subscript.slice[0].slice
            key = index.value if isinstance(index, cst.Index) else None
            owner = subscript.value
            name = owner.attr.value if isinstance(owner, cst.Attribute) else None
            if isinstance(owner, cst.Name):
                name = owner.value
            if (
                isinstance(key, cst.SimpleString)
                and key.evaluated_value == "tf32"
                and name is not None
                and _ARGUMENT_DICT.search(name)
            ):
                self.report(
                    node.value,
                    message=(
                        f'`{name}["tf32"]` can be True, and the dict becomes TrainingArguments\' '
                        "keywords: TrainingArguments raises ValueError on ROCm builds "
                        "(is_torch_tf32_available() is False when torch.version.cuda is None)"
                    ),
                )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = func.attr.value if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Name):
            callee = func.value
        if callee is None or not _ARGUMENT_CLASSES.search(callee):
            return
        for argument in node.args:
            if argument.keyword is not None and argument.keyword.value == "tf32":
                if is_literal(argument.value, True):
                    self.report(argument)
