"""What the ROC142, ROC143 rules share."""

from __future__ import annotations

_FACT = "§2 TrainingArguments(tf32=True) row; [X1]"

_MESSAGE = (
    "`tf32=True` makes transformers' TrainingArguments raise ValueError on ROCm builds "
    "(is_torch_tf32_available() is False when torch.version.cuda is None)"
)
