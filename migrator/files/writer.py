"""The one write policy of the tool: ``fix``, ``pr`` and ``verify`` edit project files with atomic
in-place writes that keep encoding, BOM, line endings and permissions, and never write through a
symlink, outside the root, or over an edit made since the file was read; every file a user names
(``-o`` of every command, baselines, receipts) is written by ``write_output``: atomically, never
through a symlink, never creating a link's target, never over an input of the run; the tool's
own folders of files (a fleet's results) by ``write_private_under``: never through a symlink
anywhere below and at the folder's root. ``-`` and the stream names ``/dev/stdout``,
``/dev/stderr``, ``/dev/null`` and ``/dev/fd/N``, typed by the user, are written to that stream."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from migrator.files.sources import FailFile, SkipFile, content_key, read_regular


class WriteRefused(Exception):
    """The file was left as it is; the message is the one-line reason shown to the user."""


def _temporary_in(directory: Path, name: str) -> tuple[int, str]:
    """A temporary file beside ``name`` whose own name fits NAME_MAX (255 bytes) whatever the
    length of ``name``."""
    stem = name if len(name.encode("utf-8", "surrogateescape")) <= 180 else "long-name"
    return tempfile.mkstemp(prefix=f".{stem}.", suffix=".migrate", dir=directory)


def _replace_with(path: Path, data: bytes, mode: int, refuse_link: bool = False) -> None:
    """Write ``data`` to a temporary file beside ``path`` (flushed to disk, given ``mode``) and
    rename it over ``path``: an interruption or a failure leaves the old file whole. With
    ``refuse_link``, a symlink planted at ``path`` meanwhile is not replaced (``WriteRefused``).
    The temporary file never outlives a failure."""
    descriptor, temporary = _temporary_in(path.absolute().parent, path.name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        if refuse_link and os.path.islink(path):
            raise WriteRefused(f"{path} is a symlink; not written through it")
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_private(path: Path, data: bytes) -> None:
    """Write one of the tool's own files (a cache entry) atomically, never through a link, with
    permissions for this user only."""
    _replace_with(path, data, 0o600, refuse_link=True)


def private_folder(root: Path, relative: str = "") -> Path:
    """The folder ``relative`` under ``root``, a folder of the tool's own (a fleet's results),
    created as needed (``root`` too, with its parents): WriteRefused (one line) when ``root``
    or any folder below it is a symlink or not a folder, so nothing is written through a link
    a project planted there."""
    _real_folder(root, str(root), create=True)
    current = root
    parts = _relative_parts(relative)
    for index, part in enumerate(parts):
        current = current / part
        _real_folder(current, "/".join(parts[: index + 1]), create=True)
    return current


def private_path(root: Path, relative: str) -> Path:
    """The path of the tool's own file ``relative`` under ``root``, to read or remove it:
    WriteRefused when ``root``, a folder below it or the file is a symlink (a missing part is
    fine: there is nothing to read)."""
    _real_folder(root, str(root), create=False)
    current = root
    parts = _relative_parts(relative)
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            break
        except OSError as error:
            raise WriteRefused(
                f"cannot use {'/'.join(parts[: index + 1])}: {error.strerror}"
            ) from None
        if stat.S_ISLNK(mode):
            raise WriteRefused(
                f"{'/'.join(parts[: index + 1])} is a symlink; not written through it"
            )
    return current


def write_private_under(root: Path, relative: str, data: bytes) -> Path:
    """Write the tool's own file ``relative`` under ``root`` (a fleet result) atomically, for
    this user only, creating its folders: never through a symlink at the root, at a folder on
    the way or at the file itself (WriteRefused, one line)."""
    parts = _relative_parts(relative)
    if not parts:
        raise WriteRefused("no file name; not written")
    folder = private_folder(root, "/".join(parts[:-1]))
    target = folder / parts[-1]
    try:
        mode: int | None = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISLNK(mode):
        raise WriteRefused(f"{relative} is a symlink; not written through it")
    if mode is not None and not stat.S_ISREG(mode):
        raise WriteRefused(f"{relative} is not a regular file; not written")
    try:
        write_private(target, data)
    except WriteRefused:
        raise WriteRefused(f"{relative} is a symlink; not written through it") from None
    except OSError as error:
        raise WriteRefused(f"cannot write {relative}: {error.strerror}") from None
    return target


def _relative_parts(relative: str) -> list[str]:
    parts = [part for part in relative.split("/") if part]
    if any(part in ("..", ".") for part in parts):
        raise WriteRefused(f"{relative} leaves its folder; not written")
    return parts


def _real_folder(path: Path, shown: str, *, create: bool) -> None:
    """Check that ``path`` is a real folder, not a symlink (made first when ``create``)."""
    if create:
        try:
            os.lstat(path)
        except FileNotFoundError:
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise WriteRefused(f"cannot create {shown}: {error.strerror}") from None
        except OSError:
            pass
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        if create:
            raise WriteRefused(f"cannot create {shown}") from None
        return
    except OSError as error:
        raise WriteRefused(f"cannot use {shown}: {error.strerror}") from None
    if stat.S_ISLNK(mode):
        raise WriteRefused(f"{shown} is a symlink; not written through it")
    if not stat.S_ISDIR(mode):
        raise WriteRefused(f"{shown} is not a folder; not written")


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so an interrupted run
    leaves either the old or the new file, never half of one. Newlines are written as they are
    in ``text`` (the engine preserves the file's own line endings)."""
    _replace_with(path, text.encode(encoding), stat.S_IMODE(os.stat(path).st_mode))


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
    descriptor, temporary = _temporary_in(original.parent, target.name)
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


