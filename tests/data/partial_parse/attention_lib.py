"""Attention processors with optional xformers and onnxruntime back ends (a sample shaped like a
diffusion library's attention module, written for the partial-parsing tests)."""

from __future__ import annotations

import importlib.util
import math

import torch
import torch.nn.functional as F

if importlib.util.find_spec("xformers") is not None:
    import xformers
    import xformers.ops as xops
else:
    xformers = None

_PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]


def is_xformers_available():
    return xformers is not None


def _scaled(q, k, v, scale=None):
    scale = scale if scale is not None else 1 / math.sqrt(q.shape[-1])
    weights = torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1)
    return weights @ v


class AttnProcessor:
    """Plain attention."""

    def __call__(self, attn, hidden_states):
        q = attn.to_q(hidden_states)
        k = attn.to_k(hidden_states)
        v = attn.to_v(hidden_states)
        return _scaled(q, k, v)


class XFormersAttnProcessor:
    """Memory-efficient attention through xformers."""

    def __init__(self, attention_op=None):
        self.attention_op = attention_op

    def __call__(self, attn, hidden_states):
        q = attn.to_q(hidden_states)
        k = attn.to_k(hidden_states)
        v = attn.to_v(hidden_states)
        out = xops.memory_efficient_attention(q, k, v, op=self.attention_op)
        return attn.to_out(out)


class SdpaProcessor:
    def __call__(self, attn, hidden_states):
        q = attn.to_q(hidden_states)
        k = attn.to_k(hidden_states)
        v = attn.to_v(hidden_states)
        if q.is_cuda and torch.version.hip:
            return _scaled(q, k, v)
        return F.scaled_dot_product_attention(q, k, v)


class Pipeline:
    """A toy pipeline."""

    def __init__(self, unet, vae):
        self.unet = unet
        self.vae = vae

    @property
    def device(self):
        return next(self.unet.parameters()).device

    def enable_xformers_memory_efficient_attention(self, attention_op=None):
        self.unet.set_attn_processor(XFormersAttnProcessor(attention_op))

    def enable_fast_attention(self):
        if is_xformers_available():
            self.unet.enable_xformers_memory_efficient_attention()
        else:
            self.unet.set_attn_processor(SdpaProcessor())

    def session(self, path):
        import onnxruntime as ort

        return ort.InferenceSession(path, providers=_PROVIDERS)

    def export_session(self, path):
        import onnxruntime as ort

        return ort.InferenceSession(path, providers=["CUDAExecutionProvider"])

    @torch.no_grad()
    def __call__(self, latents, steps=10):
        for _ in range(steps):
            latents = self.unet(latents)
        return self.vae(latents)
