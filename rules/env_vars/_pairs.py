"""What the Python rule and the text rule of one CUDA/HIP variable pair share: everything but
the code, the name, the documentation and the examples. ROC700 and ROC710 check
``CUDA_VISIBLE_DEVICES``, ROC701 and ROC711 ``CUDA_LAUNCH_BLOCKING``; the matchers are
``_paired.py`` (Python) and ``_text_rules.py`` (shell, Docker, compose, CI)."""

from __future__ import annotations

from typing import ClassVar

from migrator.model import Applicability, Severity
from migrator.rule import Rule


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
    effort_hours = 0.1
    cuda_name: ClassVar[str] = "CUDA_LAUNCH_BLOCKING"
