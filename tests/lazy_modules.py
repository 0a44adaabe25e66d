"""Modules that most test workers never use, imported by the first test that reads them."""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for a module until an attribute is read, then imports it (``torch =
    LazyModule("torch")``): importing torch costs every worker about two seconds of CPU at
    collection, though only the tests that run rewritten code on it need it. A missing module
    fails those tests with its ImportError; nothing is skipped."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> object:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)
