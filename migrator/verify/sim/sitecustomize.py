"""Start-up hook of ``migrate verify`` smoke runs (this folder is first on ``PYTHONPATH``).

Python imports ``sitecustomize`` at start-up. This one starts the probe (every run) and, when
``MIGRATE_SIM_PROFILE=rocm-mi300x``, the ROCm emulation; then it runs the ``sitecustomize`` that
this one shadows, if the interpreter has one. A failure here is printed and never stops the
program under test.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys


def _start() -> None:
    importlib.import_module("_migrate_probe").install()
    profile = os.environ.get("MIGRATE_SIM_PROFILE", "")
    if profile == "rocm-mi300x":
        importlib.import_module("_migrate_rocm").install()
    elif profile:
        print(
            f"[migrate sim] unknown MIGRATE_SIM_PROFILE {profile!r}; no emulation", file=sys.stderr
        )


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _start()
except Exception as error:  # pragma: no cover - defensive
    print(f"[migrate sim] start-up failed: {error!r}", file=sys.stderr)
try:
    _chain()
except Exception as error:  # pragma: no cover - defensive
    print(f"[migrate sim] the shadowed sitecustomize failed: {error!r}", file=sys.stderr)
