"""Import machinery shared by the probe and the ROCm emulation (runs inside the smoke subprocess).

This folder is put first on ``PYTHONPATH`` by ``migrate verify``; nothing here runs in the
``migrate`` process itself. One meta-path finder serves three purposes:

* observers see every top-level import attempt (the probe records CUDA-only modules);
* blockers may refuse a module (the emulation makes CUDA-only packages unimportable);
* post-import hooks run right after a module (``torch``) has finished executing.

``importlib.util.find_spec`` is wrapped so that availability checks (``find_spec(name) is None``,
as transformers does) see a blocked module as absent instead of raising.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any

Observer = Callable[[str, str, str], None]
"""Called with (module name, importing module, kind) where kind is "import" or "find_spec"."""
Blocker = Callable[[str, str], bool]
"""Called with (module name, importing module); True refuses the module."""
PostImportHook = Callable[[ModuleType], None]

_observers: list[Observer] = []
_blockers: list[Blocker] = []
_post_hooks: dict[str, list[PostImportHook]] = {}
_interesting: set[str] = set()
"""Top-level names some observer or blocker cares about; other imports pass straight through."""
_state = threading.local()
_INTERNAL_FILES = ("importlib", "_migrate_hooks", "<frozen")


def importer_name(skip: int = 1) -> str:
    """The ``__name__`` of the module whose code triggered the current import or call."""
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not any(marker in filename for marker in _INTERNAL_FILES):
            name = frame.f_globals.get("__name__", "?")
            return str(name)
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def caller_location(ignore_prefixes: Sequence[str] = ()) -> tuple[str, str]:
    """(module name, "file:line") of the nearest frame outside the sim and ``ignore_prefixes``."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        name = str(frame.f_globals.get("__name__", "?"))
        internal = any(marker in filename for marker in _INTERNAL_FILES) or name.startswith(
            "_migrate_"
        )
        if not internal and not any(
            name == prefix or name.startswith(prefix + ".") for prefix in ignore_prefixes
        ):
            return name, f"{filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?", "?"


class _HookedLoader(importlib.abc.Loader):
    """Delegates to the real loader and runs the post-import hooks after ``exec_module``."""

    def __init__(self, loader: Any, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        for hook in _post_hooks.get(self._name, []):
            try:
                hook(module)
            except Exception as error:  # never break the user's program
                print(
                    f"[migrate sim] post-import hook for {self._name} failed: {error!r}",
                    file=sys.stderr,
                )

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._loader, attribute)


class _Finder(importlib.abc.MetaPathFinder):
    """First entry of ``sys.meta_path``: observes, blocks, and wraps loaders for hooks."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in _interesting and fullname not in _post_hooks:
            return None
        busy: set[str] = getattr(_state, "busy", set())
        if fullname in busy:
            return None
        probing = bool(getattr(_state, "probing", False))
        importer = importer_name(2)
        for observer in _observers:
            observer(fullname, importer, "find_spec" if probing else "import")
        if not probing and any(blocker(fullname, importer) for blocker in _blockers):
            raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)
        if fullname not in _post_hooks:
            return None
        busy.add(fullname)
        _state.busy = busy
        try:
            spec = _find_elsewhere(self, fullname, path, target)
        finally:
            busy.discard(fullname)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _HookedLoader(spec.loader, fullname)
        return spec


def _find_elsewhere(
    finder: _Finder, fullname: str, path: Sequence[str] | None, target: ModuleType | None
) -> importlib.machinery.ModuleSpec | None:
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec: importlib.machinery.ModuleSpec | None = other.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


_finder = _Finder()
_real_find_spec = importlib.util.find_spec


def _find_spec(name: str, package: str | None = None) -> importlib.machinery.ModuleSpec | None:
    """``importlib.util.find_spec`` that reports blocked modules as absent (returns None)."""
    resolved = importlib.util.resolve_name(name, package) if name.startswith(".") else name
    if resolved.partition(".")[0] not in _interesting:
        return _real_find_spec(name, package)
    importer = importer_name(2)
    previous = getattr(_state, "probing", False)
    _state.probing = True
    try:
        if any(blocker(resolved, importer) for blocker in _blockers):
            for observer in _observers:
                observer(resolved, importer, "find_spec")
            return None
        return _real_find_spec(name, package)
    finally:
        _state.probing = previous


def is_probing() -> bool:
    """Whether the current lookup is an availability check (``find_spec``), not an import."""
    return bool(getattr(_state, "probing", False))


def install() -> None:
    """Put the finder first on ``sys.meta_path``; wrap ``importlib.util.find_spec`` (idempotent)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    if importlib.util.find_spec is not _find_spec:
        importlib.util.find_spec = _find_spec


def add_observer(observer: Observer, top_level: Iterable[str]) -> None:
    """Call ``observer`` for every import attempt of a module under ``top_level`` names."""
    _interesting.update(top_level)
    _observers.append(observer)


def add_blocker(blocker: Blocker, top_level: Iterable[str]) -> None:
    """Refuse modules (under ``top_level`` names) for which ``blocker`` returns True."""
    _interesting.update(top_level)
    _blockers.append(blocker)


def add_post_import_hook(name: str, hook: PostImportHook) -> None:
    """Run ``hook(module)`` once ``name`` has been imported (at once if it already was)."""
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
        return
    _post_hooks.setdefault(name, []).append(hook)
