"""The one write policy of ``fix``, ``pr`` and ``verify``: atomic in-place writes that keep
encoding, BOM, line endings and permissions, and never write through a symlink, outside the
root, or over an edit made since the file was read."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from migrator.cache import content_key
from migrator.sources import FailFile, SkipFile, read_regular


class WriteRefused(Exception):
    """The file was left as it is; the message is the one-line reason shown to the user."""


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so an interrupted run
    leaves either the old or the new file, never half of one. Newlines are written as they are
    in ``text`` (the engine preserves the file's own line endings)."""
    data = text.encode(encoding)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".migrate", dir=directory
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def safe_target(root: Path, relative: str) -> Path:
    """The path to write for ``relative`` under ``root``; WriteRefused when any part of it is a
    symlink, it is not a regular file, or it lies outside the root."""
    if root.is_symlink():
        raise WriteRefused("is a symlink; left as it is")
    if not root.is_dir():
        base, parts = root.parent.resolve(), [root.name]
    else:
        base, parts = root.resolve(), [part for part in relative.split("/") if part]
    if not parts or any(part in ("..", ".") for part in parts):
        raise WriteRefused("path leaves the project; not written")
    current = base
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError as error:
            raise WriteRefused(f"cannot write: {error.strerror}") from None
        if stat.S_ISLNK(mode):
            where = (
                "is a symlink"
                if index == len(parts) - 1
                else f"is reached through a symlink ({'/'.join(parts[: index + 1])})"
            )
            raise WriteRefused(f"{where}; left as it is")
        if index == len(parts) - 1 and not stat.S_ISREG(mode):
            raise WriteRefused("not a regular file; left as it is")
    if not current.resolve().is_relative_to(base):
        raise WriteRefused("path leaves the project; not written")
    return current


def write_checked(root: Path, relative: str, text: str, encoding: str, read_key: str) -> None:
    """Write a fixed file under the policy above; WriteRefused (one line) when it may not be
    written or the write fails. ``read_key`` is the content key of the bytes the fix was
    computed from: a file edited since then keeps the edit."""
    target = safe_target(root, relative)
    try:
        current = read_regular(str(target))
    except (SkipFile, FailFile) as error:
        raise WriteRefused(str(error)) from None
    if content_key(current) != read_key:
        raise WriteRefused("changed since it was read; not written (run fix again)")
    try:
        write_atomic(target, text, encoding)
    except OSError as error:
        raise WriteRefused(f"cannot write: {error.strerror}") from None


def create_new(root: Path, relative: str, text: str, like: str) -> None:
    """Create the new file ``relative`` (a ROCm variant beside ``like``, whose permissions it
    takes) under the same policy: never over an existing file, never through a symlink or
    outside the root; written to a temporary file and linked into place, so it appears whole
    or not at all. WriteRefused (one line) otherwise."""
    original = safe_target(root, like)
    parts = [part for part in relative.split("/") if part]
    if not parts or any(part in ("..", ".") for part in parts):
        raise WriteRefused("path leaves the project; not written")
    target = original.parent / parts[-1]
    if "/".join(parts[:-1]) != "/".join(like.split("/")[:-1]):
        raise WriteRefused("a variant is only written beside its original; not written")
    if os.path.lexists(target):
        raise WriteRefused("exists; not overwritten")
    mode = stat.S_IMODE(os.stat(original).st_mode)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".migrate", dir=original.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.link(temporary, target)  # fails if the name appeared meanwhile: nothing overwritten
    except FileExistsError:
        raise WriteRefused("exists; not overwritten") from None
    except OSError as error:
        raise WriteRefused(f"cannot write: {error.strerror}") from None
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass
