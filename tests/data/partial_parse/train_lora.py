"""Fine-tune a small diffusion model with LoRA (a sample shaped like the training scripts of
public diffusion and LLM projects, written for the partial-parsing tests).

Install the extras first: pip install bitsandbytes xformers
"""

import argparse
import logging
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

try:
    import bitsandbytes as bnb
except ImportError:
    bnb = None

from transformers import BitsAndBytesConfig, TrainingArguments

logger = logging.getLogger(__name__)
DEFAULT_RANK = 4; DEFAULT_ALPHA = 8

if not torch.cuda.is_available():
    sys.exit("a GPU is required")

torch.backends.cuda.matmul.allow_tf32 = True


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="LoRA fine-tuning")
    parser.add_argument("--rank", type=int, default=DEFAULT_RANK)
    parser.add_argument("--alpha", type=int, default=DEFAULT_ALPHA)
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--use_8bit_adam", action="store_true")
    parser.add_argument("--enable_xformers_memory_efficient_attention", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args(argv)
    if args.rank <= 0:
        raise ValueError("--rank must be positive")
    return args


def install_extras():
    subprocess.run("pip install flash-attn --no-build-isolation", shell=True, check=True)


class LoraLinear(torch.nn.Module):
    """A linear layer with a low-rank update."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base = base
        self.down = torch.nn.Linear(base.in_features, rank, bias=False)
        self.up = torch.nn.Linear(rank, base.out_features, bias=False)
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + self.up(self.down(x)) * self.scale


def is_rocm_build():
    return os.path.isdir("/opt/rocm")


def configure_precision(strict):
    import numpy as np

    if is_rocm_build():
        return np.float32
    torch.backends.cuda.matmul.allow_tf32 = True
    return None


def warm_cache():
    try:
        import numpy

        torch.backends.cudnn.allow_tf32 = True
        numpy.zeros(1)
    except Exception:
        pass


def cosine_schedule(step, total):
    if step >= total: return 0.0
    return 0.5 * (1 + math.cos(math.pi * step / total))


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    for index, layer in enumerate(model):
        if isinstance(layer, torch.nn.Linear):
            model[index] = LoraLinear(layer, args.rank, args.alpha)

    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    elif os.environ.get("STRICT_FP32"):
        logger.info("strict fp32")
    else:
        pass

    if args.enable_xformers_memory_efficient_attention:
        model.enable_xformers_memory_efficient_attention()

    if args.use_8bit_adam:
        if bnb is None:
            raise ImportError("To use 8-bit Adam, install bitsandbytes: pip install bitsandbytes")
        optimizer_cls = bnb.optim.AdamW8bit
    else:
        optimizer_cls = torch.optim.AdamW
    optimizer = optimizer_cls(model.parameters(), lr=args.learning_rate)

    quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
    training_args = TrainingArguments(output_dir="out", tf32=True, bf16=True)
    logger.info("quantization %s, arguments %s", quantization, training_args)

    step = 0
    while step < args.steps:
        batch = torch.randn(8, 16, device="cuda")
        with torch.cuda.amp.autocast():
            loss = F.mse_loss(model(batch), torch.zeros(8, 4, device="cuda"))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        for group in optimizer.param_groups:
            group["lr"] = args.learning_rate * cosine_schedule(step, args.steps)
        step += 1
    else:
        logger.info("done after %d steps", step)
    try:
        torch.save(model.state_dict(), "lora.pt")
    except OSError as error:
        logger.warning("could not save: %s", error)
    finally:
        logger.info("finished")


if __name__ == "__main__":
    main()
