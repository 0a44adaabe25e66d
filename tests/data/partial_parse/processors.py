"""Attention processors calling xformers from methods, and a training entry point whose long body
mentions TF32 in a comment (a sample written for the partial-parsing tests: the function around
each xformers call is read whole, a trigger in a comment keeps no function whole)."""

import argparse

import torch

try:
    import xformers.ops as xops
except ImportError:
    xops = None


class FourDimProcessor:
    """Reshapes to (B, M, H, K) several statements before the call: the rewrite needs them."""

    def __init__(self, heads):
        self.heads = heads

    def __call__(self, hidden, batch, length):
        head_dim = hidden.shape[-1] // self.heads
        query = hidden.view(batch, length, self.heads, head_dim)
        key = hidden.view(batch, length, self.heads, head_dim)
        value = hidden.view(batch, length, self.heads, head_dim)
        for _ in range(2):
            hidden = hidden * 1.0
        out = xops.memory_efficient_attention(query, key, value, attn_bias=None, p=0.0)
        return out.reshape(batch, length, -1)


class ThreeDimProcessor:
    def __call__(self, attn, hidden):
        query = attn.head_to_batch_dim(hidden)
        return xops.memory_efficient_attention(query, query, query)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--steps", type=int, default=10)
    return parser.parse_args()


def main(args):
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(args.steps):
        loss = model(torch.zeros(4)).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    # TF32 speeds up matmuls on Ampere (see the tf32 notes)
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
    for step in range(args.steps):
        with torch.no_grad():
            model(torch.ones(4))
    total = 0
    for parameter in model.parameters():
        total += parameter.numel()
    print(total)
    return model


if __name__ == "__main__":
    main(parse_args())
