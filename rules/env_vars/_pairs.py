"""What the Python rule and the text rule of one check share: the metadata (severity, message,
fact, triggers, ...), everything but the code, the name, the documentation and the examples.
ROC700/ROC710 and ROC701/ROC711 (a CUDA variable set without its HIP twin; matchers in
``_paired.py`` and ``_text_rules.py``), ROC703/ROC713 (CUDA-only variables) and ROC704/ROC714
(device lists that disagree)."""

from __future__ import annotations

from typing import ClassVar

from migrator.api import Applicability, Rule, Severity

from ._table import cuda_only_variables, paired_handled
from ._visible_devices import _FACT, CUDA


class _VisibleDevicesPair(Rule):
    """ROC700 and ROC710: ``CUDA_VISIBLE_DEVICES`` set without ``HIP_VISIBLE_DEVICES``."""

    abstract = True
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_VISIBLE_DEVICES` is set but `HIP_VISIBLE_DEVICES` is not"
    fix_title = "Also set `HIP_VISIBLE_DEVICES` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
    triggers = ("CUDA_VISIBLE_DEVICES",)
    scope_triggers = paired_handled("CUDA_VISIBLE_DEVICES")
    effort_hours = 0.1
    cuda_name: ClassVar[str] = "CUDA_VISIBLE_DEVICES"


class _LaunchBlockingPair(Rule):
    """ROC701 and ROC711: ``CUDA_LAUNCH_BLOCKING`` set without ``HIP_LAUNCH_BLOCKING``."""

    abstract = True
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_LAUNCH_BLOCKING` is set but `HIP_LAUNCH_BLOCKING` is not"
    fix_title = "Also set `HIP_LAUNCH_BLOCKING` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_LAUNCH_BLOCKING; [E3]"
    triggers = ("CUDA_LAUNCH_BLOCKING",)
    scope_triggers = paired_handled("CUDA_LAUNCH_BLOCKING")
    effort_hours = 0.1
    cuda_name: ClassVar[str] = "CUDA_LAUNCH_BLOCKING"


class _CudaOnlyPair(Rule):
    """ROC703 and ROC713: a CUDA-only environment variable, which ROCm ignores."""

    abstract = True
    category = "env-var"
    severity = Severity.WARNING
    aggregate = "file"
    message = "This CUDA environment variable has no effect on ROCm"
    fact = "§6 TORCH_CUDA_ARCH_LIST, TORCH_USE_CUDA_DSA rows; §9 docker row; [P9][P1][C1]"
    triggers = cuda_only_variables()
    effort_hours = 0.25


class _VisibleDevicesConflictPair(Rule):
    """ROC704 and ROC714: ``CUDA_VISIBLE_DEVICES`` disagrees with a HIP/ROCR device list."""

    abstract = True
    category = "env-var"
    severity = Severity.WARNING
    message = "`CUDA_VISIBLE_DEVICES` disagrees with the HIP/ROCR device list set next to it"
    fact = _FACT
    triggers = (CUDA,)
    effort_hours = 0.1
