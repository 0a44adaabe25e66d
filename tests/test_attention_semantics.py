"""The flash-attn (ROC400) and xformers (ROC410) rewrites compute what the original libraries
compute: the rule's own fixed text is executed with torch on CPU and compared with plain-torch
references written from each library's documented semantics."""

from __future__ import annotations

import contextlib
import math
import sys
import textwrap
import types
import warnings

import pytest
from migrator.rules.flash_attn.flash_attn_func_call import FlashAttnFunc
from migrator.rules.xformers_attn.xformers_memory_efficient_attention import (
    XformersMemoryEfficientAttention,
)

from migrator.engine.engine import analyze
from migrator.model import Applicability
from tests.lazy_modules import LazyModule

torch = LazyModule("torch")

#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_attention_semantics")


ATOL = 1e-5


# --------------------------------------------------------------------------- references


def flash_reference(q, k, v, softmax_scale=None, causal=False):
    """flash_attn_func semantics (flash-attn ≥ 2.1 docstring): (B, S, H, D) tensors, scale
    1/sqrt(D) by default, causal mask aligned to the bottom-right corner (query i sees key j iff
    j <= i + Sk - Sq), MQA/GQA by head grouping (query head h uses key/value head
    h // (Hq // Hk)), rows with no visible key return zeros, no dropout."""
    batch, seq_q, heads_q, dim = q.shape
    seq_k, heads_k = k.shape[1], k.shape[2]
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(dim)
    group = heads_q // heads_k
    kv_head = torch.arange(heads_q, device=q.device) // group
    k = k[:, :, kv_head]  # (B, Sk, Hq, D)
    v = v[:, :, kv_head]
    scores = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double()) * scale
    if causal:
        i = torch.arange(seq_q, device=q.device)[:, None]
        j = torch.arange(seq_k, device=q.device)[None, :]
        visible = j <= i + seq_k - seq_q
        scores = scores.masked_fill(~visible, float("-inf"))
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # fully masked rows -> 0
    return torch.einsum("bhqk,bkhd->bqhd", probs, v.double()).to(q.dtype)


def xformers_reference(q, k, v, bias=None, scale=None):
    """memory_efficient_attention semantics: (B, M, H, K) tensors, scale 1/sqrt(K) by default;
    ``bias`` is "top-left" (LowerTriangularMask: j <= i), "bottom-right"
    (LowerTriangularFromBottomRightMask: j <= i + Mk - Mq), or an additive (B, H, Mq, Mk) tensor."""
    seq_q, seq_k, dim = q.shape[1], k.shape[1], q.shape[3]
    scale = scale if scale is not None else 1.0 / math.sqrt(dim)
    scores = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double()) * scale
    i = torch.arange(seq_q, device=q.device)[:, None]
    j = torch.arange(seq_k, device=q.device)[None, :]
    if isinstance(bias, str):
        visible = j <= i if bias == "top-left" else j <= i + seq_k - seq_q
        scores = scores.masked_fill(~visible, float("-inf"))
    elif bias is not None:
        scores = scores + bias.double()
    probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return torch.einsum("bhqk,bkhd->bqhd", probs, v.double()).to(q.dtype)


# --------------------------------------------------------------------------- stand-in packages


def _flash_attn_stub(calls: list[str]) -> types.ModuleType:
    """A ``flash_attn`` package whose functions compute ``flash_reference`` (what the vendor
    branch of the dispatch calls where flash-attn is installed)."""

    def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **_):
        assert dropout_p == 0.0
        calls.append("flash_attn_func")
        return flash_reference(q, k, v, softmax_scale=softmax_scale, causal=causal).contiguous()

    def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, **_):
        calls.append("flash_attn_qkvpacked_func")
        q, k, v = qkv.unbind(2)
        return flash_reference(q, k, v, softmax_scale=softmax_scale, causal=causal).contiguous()

    def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, **_):
        calls.append("flash_attn_kvpacked_func")
        k, v = kv.unbind(2)
        return flash_reference(q, k, v, softmax_scale=softmax_scale, causal=causal).contiguous()

    module = types.ModuleType("flash_attn")
    module.flash_attn_func = flash_attn_func
    module.flash_attn_qkvpacked_func = flash_attn_qkvpacked_func
    module.flash_attn_kvpacked_func = flash_attn_kvpacked_func
    return module


