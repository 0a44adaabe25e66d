"""Whether a file is part of a project's test suite (pytest/unittest layout conventions)."""

from __future__ import annotations

from pathlib import PurePosixPath

#: Folder names that hold a test suite.
_TEST_FOLDERS = frozenset({"tests", "test"})


def is_test_path(path: str) -> bool:
    """``tests/…``, ``…/test/…``, ``test_*.py``, ``*_test.py`` and ``conftest.py``: code that
    exercises the project rather than code the project ships."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if any(part in _TEST_FOLDERS for part in parts[:-1]):
        return True
    name = parts[-1] if parts else ""
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
