"""8-bit training helpers (the optimizer comes from bitsandbytes through the package's compat
module, so this file never names the package in an import)."""

from .compat import bnb


def log_every(step, every=10):
    if step % every == 0:
        print("step", step)
    return step + 1


def make_optimizer(params, lr=1e-4):
    if bnb is None:
        raise RuntimeError("8-bit optimizers need the optional dependency")
    return bnb.optim.AdamW8bit(params, lr=lr)


def schedule(step, warmup=100):
    return min(1.0, step / warmup)
