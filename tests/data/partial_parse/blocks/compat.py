"""Optional helpers, bound once for the package: a graph decorator and the fused attention."""

import torch

try:
    from torch._dynamo import allow_in_graph as maybe_allow_in_graph
except ImportError:

    def maybe_allow_in_graph(cls):
        return cls


try:
    from xformers.ops import memory_efficient_attention as fused_attention
except ImportError:
    fused_attention = None

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
