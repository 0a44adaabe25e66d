"""Reading files safely: size limits, binary detection, encodings (PEP 263, BOM), notebooks."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import stat
import tokenize
from dataclasses import dataclass

MAX_BYTES = 8 * 1024 * 1024
#: A notebook is read up to this size: its outputs (images, logs) make it large, and only its
#: code cells are scanned, whatever the size of the outputs.
NOTEBOOK_MAX_BYTES = 256 * 1024 * 1024


def size_limit(kind: str) -> int:
    """The read limit for a file of ``kind``."""
    return NOTEBOOK_MAX_BYTES if kind == "notebook" else MAX_BYTES


#: CPython's own limit on nested brackets (``MAXLEVEL`` in its tokenizer): a deeper file is not
#: valid Python, and the native parser of libcst can overflow its stack on it.
MAX_NESTING = 200


class SkipFile(Exception):
    """The file is not analysed; the message is the one-line reason shown to the user."""


class FailFile(Exception):
    """The file could not be analysed (parse error, malformed notebook); one-line reason."""


class TooLarge(SkipFile):
    """The file is over its read limit and was not read: code that may run went unread, so a
    scan holding one is incomplete (unlike a binary or undecodable file, which never runs)."""


class NotRegular(SkipFile):
    """The path is not a regular file (a FIFO, socket, device or directory): never read."""


@dataclass(frozen=True, slots=True)
class DecodedSource:
    """Decoded text plus what is needed to write it back byte-for-byte compatible."""

    text: str
    encoding: str


def content_key(data: bytes) -> str:
    """The identity of bytes read (a file's cache key; the check that it did not change before
    a write)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_regular(path: str, limit: int = 0) -> bytes:
    """The bytes of a regular file; a FIFO, socket or device is a SkipFile and is never opened
    for a blocking read, and an oversized file (over ``limit`` bytes, else ``MAX_BYTES``) is
    rejected before it is read. The one read facility, for scanned files and for the files a
    user names (baselines, receipts, repository lists) alike."""
    cap = limit or MAX_BYTES
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise FailFile(f"cannot read: {error.strerror}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"not a regular file ({file_type(info.st_mode)})")
        if info.st_size > cap:
            raise TooLarge(too_large(cap, info.st_size))
        chunks = []
        remaining = cap + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError as error:
        raise FailFile(f"cannot read: {error.strerror}") from None
    finally:
        os.close(descriptor)


def too_large(limit: int, size: int) -> str:
    """The one-line reason a file over ``limit`` bytes was not read."""
    return f"larger than {limit // (1024 * 1024)} MiB ({size} bytes); not read"


def read_project_bytes(path: str | os.PathLike[str], limit: int = 0) -> bytes | None:
    """A project file's bytes read for context (a build file, a header's includes); None when
    it is missing, not a regular file (a named pipe or device would block the run or never
    end), unreadable, or over ``limit`` bytes (else ``MAX_BYTES``)."""
    try:
        return read_regular(os.fspath(path), limit)
    except (SkipFile, FailFile):
        return None


def read_project_text(
    path: str | os.PathLike[str], *, strict: bool = False, limit: int = 0
) -> str | None:
    """A project file read for context (``.gitignore``, ``pyproject.toml``, requirements) as
    UTF-8 text; None when it is missing, not a regular file (a named pipe would block the run),
    unreadable, too large, or (with ``strict``) not valid UTF-8."""
    data = read_project_bytes(path, limit)
    if data is None:
        return None
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError:
        return None


def file_type(mode: int) -> str:
    """A short name for a non-regular file's type, for one-line reasons."""
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "directory"
    return "special file"


_BRACKETS = re.compile(r"[()\[\]{}]")
_NESTING_MESSAGE = re.compile(r"too many nested|too complex|recursion", re.IGNORECASE)


def check_nesting(text: str) -> None:
    """Raise FailFile when brackets nest deeper than Python allows, before any parser sees the
    text (a rough count first; CPython's own parser confirms it, so strings never mislead)."""
    if text.count("(") + text.count("[") + text.count("{") <= MAX_NESTING:
        return
    steps = (1 if bracket in "([{" else -1 for bracket in _BRACKETS.findall(text))
    if max(itertools.accumulate(steps), default=0) <= MAX_NESTING:
        return
    import ast

    try:
        ast.parse(text)
    except SyntaxError as error:
        if _NESTING_MESSAGE.search(str(error.msg)):
            raise FailFile(f"nested more than {MAX_NESTING} levels deep; not parsed") from None
    except (RecursionError, MemoryError):
        raise FailFile(f"nested more than {MAX_NESTING} levels deep; not parsed") from None


def decode_python(data: bytes) -> DecodedSource:
    """Decode Python source honouring the coding cookie and BOM; reject binaries."""
    _check_bytes(data)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise SkipFile(f"cannot determine encoding: {error.msg}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise SkipFile(f"undecodable bytes ({encoding}): {_short(error)}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return DecodedSource(text=text, encoding=encoding)


def decode_text(data: bytes) -> DecodedSource:
    """Decode a non-Python text file as UTF-8 (with BOM) or reject it."""
    _check_bytes(data)
    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    try:
        return DecodedSource(text=data.decode(encoding), encoding=encoding)
    except UnicodeDecodeError as error:
        raise SkipFile(f"undecodable bytes (utf-8): {_short(error)}") from None


def _check_bytes(data: bytes) -> None:
    """Binary files are skipped; the size was bounded when the file was read
    (``read_regular`` with its kind's ``size_limit``)."""
    if len(data) > NOTEBOOK_MAX_BYTES:
        raise TooLarge(too_large(NOTEBOOK_MAX_BYTES, len(data)))
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file (contains NUL bytes)")


def _short(error: Exception) -> str:
    return str(error).splitlines()[0][:160]


_MAGIC = re.compile(r"^\s*([!%])")


@dataclass(frozen=True, slots=True)
class NotebookCell:
    """One code cell: its index among all cells, its Python text (magics blanked) and shell lines."""

    index: int
    source: str
    shell_lines: tuple[tuple[int, str], ...]


def notebook_cells(text: str) -> tuple[dict[str, object], list[NotebookCell]]:
    """Code cells of a notebook; shell (``!``) and magic (``%``) lines become comments."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise FailFile(f"malformed notebook: {error.msg} at line {error.lineno}") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise FailFile("malformed notebook: no 'cells' list")
    cells: list[NotebookCell] = []
    for index, cell in enumerate(document["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw = cell.get("source", "")
        source = "".join(raw) if isinstance(raw, list) else str(raw)
        lines = source.split("\n")
        shell: list[tuple[int, str]] = []
        if source.lstrip().startswith("%%"):
            first = source.lstrip().split("\n", 1)[0]
            if re.match(r"%%(bash|sh|script\s+(ba)?sh)\b", first):
                shell = [(n, line) for n, line in enumerate(lines, start=1) if n > 1]
            cells.append(NotebookCell(index, "", tuple(shell)))
            continue
        python_lines: list[str] = []
        for number, line in enumerate(lines, start=1):
            match = _MAGIC.match(line)
            if match:
                shell.append((number, line))
                python_lines.append("#" + line[1:] if line.startswith(("!", "%")) else "#" + line)
            else:
                python_lines.append(line)
        cells.append(NotebookCell(index, "\n".join(python_lines), tuple(shell)))
    return document, cells
