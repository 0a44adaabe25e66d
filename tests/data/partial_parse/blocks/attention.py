"""Attention blocks: a class decorated at module level with a re-exported decorator, a processor
calling xformers through a re-exported alias whose 4-D reshape is several statements before the
call, and a direct call (a sample written for the partial-parsing tests)."""

import math

import xformers

from .compat import fused_attention, maybe_allow_in_graph

LOG_SCALE = math.log(2.0)


def _scale(dim):
    return 1.0 / math.sqrt(dim)


@maybe_allow_in_graph
class Block:
    def __init__(self, heads):
        self.heads = heads

    def forward(self, hidden):
        return hidden * self.heads


class FusedProcessor:
    """Reshapes to (B, M, H, K) before calling the fused kernel through the package alias."""

    def __init__(self, heads):
        self.heads = heads

    def __call__(self, hidden, batch, length):
        head_dim = hidden.shape[-1] // self.heads
        query = hidden.view(batch, length, self.heads, head_dim)
        key = hidden.view(batch, length, self.heads, head_dim)
        value = hidden.view(batch, length, self.heads, head_dim)
        for _ in range(2):
            hidden = hidden * _scale(head_dim)
        out = fused_attention(query, key, value, attn_bias=None)
        return out.reshape(batch, length, -1)


def direct_attention(hidden):
    query = hidden.flatten(0, 1)
    return xformers.ops.memory_efficient_attention(query, query, query)


class Plain:
    def forward(self, hidden):
        total = 0
        for row in hidden:
            total += row.sum()
        return total * LOG_SCALE
