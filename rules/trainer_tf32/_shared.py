"""What ROC142 and ROC143 (transformers' ``tf32`` switch) share: the fact and the message."""

from __future__ import annotations

_FACT = "§2 TrainingArguments(tf32=True) row; [X1]"

_MESSAGE = (
    "`tf32=True` makes transformers' TrainingArguments raise ValueError on ROCm builds "
    "(is_torch_tf32_available() is False when torch.version.cuda is None)"
)
