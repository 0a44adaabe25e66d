"""ROC502 (apex-amp): flags uses of `apex.amp` (`amp.initialize`, `amp.scale_loss`,
`amp.master_params`, …)."""

from __future__ import annotations

from migrator.api import Impact, Invalid, QualifiedCallRule, Severity, Valid

from ._shared import _data

_AMP = _data()["amp"]
_GENERIC = "use torch.autocast and torch.amp.GradScaler"


class ApexAmp(QualifiedCallRule):
    """
    ## What it does
    Flags uses of `apex.amp` (`amp.initialize`, `amp.scale_loss`, `amp.master_params`, …).

    ## Why it breaks on ROCm
    `apex.amp` was removed from NVIDIA/apex in May 2025 and survives only in ROCm/apex, which
    must be built from source. PyTorch's native `torch.amp` (autocast + GradScaler) replaces it
    on both vendors.

    ## Example
    ```python
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    ```

    ## Manual migration
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```
    O1 maps onto autocast. O2 (fp16 model with fp32 master weights) and O3 (pure fp16) have no
    direct equivalent: keep the model in fp32 under autocast, or cast it to bf16 (no scaler
    needed). Checkpoints with `amp.state_dict()` become `scaler.state_dict()`; gradient
    clipping needs `scaler.unscale_(optimizer)` first.

    ## References
    - NVIDIA/apex commit cb65b8ed (apex.amp removed); ROCm/apex README
    - https://docs.pytorch.org/docs/stable/amp.html
    """

    code = "ROC502"
    name = "apex-amp"
    category = "apex"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=2.0)
    message = "apex.amp needs a ROCm/apex build (removed from NVIDIA apex); migrate to torch.amp"
    fact = "§5 apex.amp row; [AP3][AP2]"
    #: Every ``apex.amp`` call, with the migration note of those the table names.
    calls = {
        f"{_AMP['prefix']}.*": f"`apex.amp.{{short}}` needs a ROCm/apex build: {_GENERIC}",
        **{
            f"{_AMP['prefix']}.{short}": f"`apex.amp.{{short}}` needs a ROCm/apex build: {note}"
            for short, note in _AMP["notes"].items()
        },
    }
    valid = [
        Valid("import torch\nscaler = torch.amp.GradScaler('cuda')\n"),
        Valid("from torch.cuda import amp\nwith amp.autocast():\n    pass\n"),
        Valid("def initialize(m, o):\n    return m, o\n\nmodel, opt = initialize(model, opt)\n"),
        Valid(  # behind a `find_spec` flag, torch AMP where apex is missing
            "import importlib.util\n"
            "import torch\n"
            "HAS_APEX = importlib.util.find_spec('apex') is not None\n"
            "if HAS_APEX:\n"
            "    from apex import amp\n\n"
            "def setup(model, optimizer):\n"
            "    if HAS_APEX:\n"
            "        return amp.initialize(model, optimizer, opt_level='O1'), None\n"
            "    return (model, optimizer), torch.amp.GradScaler('cuda')\n"
        ),
    ]
    invalid = [
        Invalid(
            "from apex import amp\n"
            "model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n",
            line=2,
            column=20,
        ),
        Invalid(
            "import apex\n"
            "with apex.amp.scale_loss(loss, optimizer) as scaled_loss:\n"
            "    scaled_loss.backward()\n"
        ),
        Invalid("from apex.amp import master_params\nclip(master_params(optimizer), 1.0)\n"),
    ]