#: Output names that mean a stream of this process, not a file (``-`` is stdout, as for most
#: tools). Only these exact names, which a user types and a scanned project cannot plant, are
#: let through: a symlink named like a report that leads to ``/dev/null`` is still refused.
STREAMS = {"-": 1, "/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/1": 1, "/dev/fd/2": 2}
DISCARD = "/dev/null"
_FD_NAME = re.compile(r"/dev/fd/(\d{1,4})")


def stream_of(output: str | os.PathLike[str]) -> int | None:
    """The file descriptor an output name stands for (``-``, ``/dev/stdout``, ``/dev/fd/N`` as
    bash's ``>(cmd)`` gives), -1 for ``/dev/null``, or None for an ordinary file name."""
    name = os.fspath(output)
    if not isinstance(name, str):
        return None
    if name in STREAMS:
        return STREAMS[name]
    if name == DISCARD:
        return -1
    match = _FD_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def _write_stream(descriptor: int, data: bytes) -> None:
    """Write ``data`` to an open descriptor of this process (stdout after what Python buffered
    for it); nothing for ``/dev/null``."""
    import sys

    if descriptor < 0:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == descriptor:
                stream.flush()
        except (OSError, ValueError):
            pass
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def output_refusal(output: str | os.PathLike[str], inputs: Sequence[Path] = ()) -> str | None:
    """Why a file the user named for output must not be written (one line), or None: it is a
    symlink (dangling or not: a scanned project may have planted it), not a regular file, or an
    input of this run (a file it reads, or one of the kinds it scans under a scanned root).
    A stream name (``stream_of``) is never refused, except a descriptor that is not open."""
    from migrator.files.discovery import file_kind

    descriptor = stream_of(output)
    if descriptor is not None:
        if descriptor >= 0:
            try:
                os.fstat(descriptor)
            except OSError as error:
                return f"cannot write {output}: {error.strerror}"
        return None
    path = Path(output)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        return f"cannot write {output}: {error.strerror}"
    if mode is not None and stat.S_ISLNK(mode):
        return f"{output} is a symlink; not written through it (remove it or choose another name)"
    if mode is not None and not stat.S_ISREG(mode):
        return f"{output} is not a regular file; not written"
    target = path.absolute().parent.resolve() / path.name
    for item in inputs:
        try:
            source = item.resolve()
        except OSError:
            continue
        if source == target:
            return f"{output} is an input of this run; not overwritten (choose another name)"
        if source.is_dir() and target.is_relative_to(source):
            relative = target.relative_to(source).as_posix()
            if file_kind(relative) is not None:
                return (
                    f"{output} is a file this run scans; not overwritten (choose another name "
                    "or a folder outside the project)"
                )
    return None


def write_output(
    output: str | os.PathLike[str], text: str, inputs: Sequence[Path] = (), encoding: str = "utf-8"
) -> None:
    """Write a file the user named (a report, a baseline, a receipt) under the policy: refused
    with a one-line ``WriteRefused`` for the cases of ``output_refusal``; written to a temporary
    file beside it and renamed over it, so a failure (a full disk) leaves the previous file as
    it was; a new file gets the usual permissions, an existing one keeps its own. A stream name
    (``-``, ``/dev/stdout``, ``/dev/null``; ``stream_of``) is written to that stream."""
    refusal = output_refusal(output, inputs)
    if refusal is not None:
        raise WriteRefused(refusal)
    descriptor = stream_of(output)
    if descriptor is not None:
        try:
            _write_stream(descriptor, text.encode(encoding, "surrogateescape"))
        except BrokenPipeError:
            raise
        except OSError as error:
            raise WriteRefused(f"cannot write {output}: {error.strerror}") from None
        return
    path = Path(output)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) if path.exists() else None
    except OSError:
        mode = None
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        _replace_with(path, text.encode(encoding, "surrogateescape"), mode, refuse_link=True)
    except OSError as error:
        raise WriteRefused(
            f"cannot write {output}: {error.strerror}; the previous file, if any, is unchanged"
        ) from None