def _xformers_stub(calls: list[str]) -> dict[str, types.ModuleType]:
    """``xformers``, ``xformers.ops`` and ``xformers.ops.fmha`` computing ``xformers_reference``."""

    class LowerTriangularMask:
        alignment = "top-left"

    class LowerTriangularFromBottomRightMask:
        alignment = "bottom-right"

    def memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, scale=None):
        assert p == 0.0
        calls.append("memory_efficient_attention")
        bias = getattr(attn_bias, "alignment", attn_bias)
        return xformers_reference(query, key, value, bias, scale=scale)

    package = types.ModuleType("xformers")
    ops = types.ModuleType("xformers.ops")
    fmha = types.ModuleType("xformers.ops.fmha")
    fmha.attn_bias = types.SimpleNamespace(
        LowerTriangularMask=LowerTriangularMask,
        LowerTriangularFromBottomRightMask=LowerTriangularFromBottomRightMask,
    )
    ops.memory_efficient_attention = memory_efficient_attention
    ops.LowerTriangularMask = LowerTriangularMask
    ops.fmha = fmha
    package.ops = ops
    return {"xformers": package, "xformers.ops": ops, "xformers.ops.fmha": fmha}


@contextlib.contextmanager
def packages(installed: dict[str, types.ModuleType | None]):
    """``sys.modules`` with ``installed`` in place (None: the import raises ImportError)."""
    saved = {name: sys.modules.get(name, _MISSING) for name in installed}
    sys.modules.update(installed)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is _MISSING:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


_MISSING = object()


# --------------------------------------------------------------------------- running the rule


class Rewritten:
    """The fixed module executed twice: with the vendor package installed (a stand-in computing
    the library's documented semantics) and without it (the import raises ImportError)."""

    def __init__(self, rule, source: str) -> None:
        source = textwrap.dedent(source)
        analysis = analyze(source, "snippet.py", "python", (rule,), fix=Applicability.UNSAFE)
        assert analysis.fix_error is None, analysis.fix_error
        assert analysis.new_text is not None, f"{rule.code} did not rewrite:\n{source}"
        self.text = analysis.new_text
        self.calls: list[str] = []
        if rule is FlashAttnFunc:
            vendor: dict[str, types.ModuleType | None] = {
                "flash_attn": _flash_attn_stub(self.calls)
            }
        else:
            vendor = dict(_xformers_stub(self.calls))
        code = compile(self.text, "snippet.py", "exec")
        self.vendor: dict = {}
        with packages(vendor):
            exec(code, self.vendor)
        self.portable: dict = {}
        with packages(dict.fromkeys(vendor)):
            exec(code, self.portable)

    def both(self, name: str):
        """The function ``name`` of each run: (vendor, portable)."""
        return self.vendor[name], self.portable[name]


def rand(*shape, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float32)


# (B, Sq, Sk, Hq, Hk, D): equal lengths, chunked prefill (Sq < Sk), decode (Sq = 1), GQA, MQA
SHAPES = [
    (2, 7, 7, 4, 4, 16),
    (2, 5, 11, 4, 4, 8),
    (3, 1, 9, 4, 4, 16),
    (2, 6, 6, 8, 2, 16),
    (1, 3, 10, 6, 2, 32),
    (2, 1, 5, 4, 1, 8),
]

FLASH_PLAIN = """
    import torch
    import torch.nn.functional as F
    from flash_attn import flash_attn_func

    def positional(q, k, v, scale):
        return flash_attn_func(q, k, v, 0.0, scale, True)

    def keywords(q, k, v):
        return flash_attn_func(q=q, k=k, v=v, causal=True, window_size=(-1, -1))

    def not_causal(q, k, v, scale):
        return flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale)

    def dynamic(q, k, v, is_causal, training=False):
        return flash_attn_func(q, k, v, 0.1 if training else 0.0, causal=is_causal)
"""


@pytest.fixture(scope="module")
def flash_plain():
    return Rewritten(FlashAttnFunc, FLASH_PLAIN)


def test_flash_attn_dispatch_keeps_the_call_and_makes_the_import_optional(flash_plain):
    """NVIDIA keeps flash-attn (the vendor run called the stand-in, once per call below); the
    module imports without flash_attn (the portable run executed at all)."""
    assert "try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n" in (
        flash_plain.text
    )
    assert flash_plain.text.count("if flash_attn_func is not None") == 4
    q, k, v = rand(1, 4, 2, 8, seed=20), rand(1, 4, 2, 8, seed=21), rand(1, 4, 2, 8, seed=22)
    vendor, portable = flash_plain.both("keywords")
    before = len(flash_plain.calls)
    vendor(q, k, v)
    assert flash_plain.calls[before:] == ["flash_attn_func"]
    portable(q, k, v)
    assert len(flash_plain.calls) == before + 1
    assert portable.__globals__["flash_attn_func"] is None


