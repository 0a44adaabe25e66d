"""LoRA fine-tuning of the llm_app model with the Hugging Face Trainer (A100/H100 recipe)."""

import os

from torch.utils.cpp_extension import load
from transformers import TrainingArguments

KERNEL_DIR = os.path.join(os.path.dirname(__file__), "..", "csrc")


def fused_rope():
    """JIT-build the fused rotary-embedding kernel used by the training forward pass."""
    return load(
        name="fused_rope",
        sources=[os.path.join(KERNEL_DIR, "rope.cpp"), f"{KERNEL_DIR}/rope_kernel.cu"],
    )


def training_args(output_dir: str) -> TrainingArguments:
    return TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=8,
        bf16=True,
        tf32=True,
        gradient_checkpointing=True,
    )


def remote_setup_command(run_name: str) -> str:
    """Shell script the cluster launcher runs on each node before training."""
    return f"""
    pip install flash-attn==2.5.8 --no-build-isolation
    python scripts/finetune.py --run-name {run_name}
    """
