"""A compiled litgpt training loop for ``migrate verify`` on a GPU (copied into a litgpt checkout).

It trains litgpt's own ``GPT`` (``litgpt.model``, config ``$SMOKE_MODEL``, default pythia-160m)
on a fixed random batch with AdamW under bf16 autocast and ``torch.compile``, and prints what a
user's script prints: ``k/N loss: X``, ``time per iteration: Y ms`` and ``tokens/s: Z``.
"""

import os
import time

import torch
import torch.nn.functional as F
from litgpt.config import Config
from litgpt.model import GPT


def main() -> None:
    steps = int(os.environ.get("SMOKE_STEPS", "30"))
    batch = int(os.environ.get("SMOKE_BATCH", "16"))
    compiled = os.environ.get("SMOKE_COMPILE", "1") == "1"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(1337)
    config = Config.from_name(os.environ.get("SMOKE_MODEL", "pythia-160m"))
    seq = min(int(os.environ.get("SMOKE_SEQ", "512")), config.block_size)
    with torch.device(device):
        model = GPT(config)
    model.max_seq_length = seq
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=device == "cuda")
    forward = torch.compile(model) if compiled else model
    generator = torch.Generator().manual_seed(0)
    data = torch.randint(0, config.padded_vocab_size, (batch, seq + 1), generator=generator)
    data = data.to(device)
    inputs, targets = data[:, :-1], data[:, 1:]
    for step in range(1, steps + 1):
        start = time.perf_counter()
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            logits = forward(inputs)
        loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        value = loss.item()  # synchronises
        elapsed = time.perf_counter() - start
        print(f"{step}/{steps} loss: {value:.4f}")
        print(f"time per iteration: {elapsed * 1000:.2f} ms")
        print(f"tokens/s: {batch * seq / elapsed:.0f}")


if __name__ == "__main__":
    main()
