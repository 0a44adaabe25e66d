"""The apex rewrites (ROC500 norms, ROC501 FusedAdam) compute what apex computes: the rule's own
fixed text is executed on CPU and compared with apex's documented formulas in plain torch."""

from __future__ import annotations

import textwrap

import pytest
from migrator.rules.nvidia_apex.apex_fused_adam import ApexFusedAdam
from migrator.rules.nvidia_apex.apex_fused_norm import ApexFusedNorm

from migrator.engine.engine import analyze
from migrator.model import Applicability
from tests.lazy_modules import LazyModule

torch = LazyModule("torch")


def rewritten(rule, source: str) -> dict:
    source = textwrap.dedent(source)
    analysis = analyze(source, "snippet.py", "python", (rule,), fix=Applicability.UNSAFE)
    assert analysis.fix_error is None, analysis.fix_error
    assert analysis.new_text is not None and "apex" not in analysis.new_text, analysis.new_text
    namespace: dict = {}
    exec(compile(analysis.new_text, "snippet.py", "exec"), namespace)
    return namespace


NORMS = """
    import torch
    from apex.normalization import FusedLayerNorm, FusedRMSNorm

    def make(dim):
        return FusedRMSNorm(dim), FusedRMSNorm(dim, eps=1e-3), FusedLayerNorm(dim)
"""


def apex_rms_norm(x, weight, eps):
    """apex FusedRMSNorm: x * rsqrt(mean(x**2 over the normalized dims) + eps) * weight."""
    x64 = x.double()
    return (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * weight.double()).float()


def apex_layer_norm(x, weight, bias, eps):
    x64 = x.double()
    mean = x64.mean(-1, keepdim=True)
    var = x64.var(-1, unbiased=False, keepdim=True)
    return ((x64 - mean) / torch.sqrt(var + eps) * weight.double() + bias.double()).float()


def test_norms_match_apex_formulas():
    make = rewritten(ApexFusedNorm, NORMS)["make"]
    generator = torch.Generator().manual_seed(0)
    dim = 64
    # small-magnitude inputs make the eps term matter: torch's RMSNorm default eps
    # (finfo(float32).eps ~ 1.2e-7) would differ visibly from apex's 1e-5 here
    x = torch.randn(3, 5, dim, generator=generator) * 3e-3
    rms, rms_loose, layer = make(dim)
    with torch.no_grad():
        for module in (rms, rms_loose, layer):
            module.weight.copy_(torch.randn(dim, generator=generator))
        layer.bias.copy_(torch.randn(dim, generator=generator))
    assert sorted(rms.state_dict()) == ["weight"]
    assert sorted(layer.state_dict()) == ["bias", "weight"]
    torch.testing.assert_close(rms(x), apex_rms_norm(x, rms.weight, 1e-5), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(
        rms_loose(x), apex_rms_norm(x, rms_loose.weight, 1e-3), atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(
        layer(x), apex_layer_norm(x, layer.weight, layer.bias, 1e-5), atol=1e-5, rtol=1e-5
    )
    # the explicit eps is what makes it match: torch's default differs measurably
    default = torch.nn.RMSNorm(dim)
    with torch.no_grad():
        default.weight.copy_(rms.weight)
    assert (default(x) - apex_rms_norm(x, rms.weight, 1e-5)).abs().max() > 1e-3


ADAM = """
    import torch
    from apex.optimizers import FusedAdam

    def adamw(params):
        return FusedAdam(params, lr=1e-2, betas=(0.8, 0.9), eps=1e-6)

    def adam_l2(params):
        return FusedAdam(params, 1e-2, True, (0.8, 0.9), 1e-6, False, 0.1)
"""


def apex_adam_steps(param, grads, lr, betas, eps, weight_decay, adam_w_mode):
    """apex FusedAdam's update (multi_tensor_adam with bias correction)."""
    p = param.detach().double().clone()
    m = torch.zeros_like(p)
    v = torch.zeros_like(p)
    beta1, beta2 = betas
    for step, grad in enumerate(grads, start=1):
        g = grad.double()
        if not adam_w_mode:
            g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**step)
        v_hat = v / (1 - beta2**step)
        update = m_hat / (v_hat.sqrt() + eps)
        if adam_w_mode:
            update = update + weight_decay * p
        p = p - lr * update
    return p.float()


@pytest.mark.parametrize(
    ("factory", "adam_w_mode", "weight_decay"), [("adamw", True, 0.0), ("adam_l2", False, 0.1)]
)
def test_fused_adam_rewrite_matches_apex_update(factory, adam_w_mode, weight_decay):
    make = rewritten(ApexFusedAdam, ADAM)[factory]
    generator = torch.Generator().manual_seed(1)
    start = torch.randn(32, generator=generator)
    grads = [torch.randn(32, generator=generator) for _ in range(4)]
    param = torch.nn.Parameter(start.clone())
    optimizer = make([param])
    for grad in grads:
        param.grad = grad.clone()
        optimizer.step()
    expected = apex_adam_steps(start, grads, 1e-2, (0.8, 0.9), 1e-6, weight_decay, adam_w_mode)
    torch.testing.assert_close(param.detach(), expected, atol=1e-5, rtol=1e-5)
