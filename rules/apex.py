"""ROC50x: NVIDIA apex fused modules, optimizers, amp and imports (category ``apex``)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.astutil import unused_import_candidates
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, Valid
from migrator.ruledata import load_table

from ._arguments import as_keyword, as_positional, bind_arguments, new_keyword, relayout
from ._imports import (
    guarded_imports,
    imported_modules,
    matches_package,
    non_call_references,
    torch_ref,
)
from ._literals import is_literal, literal_from_text


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("apex")
    return data


class _ApexRewrite(PythonRule):
    """Shared reporting for the apex → torch rewrites: import removal and the check that the
    apex class is not also referenced outside calls (``isinstance``), where no fix is offered."""

    abstract = True

    def _report_fix(
        self,
        node: cst.Call,
        qualified: str,
        replacement: cst.CSTNode,
        imports: list[tuple[str, str | None]],
        message: str,
    ) -> None:
        if non_call_references(self.ctx.qualname, self.ctx.module, qualified):
            # an ``isinstance(m, FusedLayerNorm)`` left behind would stop matching the new
            # module on NVIDIA too, and keep the module importing apex
            self.report(
                node,
                message=(
                    f"{message}; not rewritten: `{qualified.rsplit('.', 1)[-1]}` is also used "
                    "outside calls (isinstance?); change those uses together with the calls"
                ),
            )
            return
        self.report(
            node,
            message=message,
            replacement=replacement,
            imports=imports,
            remove_imports=unused_import_candidates(self.ctx, node.func, "apex"),
        )


class ApexFusedNorm(_ApexRewrite):
    """
    ## What it does
    Flags `apex.normalization.FusedLayerNorm` and `FusedRMSNorm` and rewrites them to
    `torch.nn.LayerNorm` / `torch.nn.RMSNorm`.

    ## Why it breaks on ROCm
    apex has no ROCm wheel: it comes from a source build of ROCm/apex (or AMD's `rocm/pytorch`
    containers, which include it). PyPI's `apex` is an unrelated package. PyTorch's own
    normalization modules do the same computation on ROCm with no extra build.

    ## Example
    ```python
    from apex.normalization import FusedLayerNorm, FusedRMSNorm

    ln = FusedLayerNorm(hidden, eps=1e-5)
    rms = FusedRMSNorm(hidden)
    ```

    ## Fix
    ```python
    import torch

    ln = torch.nn.LayerNorm(hidden, eps=1e-5)
    rms = torch.nn.RMSNorm(hidden, eps=1e-5)
    ```
    The first three parameters (`normalized_shape`, `eps`, `elementwise_affine`) have the same
    order and meaning. `FusedRMSNorm` always gets an explicit `eps`: apex defaults to 1e-5 while
    `torch.nn.RMSNorm` defaults to `torch.finfo(dtype).eps`. apex's `memory_efficient=` (what is
    saved for the backward pass) is dropped. Parameter names (`weight`, `bias`) match, so
    checkpoints load unchanged. Needs torch ≥ 2.4 for `RMSNorm`.

    ## Fix safety
    Unsafe, though the formula is the same (LayerNorm: (x − mean)/sqrt(var + eps)·w + b;
    RMSNorm: x·rsqrt(mean(x²) + eps)·w; checked in `tests/test_apex_semantics.py`), the defaults
    match once eps is explicit and the state-dict keys are the same: under `torch.autocast`
    apex casts input and weight to the autocast dtype and returns that dtype, while PyTorch
    returns float32 from `LayerNorm` (its CUDA autocast runs `layer_norm` in float32) and from
    either norm given float32 input (measured on an H200, torch 2.11, bf16 autocast). Training
    code under autocast then carries float32 activations where it had fp16/bf16 ones (more
    memory, slightly different rounding). Outside autocast the output dtype is the input's in
    both libraries. No fix where the apex class is also used outside calls (`isinstance(m,
    FusedLayerNorm)` in a weight-decay filter): that check would stop matching the new module,
    on NVIDIA too.

    ## References
    - NVIDIA/apex `apex/normalization/fused_layer_norm.py`; ROCm/apex README
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.RMSNorm.html
    """

    code = "ROC500"
    fix_requires = {"torch": "2.4"}  # torch.nn.RMSNorm
    name = "apex-fused-norm"
    category = "apex"
    severity = Severity.WARNING
    message = "apex needs a ROCm/apex source build; torch.nn has the same normalization"
    fix_title = "Use `torch.nn.LayerNorm` / `torch.nn.RMSNorm` (explicit eps)"
    applicability = Applicability.UNSAFE
    fact = "§5 apex.normalization rows; [AP1][AP2][N1]"
    triggers = ("apex",)
    effort_hours = 0.2
    valid = [
        Valid("import torch\nnorm = torch.nn.RMSNorm(512, eps=1e-5)\n"),
        Valid("class FusedRMSNorm:\n    pass\n\nnorm = FusedRMSNorm(512)\n"),
        Valid("# from apex.normalization import FusedLayerNorm\nx = 'FusedLayerNorm(512)'\n"),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "from apex.normalization import FusedLayerNorm\n\n"
            "ln = FusedLayerNorm(hidden, eps=1e-6)\n",
            fixed="import torch\n\nln = torch.nn.LayerNorm(hidden, eps=1e-6)\n",
            line=4,
            column=6,
        ),
        Invalid(
            "import torch.nn as nn\n"
            "try:\n"
            "    from apex.normalization import FusedRMSNorm\n"
            "    HAS_APEX = True\n"
            "except ImportError:\n"
            "    HAS_APEX = False\n\n"
            "def make(dim, eps=1e-5):\n"
            "    return FusedRMSNorm(dim, eps=eps)\n\n"
            "norm = FusedRMSNorm(\n"
            "    4096,\n"
            ")\n",
            fixed=(  # the probe's import stays: removing it would make HAS_APEX always true
                "import torch.nn as nn\n"
                "try:\n"
                "    from apex.normalization import FusedRMSNorm\n"
                "    HAS_APEX = True\n"
                "except ImportError:\n"
                "    HAS_APEX = False\n\n"
                "def make(dim, eps=1e-5):\n"
                "    return nn.RMSNorm(dim, eps=eps)\n\n"
                "norm = nn.RMSNorm(\n"
                "    4096, eps=1e-5,\n"
                ")\n"
            ),
            count=2,
        ),
        Invalid(
            "import apex\n"
            "norm = apex.normalization.FusedRMSNorm(512, 1e-6, memory_efficient=True)\n",
            fixed="import torch\n\nnorm = torch.nn.RMSNorm(512, 1e-6)\n",
        ),
        Invalid(
            "from apex.normalization import FusedLayerNorm\n"
            "ln = FusedLayerNorm(512)\n"
            "decay = [m for m in mods if not isinstance(m, FusedLayerNorm)]\n",
            fixed=None,  # the isinstance filter would stop matching the new module
        ),
        Invalid(
            "from apex.normalization import MixedFusedLayerNorm\nln = MixedFusedLayerNorm(512)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()
        short = qualified.rsplit(".", 1)[-1]
        if qualified in data["mixed_norms"]:
            self.report(
                node,
                message=(
                    f"`{short}` needs a ROCm/apex build; not rewritten: it keeps fp32 weights "
                    "for fp16/bf16 input, which torch.nn norms do not"
                ),
            )
            return
        target = data["norms"].get(qualified)
        if target is None:
            return
        signature = data["norm_signature"]
        bound = bind_arguments(node, signature["positional"], signature["droppable"])
        if isinstance(bound, str):
            self.report(node, message=f"`{short}` needs a ROCm/apex build; not rewritten: {bound}")
            return
        for name in signature["droppable"]:
            if name in bound:
                value = bound[name].value
                if not (is_literal(value, True) or is_literal(value, False)):
                    self.report(
                        node,
                        message=f"`{short}` needs a ROCm/apex build; not rewritten: `{name}=` "
                        "is not a literal",
                    )
                    return
        nn, imports = torch_ref(self.ctx, "torch.nn")
        kept = [
            argument
            for argument in node.args
            if argument.keyword is None or argument.keyword.value not in signature["droppable"]
        ]
        if target["explicit_eps"] and "eps" not in bound:
            kept.append(new_keyword("eps", signature["default_eps"]))
        torch_class = target["torch"].split(".", 1)[1]
        replacement = node.with_changes(
            func=cst.parse_expression(f"{nn}.{torch_class}"), args=relayout(node.args, kept)
        )
        self._report_fix(
            node,
            qualified,
            replacement,
            list(imports),
            f"`{short}` needs a ROCm/apex build; `torch.nn.{torch_class}` computes the same",
        )


class ApexFusedAdam(_ApexRewrite):
    """
    ## What it does
    Flags `apex.optimizers.FusedAdam` and rewrites it to `torch.optim.AdamW(..., fused=True)`
    (or `torch.optim.Adam(..., fused=True)` for `adam_w_mode=False`).

    ## Why it breaks on ROCm
    apex has no ROCm wheel (source build of ROCm/apex or AMD's `rocm/pytorch` images). PyTorch's
    own fused Adam/AdamW kernels are compiled for ROCm (fused eligibility is by device type, and
    `"cuda"` covers ROCm).

    ## Example
    ```python
    from apex.optimizers import FusedAdam

    opt = FusedAdam(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
    ```

    ## Fix
    ```python
    import torch

    opt = torch.optim.AdamW(
        model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.0, fused=True
    )
    ```
    apex's `adam_w_mode=True` (the default) is decoupled weight decay, i.e. AdamW;
    `adam_w_mode=False` is L2 regularisation, i.e. Adam. `weight_decay` is written out because
    apex defaults to 0 while `torch.optim.AdamW` defaults to 0.01; `lr` (1e-3), `betas`
    ((0.9, 0.999)) and `eps` (1e-8, added outside the square root in both) have the same
    defaults. Positional arguments after `lr` become keywords (apex's third parameter is
    `bias_correction`, torch's is `betas`).

    Left unfixed: `bias_correction=False`, `set_grad_none=False`, `master_weights=True`,
    `amsgrad=True`, a non-literal `adam_w_mode`, `*args`.

    ## Fix safety
    Unsafe: the update rule is the same, but optimizer state dicts differ (apex keeps one `step`
    per parameter group, torch a `step` tensor per parameter), so resuming from an apex
    optimizer checkpoint fails; the kernels round differently; `fused=True` requires all
    parameters on the GPU and floating point (apex required CUDA tensors too).

    ## References
    - NVIDIA/apex `apex/optimizers/fused_adam.py`
    - https://docs.pytorch.org/docs/stable/generated/torch.optim.AdamW.html
    """

    code = "ROC501"
    name = "apex-fused-adam"
    category = "apex"
    severity = Severity.WARNING
    message = "apex needs a ROCm/apex source build; torch.optim has fused Adam/AdamW on ROCm"
    fix_title = "Use `torch.optim.AdamW(..., fused=True)` (or Adam for adam_w_mode=False)"
    applicability = Applicability.UNSAFE
    fact = "§5 apex.optimizers.FusedAdam row; [AP1][O1][O2]"
    triggers = ("apex",)
    effort_hours = 0.3
    valid = [
        Valid("import torch\nopt = torch.optim.AdamW(params, lr=1e-4, fused=True)\n"),
        Valid("from deepspeed.ops.adam import FusedAdam\nopt = FusedAdam(params)\n"),
        Valid('"""Use apex.optimizers.FusedAdam(params) on CUDA."""\n'),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "from apex.optimizers import FusedAdam\n\n"
            "opt = FusedAdam(model.parameters(), lr=3e-4, betas=(0.9, 0.95))\n",
            fixed=(
                "import torch\n\n"
                "opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), "
                "weight_decay=0.0, fused=True)\n"
            ),
            line=4,
            column=7,
        ),
        Invalid(
            "import apex\n"
            "opt = apex.optimizers.FusedAdam(params, 1e-3, True, (0.9, 0.99), 1e-6, False, 0.1)\n",
            fixed=(
                "import torch\n\n"
                "opt = torch.optim.Adam(params, 1e-3, betas=(0.9, 0.99), eps=1e-6, "
                "weight_decay=0.1, fused=True)\n"
            ),
        ),
        Invalid(
            "from apex.optimizers import FusedAdam\n"
            "opt = FusedAdam(params, lr=1e-3, bias_correction=False)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        data = _data()["fused_adam"]
        if qualified is None or qualified not in data["names"]:
            return
        result = self._rewrite(node, data)
        if isinstance(result, str):
            self.report(
                node, message=f"`FusedAdam` needs a ROCm/apex build; not rewritten: {result}"
            )
            return
        replacement, imports, torch_class = result
        self._report_fix(
            node,
            qualified,
            replacement,
            imports,
            f"`FusedAdam` needs a ROCm/apex build; `torch.optim.{torch_class}(fused=True)` "
            "implements the same update",
        )

    def _rewrite(
        self, node: cst.Call, data: dict[str, Any]
    ) -> tuple[cst.Call, list[tuple[str, str | None]], str] | str:
        bound = bind_arguments(node, data["positional"], data["keywords"])
        if isinstance(bound, str):
            return bound
        if "params" not in bound:
            return "it does not pass the parameters"
        for name, rule in data["required"].items():
            required = literal_from_text(rule["value"])
            if name in bound and not is_literal(bound[name].value, required):
                return str(rule["reason"])
        mode = bound.get("adam_w_mode")
        if mode is None or is_literal(mode.value, True):
            torch_class = "AdamW"
        elif is_literal(mode.value, False):
            torch_class = "Adam"
        else:
            return "`adam_w_mode` is not a literal, so AdamW vs Adam is unknown"
        arguments = [as_positional(bound["params"])]
        if "lr" in bound:
            lr = bound["lr"]
            arguments.append(lr if lr.keyword is None else as_keyword(lr, "lr"))
        for name in data["kept"]:
            if name != "lr" and name in bound:
                arguments.append(as_keyword(bound[name], name))
        if torch_class == "AdamW" and "weight_decay" not in bound:
            arguments.append(new_keyword("weight_decay", "0.0"))
        arguments.append(new_keyword("fused", "True"))
        torch_name, imports = torch_ref(self.ctx, "torch.optim")
        replacement = node.with_changes(
            func=cst.parse_expression(f"{torch_name}.{torch_class}"),
            args=relayout(node.args, arguments),
        )
        return replacement, list(imports), torch_class


class ApexAmp(PythonRule):
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
    aggregate = "scope"
    message = "apex.amp needs a ROCm/apex build (removed from NVIDIA apex); migrate to torch.amp"
    fact = "§5 apex.amp row; [AP3][AP2]"
    triggers = ("apex",)
    effort_hours = 2.0
    valid = [
        Valid("import torch\nscaler = torch.amp.GradScaler('cuda')\n"),
        Valid("from torch.cuda import amp\nwith amp.autocast():\n    pass\n"),
        Valid("def initialize(m, o):\n    return m, o\n\nmodel, opt = initialize(model, opt)\n"),
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

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        data = _data()["amp"]
        if qualified is None or not matches_package(qualified, [data["prefix"]]):
            return
        short = qualified.rsplit(".", 1)[-1]
        note = data["notes"].get(short)
        if note is None:
            note = "use torch.autocast and torch.amp.GradScaler"
        self.report(node, message=f"`apex.amp.{short}` needs a ROCm/apex build: {note}")


class ApexSyncBatchNorm(PythonRule):
    """
    ## What it does
    Flags `apex.parallel.SyncBatchNorm` and `apex.parallel.convert_syncbn_model`, rewriting them
    to `torch.nn.SyncBatchNorm` / `torch.nn.SyncBatchNorm.convert_sync_batchnorm`.

    ## Why it breaks on ROCm
    AMD's PyTorch compatibility table lists APEX batch norm as unsupported on ROCm. PyTorch's
    `SyncBatchNorm` works over RCCL (the `nccl` backend on ROCm).

    ## Example
    ```python
    from apex.parallel import convert_syncbn_model

    model = convert_syncbn_model(model)
    ```

    ## Fix
    ```python
    import torch

    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ```
    `SyncBatchNorm(num_features, eps, momentum, affine, track_running_stats, process_group)`
    keep their order; `channel_last=True` and `fuse_relu=True` have no torch argument and leave
    the call unfixed.

    ## Fix safety
    Unsafe: the statistics are the same, but torch's SyncBatchNorm only runs inside an
    initialized process group on GPU tensors and reduces with its own kernels; checkpoints keep
    the BatchNorm keys (`weight`, `bias`, `running_mean`, `running_var`, `num_batches_tracked`).

    ## References
    - ROCm PyTorch compatibility table (APEX batch norm); NVIDIA/apex `apex/parallel`
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html
    """

    code = "ROC503"
    name = "apex-sync-batchnorm"
    category = "apex"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "apex SyncBatchNorm is listed unsupported on ROCm; torch.nn.SyncBatchNorm works"
    fix_title = "Use `torch.nn.SyncBatchNorm`"
    applicability = Applicability.UNSAFE
    fact = "§5 APEX batch norm row; [R1]"
    triggers = ("apex",)
    effort_hours = 0.3
    valid = [
        Valid("import torch\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"),
        Valid(
            "def convert_syncbn_model(m):\n    return m\n\nmodel = convert_syncbn_model(model)\n"
        ),
    ]
    invalid = [
        Invalid(
            "from apex.parallel import convert_syncbn_model\nmodel = convert_syncbn_model(model)\n",
            fixed="import torch\n\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
            line=2,
            column=9,
        ),
        Invalid(
            "import torch.nn as nn\n"
            "import apex\n"
            "bn = apex.parallel.SyncBatchNorm(64, 1e-5, momentum=0.01)\n",
            fixed="import torch.nn as nn\nbn = nn.SyncBatchNorm(64, 1e-5, momentum=0.01)\n",
        ),
        Invalid(
            "from apex.parallel import SyncBatchNorm\nbn = SyncBatchNorm(64, channel_last=True)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()["syncbn"]
        if qualified in data["classes"]:
            positional, target = data["class_positional"], "SyncBatchNorm"
        elif qualified in data["converters"]:
            positional = data["converter_positional"]
            target = "SyncBatchNorm.convert_sync_batchnorm"
        else:
            return
        bound = bind_arguments(node, positional, ())
        reason = bound if isinstance(bound, str) else None
        if isinstance(bound, dict):
            for name, value in data["required"].items():
                if name in bound and not is_literal(bound[name].value, literal_from_text(value)):
                    reason = f"`{name}=` has no torch.nn.SyncBatchNorm argument"
        if reason is not None:
            self.report(node, message=f"{self.message}; not rewritten: {reason}")
            return
        assert isinstance(bound, dict)
        nn, imports = torch_ref(self.ctx, "torch.nn")
        dropped = [bound[name] for name in data["required"] if name in bound]
        kept = [argument for argument in node.args if not any(argument is d for d in dropped)]
        replacement = node.with_changes(
            func=cst.parse_expression(f"{nn}.{target}"), args=relayout(node.args, kept)
        )
        self.report(
            node,
            replacement=replacement,
            imports=list(imports),
            remove_imports=unused_import_candidates(self.ctx, node.func, "apex"),
        )


class ApexHardImport(PythonRule):
    """
    ## What it does
    Flags imports of `apex` that are not guarded by `try: ... except ImportError:` or an `if`.

    ## Why it breaks on ROCm
    apex has no wheel for ROCm (nor, really, for CUDA): it must be built from ROCm/apex with its
    C++/HIP extensions, or taken from AMD's `rocm/pytorch` containers. `pip install apex`
    installs an unrelated package. A stock ROCm environment fails at this import.

    ## Example
    ```python
    from apex.normalization import FusedRMSNorm
    ```

    ## Manual migration
    Replace the apex pieces with PyTorch equivalents (ROC500 norms, ROC501 FusedAdam, ROC502
    amp, ROC503 SyncBatchNorm), after which the import goes away; or build ROCm/apex
    (`pip install -v --no-build-isolation --config-settings="--build-option=--cpp_ext"
    --config-settings="--build-option=--cuda_ext" .` in a ROCm/apex checkout) or use a
    `rocm/pytorch` image.

    ## References
    - ROCm/apex README
    """

    code = "ROC504"
    name = "apex-hard-import"
    category = "apex"
    severity = Severity.WARNING
    aggregate = "file"
    message = "unguarded apex import: apex must be built from ROCm/apex (PyPI `apex` is unrelated)"
    fact = "§5 apex rows; [AP2]"
    triggers = ("apex",)
    effort_hours = 1.0
    valid = [
        Valid("try:\n    import apex\nexcept ImportError:\n    apex = None\n"),
        Valid("import apexpy\nfrom my.apex import thing\n"),
    ]
    invalid = [
        Invalid("from apex.normalization import FusedRMSNorm\n", line=1, column=1),
        Invalid("import apex.amp as amp\n"),
    ]

    def visit_Import(self, node: cst.Import) -> None:
        self._check(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._check(node)

    def _check(self, node: cst.Import | cst.ImportFrom) -> None:
        for module in imported_modules(node):
            if matches_package(module, _data()["packages"]) and id(node) not in guarded_imports(
                self.ctx.module
            ):
                self.report(node)
                return
