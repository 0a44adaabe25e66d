"""Decoder-only transformer with fused kernels on NVIDIA GPUs and pure-torch fallbacks."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False

try:
    import xformers.ops as xops
    HAS_XFORMERS = True
except ImportError:
    HAS_XFORMERS = False

try:
    from apex.normalization import FusedRMSNorm
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

# Max representable value of float8 e4m3 (H100 FP8 tensor cores).
FP8_MAX = 448.0


def default_dtype():
    """bf16 on Ampere+ GPUs, fp32 otherwise."""
    if torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0):
        return torch.bfloat16
    return torch.float32


def preferred_block_size():
    # A100 has 192KB smem per SM: larger tiles pay off for the prefill kernels.
    if torch.cuda.is_available() and "A100" in torch.cuda.get_device_name():
        return 128
    return 64


def quantize_fp8(w: torch.Tensor):
    """Per-tensor FP8 (e4m3) weight quantization for the H100 serving path."""
    scale = w.abs().max().clamp(min=1e-12) / FP8_MAX
    q = (w / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale


def dequantize_fp8(q: torch.Tensor, scale: torch.Tensor, dtype=torch.bfloat16):
    return q.to(dtype) * scale


class _TorchRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


def RMSNorm(dim, eps=1e-5):
    if HAS_APEX:
        return FusedRMSNorm(dim, eps=eps)
    return _TorchRMSNorm(dim, eps=eps)


def rotary_cos_sin(seq_len, head_dim, base=10000.0, device=None, dtype=torch.float32):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    # (1, S, 1, D) to broadcast over (B, S, H, D)
    return emb.cos()[None, :, None, :].to(dtype), emb.sin()[None, :, None, :].to(dtype)


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):
    return x * cos + _rotate_half(x) * sin


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, num_kv_heads, rope_theta=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden_size // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.rope_theta = rope_theta
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size, bias=False)

    def _math_attention(self, q, k, v):
        # q, k, v: (B, S, H, D) -> (B, S, H, D); causal, same semantics as flash_attn_func
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * self.scale
        s_q, s_k = scores.shape[-2], scores.shape[-1]
        mask = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device).tril(diagonal=s_k - s_q)
        scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1).to(v.dtype)
        return torch.matmul(probs, v).transpose(1, 2)

    def forward(self, x):
        bsz, seq_len, _ = x.shape
        q = self.q_proj(x).view(bsz, seq_len, self.num_heads, self.head_dim)
        k = self.k_proj(x).view(bsz, seq_len, self.num_kv_heads, self.head_dim)
        v = self.v_proj(x).view(bsz, seq_len, self.num_kv_heads, self.head_dim)
        cos, sin = rotary_cos_sin(seq_len, self.head_dim, self.rope_theta, x.device, q.dtype)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        if self.num_kv_heads != self.num_heads:
            rep = self.num_heads // self.num_kv_heads
            k = k.repeat_interleave(rep, dim=2)
            v = v.repeat_interleave(rep, dim=2)

        if HAS_FLASH_ATTN:
            out = flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=self.scale, causal=True)
        elif HAS_XFORMERS and q.is_cuda:
            out = xops.memory_efficient_attention(
                q, k, v, attn_bias=xops.LowerTriangularMask(), p=0.0, scale=self.scale
            )
        else:
            out = self._math_attention(q, k, v)
        return self.o_proj(out.reshape(bsz, seq_len, -1))


class MLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        kv_heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        self.input_norm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.attn = CausalSelfAttention(
            cfg.hidden_size, cfg.num_attention_heads, kv_heads, getattr(cfg, "rope_theta", 10000.0)
        )
        self.post_attn_norm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.mlp = MLP(cfg.hidden_size, cfg.intermediate_size)

    def forward(self, x):
        x = x + self.attn(self.input_norm(x))
        return x + self.mlp(self.post_attn_norm(x))


class TinyLM(nn.Module):
    """Llama-style causal LM built from llm_app modules; takes a transformers config."""

    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))
