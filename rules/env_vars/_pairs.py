"""What the Python rule and the text rule of one check share: the metadata (severity, message,
fact, triggers, ...), everything but the code, the name, the documentation and the examples.
ROC700/ROC710 and ROC701/ROC711 (a CUDA variable set without its HIP twin; matchers in
``_paired.py`` and ``_text_rules.py``), ROC703/ROC713 (CUDA-only variables) and ROC704/ROC714
(device lists that disagree)."""

from __future__ import annotations

from typing import ClassVar

from migrator.api import Applicability, Fixing, Impact, Parsing, Rule, Severity

from ._table import cuda_only_variables, paired_handled
from ._visible_devices import _FACT, CUDA


class _VisibleDevicesPair(Rule, abstract=True):
    """ROC700 and ROC710: ``CUDA_VISIBLE_DEVICES`` set without ``HIP_VISIBLE_DEVICES``."""

    category = "env-var"
    severity = Severity.INFO
    impact = Impact(aggregate="file", effort_hours=0.1)
    message = "`CUDA_VISIBLE_DEVICES` is set but `HIP_VISIBLE_DEVICES` is not"
    fix = Fixing(
        title="Also set `HIP_VISIBLE_DEVICES` to the same value", applicability=Applicability.SAFE
    )
    fact = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
    parsing = Parsing(
        triggers=("CUDA_VISIBLE_DEVICES",), scope_triggers=paired_handled("CUDA_VISIBLE_DEVICES")
    )
    cuda_name: ClassVar[str] = "CUDA_VISIBLE_DEVICES"


class _LaunchBlockingPair(Rule, abstract=True):
    """ROC701 and ROC711: ``CUDA_LAUNCH_BLOCKING`` set without ``HIP_LAUNCH_BLOCKING``."""

    category = "env-var"
    severity = Severity.INFO
    impact = Impact(aggregate="file", effort_hours=0.1)
    message = "`CUDA_LAUNCH_BLOCKING` is set but `HIP_LAUNCH_BLOCKING` is not"
    fix = Fixing(
        title="Also set `HIP_LAUNCH_BLOCKING` to the same value", applicability=Applicability.SAFE
    )
    fact = "§6 CUDA_LAUNCH_BLOCKING; [E3]"
    parsing = Parsing(
        triggers=("CUDA_LAUNCH_BLOCKING",), scope_triggers=paired_handled("CUDA_LAUNCH_BLOCKING")
    )
    cuda_name: ClassVar[str] = "CUDA_LAUNCH_BLOCKING"


class _CudaOnlyPair(Rule, abstract=True):
    """ROC703 and ROC713: a CUDA-only environment variable, which ROCm ignores."""

    category = "env-var"
    severity = Severity.WARNING
    impact = Impact(aggregate="file", effort_hours=0.25)
    message = "This CUDA environment variable has no effect on ROCm"
    fact = "§6 TORCH_CUDA_ARCH_LIST, TORCH_USE_CUDA_DSA rows; §9 docker row; [P9][P1][C1]"
    parsing = Parsing(triggers=cuda_only_variables())


class _VisibleDevicesConflictPair(Rule, abstract=True):
    """ROC704 and ROC714: ``CUDA_VISIBLE_DEVICES`` disagrees with a HIP/ROCR device list."""

    category = "env-var"
    severity = Severity.WARNING
    message = "`CUDA_VISIBLE_DEVICES` disagrees with the HIP/ROCR device list set next to it"
    fact = _FACT
    parsing = Parsing(triggers=(CUDA,))
    impact = Impact(effort_hours=0.1)
