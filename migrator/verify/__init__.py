"""``migrate verify``: prove a migration on a copy of the project by running its smoke test.

The original tree and the fixed copy each run in a clean subprocess with a probe injected; the
``rocm-sim`` target runs the fixed copy under an emulation of a stock ROCm PyTorch install on an
AMD Instinct MI300X (software stack only, over the real device). See docs/verification.md and
docs/emulation.md.
"""

from __future__ import annotations

from migrator.verify.core import verify
from migrator.verify.options import VerifyOptions, resolve_options
from migrator.verify.receipt import Receipt, RunRecord, summary

__all__ = ["Receipt", "RunRecord", "VerifyOptions", "resolve_options", "summary", "verify"]