@pytest.mark.parametrize(("b", "sq", "sk", "hq", "hk", "d"), SHAPES)
@pytest.mark.parametrize("side", [0, 1], ids=["flash-attn-installed", "without-flash-attn"])
def test_flash_attn_func_matches_flash_attn_semantics(flash_plain, side, b, sq, sk, hq, hk, d):
    """Both branches of the dispatch equal flash-attn's semantics in fp32 (atol 1e-5, rtol 0;
    the reference runs in fp64)."""
    q = rand(b, sq, hq, d, seed=1)
    k = rand(b, sk, hk, d, seed=2)
    v = rand(b, sk, hk, d, seed=3)
    scale = 0.37
    run = {name: flash_plain.both(name)[side] for name in ("positional", "keywords", "not_causal")}
    dynamic = flash_plain.both("dynamic")[side]
    expected_causal = flash_reference(q, k, v, softmax_scale=scale, causal=True)
    out = run["positional"](q, k, v, scale)
    torch.testing.assert_close(out, expected_causal, atol=ATOL, rtol=0)
    torch.testing.assert_close(
        run["keywords"](q, k, v), flash_reference(q, k, v, causal=True), atol=ATOL, rtol=0
    )
    torch.testing.assert_close(
        run["not_causal"](q, k, v, scale),
        flash_reference(q, k, v, softmax_scale=scale),
        atol=ATOL,
        rtol=0,
    )
    for causal in (True, False):
        torch.testing.assert_close(
            dynamic(q, k, v, causal), flash_reference(q, k, v, causal=causal), atol=ATOL, rtol=0
        )
    assert out.shape == (b, sq, hq, d) and out.is_contiguous()


@pytest.mark.parametrize(("b", "sq", "sk", "hq", "hk", "d"), SHAPES)
def test_flash_attn_dispatch_branches_agree(flash_plain, b, sq, sk, hq, hk, d):
    """The SDPA branch against the flash-attn branch directly, on the same inputs."""
    q, k, v = rand(b, sq, hq, d, seed=30), rand(b, sk, hk, d, seed=31), rand(b, sk, hk, d, seed=32)
    vendor, portable = flash_plain.both("positional")
    torch.testing.assert_close(portable(q, k, v, 0.2), vendor(q, k, v, 0.2), atol=ATOL, rtol=0)


