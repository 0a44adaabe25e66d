"""nanoGPT's ``bench.py``, unchanged on verify's original copy, with one planted change on its
migrated copy (issue #52: does ``migrate verify`` catch a slowdown and a small loss change?).

Copied into a nanoGPT checkout (karpathy/nanoGPT @ 3adf61e) next to ``bench.py`` and run as
``python3 variant_bench.py --real_data=False`` (arguments go to nanoGPT's configurator).
``NANOGPT_VARIANT`` picks the change, applied only when the working folder is named
``migrated`` (verify's migrated copy), so the original copy always runs nanoGPT as it is:

- ``identical``: no change.
- ``slow``: after each optimizer step, wait for the GPU, then sleep ``NANOGPT_SLOW`` (0.3) times
  the step's own time since the previous step ended: every step is 30 % longer.
- ``loss``: the model's forward returns its loss times ``NANOGPT_LOSS_SCALE`` (1.005); the
  wrapped forward is what ``torch.compile`` traces, so the change runs compiled.

Without a CUDA device (a dry run on CPU with ``--device=cpu``), ``torch.cuda.synchronize``,
which ``bench.py`` calls unconditionally, is made a no-op.
"""

import os
import runpy
import sys
import time

import torch

variant = os.environ.get("NANOGPT_VARIANT", "identical")
migrated = os.path.basename(os.getcwd()) == "migrated"
if variant not in ("identical", "slow", "loss"):
    sys.exit(f"unknown NANOGPT_VARIANT {variant!r}")

if not torch.cuda.is_available():
    torch.cuda.synchronize = lambda *args, **kwargs: None

if migrated and variant == "slow":
    factor = float(os.environ.get("NANOGPT_SLOW", "0.3"))
    original_step = torch.optim.AdamW.step
    last_end = [0.0]

    def slow_step(self, *args, **kwargs):
        out = original_step(self, *args, **kwargs)
        torch.cuda.synchronize()
        now = time.perf_counter()
        if last_end[0]:
            time.sleep(factor * (now - last_end[0]))
        last_end[0] = time.perf_counter()
        return out

    torch.optim.AdamW.step = slow_step

if migrated and variant == "loss":
    import model as nanogpt_model

    scale = float(os.environ.get("NANOGPT_LOSS_SCALE", "1.005"))
    original_forward = nanogpt_model.GPT.forward

    def scaled_forward(self, idx, targets=None):
        logits, loss = original_forward(self, idx, targets)
        return logits, (None if loss is None else loss * scale)

    nanogpt_model.GPT.forward = scaled_forward

if migrated:
    print(f"variant: {variant} (planted in the migrated copy)", file=sys.stderr)
sys.argv = ["bench.py", *sys.argv[1:]]
runpy.run_path("bench.py", run_name="__main__")