def test_flash_attn_func_more_queries_than_keys_gives_zero_rows(flash_plain):
    """Sq > Sk with causal: rows that see no key are zero in flash-attn; SDPA's math kernel
    (used on CPU) agrees, though causal_lower_right warns about NaNs."""
    q, k, v = rand(1, 6, 2, 8, seed=4), rand(1, 3, 2, 8, seed=5), rand(1, 3, 2, 8, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = flash_plain.portable["keywords"](q, k, v)
    torch.testing.assert_close(out, flash_reference(q, k, v, causal=True), atol=ATOL, rtol=0)


FLASH_PACKED = """
    import torch
    from flash_attn import flash_attn_qkvpacked_func, flash_attn_kvpacked_func

    def qkv_packed(qkv, causal):
        return flash_attn_qkvpacked_func(qkv, 0.0, None, causal)

    def kv_packed(q, kv, scale):
        return flash_attn_kvpacked_func(q, kv, softmax_scale=scale, causal=True)
"""


@pytest.fixture(scope="module")
def flash_packed():
    return Rewritten(FlashAttnFunc, FLASH_PACKED)


@pytest.mark.parametrize(("b", "sq", "sk", "hq", "hk", "d"), SHAPES)
@pytest.mark.parametrize("side", [0, 1], ids=["flash-attn-installed", "without-flash-attn"])
def test_packed_variants_match_flash_attn_semantics(flash_packed, side, b, sq, sk, hq, hk, d):
    kv_packed = flash_packed.both("kv_packed")[side]
    qkv_packed = flash_packed.both("qkv_packed")[side]
    q = rand(b, sq, hq, d, seed=7)
    kv = rand(b, sk, 2, hk, d, seed=8)
    expected = flash_reference(q, kv[:, :, 0], kv[:, :, 1], softmax_scale=0.5, causal=True)
    torch.testing.assert_close(kv_packed(q, kv, 0.5), expected, atol=ATOL, rtol=0)
    qkv = rand(b, sk, 3, hq, d, seed=9)
    for causal in (True, False):
        expected = flash_reference(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=causal)
        torch.testing.assert_close(qkv_packed(qkv, causal), expected, atol=ATOL, rtol=0)


XFORMERS = """
    import torch
    import xformers.ops as xops
    from xformers.ops import fmha

    def top_left(x_q, x_k, x_v, b, sq, sk, h, d, scale):
        q = x_q.view(b, sq, h, d)
        k = x_k.view(b, sk, h, d)
        v = x_v.view(b, sk, h, d)
        return xops.memory_efficient_attention(
            q, k, v, attn_bias=xops.LowerTriangularMask(), scale=scale
        )

    def bottom_right(x_q, x_k, x_v, b, sq, sk, h, d):
        q = x_q.view(b, sq, h, d)
        k = x_k.view(b, sk, h, d)
        v = x_v.view(b, sk, h, d)
        return xops.memory_efficient_attention(
            q, k, v, fmha.attn_bias.LowerTriangularFromBottomRightMask(), 0.0
        )

    def tensor_bias(x_q, x_k, x_v, b, sq, sk, h, d, bias):
        q = x_q.view(b, sq, h, d)
        k = x_k.view(b, sk, h, d)
        v = x_v.view(b, sk, h, d)
        return xops.memory_efficient_attention(q, k, v, bias, p=0.0)

    def no_bias(x_q, x_k, x_v, b, sq, sk, h, d):
        q = x_q.view(b, sq, h, d)
        k = x_k.view(b, sk, h, d)
        v = x_v.view(b, sk, h, d)
        return xops.memory_efficient_attention(query=q, key=k, value=v, attn_bias=None)
"""


@pytest.fixture(scope="module")
def xformers_fixed():
    return Rewritten(XformersMemoryEfficientAttention, XFORMERS)


XFORMERS_SHAPES = [(2, 7, 7, 4, 16), (2, 5, 9, 2, 8), (1, 1, 6, 3, 16)]
XFORMERS_FUNCTIONS = ("top_left", "bottom_right", "tensor_bias", "no_bias")


def test_xformers_dispatch_keeps_the_call_where_xformers_imports(xformers_fixed):
    assert "try:\n    import xformers.ops as xops\nexcept ImportError:\n    xops = None" in (
        xformers_fixed.text
    )
    shape = (rand(1, 3, 16, seed=40), rand(1, 3, 16, seed=41), rand(1, 3, 16, seed=42))
    vendor, portable = xformers_fixed.both("no_bias")
    before = len(xformers_fixed.calls)
    vendor(*shape, 1, 3, 3, 2, 8)
    portable(*shape, 1, 3, 3, 2, 8)
    assert xformers_fixed.calls[before:] == ["memory_efficient_attention"]


@pytest.mark.parametrize(("b", "sq", "sk", "h", "d"), XFORMERS_SHAPES)
@pytest.mark.parametrize("side", [0, 1], ids=["xformers-installed", "without-xformers"])
def test_xformers_rewrite_matches_xformers_semantics(xformers_fixed, side, b, sq, sk, h, d):
    flat_q = rand(b, sq, h * d, seed=10)
    flat_k = rand(b, sk, h * d, seed=11)
    flat_v = rand(b, sk, h * d, seed=12)
    q, k, v = (t.view(b, -1, h, d) for t in (flat_q, flat_k, flat_v))
    shape = (flat_q, flat_k, flat_v, b, sq, sk, h, d)
    run = {name: xformers_fixed.both(name)[side] for name in XFORMERS_FUNCTIONS}
    torch.testing.assert_close(
        run["top_left"](*shape, 0.3),
        xformers_reference(q, k, v, "top-left", scale=0.3),
        atol=ATOL,
        rtol=0,
    )
    torch.testing.assert_close(
        run["bottom_right"](*shape),
        xformers_reference(q, k, v, "bottom-right"),
        atol=ATOL,
        rtol=0,
    )
    bias = rand(b, h, sq, sk, seed=13)
    torch.testing.assert_close(
        run["tensor_bias"](*shape, bias),
        xformers_reference(q, k, v, bias),
        atol=ATOL,
        rtol=0,
    )
    torch.testing.assert_close(
        run["no_bias"](*shape), xformers_reference(q, k, v), atol=ATOL, rtol=0
    )


def test_top_left_and_bottom_right_differ_when_lengths_differ(xformers_fixed):
    """Guards the test itself: with Sq < Sk the two causal alignments give different outputs."""
    b, sq, sk, h, d = 1, 3, 7, 2, 8
    shape = (rand(b, sq, h * d, seed=14), rand(b, sk, h * d, seed=15), rand(b, sk, h * d, seed=16))
    top = xformers_fixed.portable["top_left"](*shape, b, sq, sk, h, d, None)
    bottom = xformers_fixed.portable["bottom_right"](*shape, b, sq, sk, h, d)
    assert (top - bottom).abs().max() > 1e-3
