"""Neutralise text that comes from scanned code (paths, source lines, reasons) before any
output format shows it: control characters, line and paragraph separators and bidirectional
overrides become visible escapes, so a file name cannot move the cursor, recolour a terminal,
end a Markdown line, forge a CI annotation or reorder what a reviewer reads."""

from __future__ import annotations

import re
from urllib.parse import quote

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object) -> str:
    """``value`` as text with every invisible or control character written as an escape."""
    return _UNSAFE.sub(_visible, str(value))


def safe_line(value: object) -> str:
    """Like ``safe_text``, for prose of our own that may wrap: line breaks become spaces."""
    return safe_text(str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))


def url_path(value: object) -> str:
    """A path for a URL or a SARIF ``uri``: percent-encoded, ``/`` kept; a byte of a file name
    that is not UTF-8 is percent-encoded as that byte (``caf%E9.py``)."""
    return quote(str(value).encode("utf-8", "surrogateescape"), safe="/")


def portable(value: object) -> object:
    """A JSON-ready value with no lone surrogate left in any string: a byte of a file name that
    is not UTF-8 (read as a surrogate, PEP 383) is written as the text ``\\xNN`` (``caf\\xe9.py``),
    which strict JSON parsers accept. Documented in docs/ci.md."""
    if isinstance(value, str):
        if not _has_surrogate(value):
            return value
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {portable(key): portable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [portable(item) for item in value]
    return value


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


#: Control characters a terminal acts on (escape sequences, bell, C1 controls), apart from the
#: tab, line feed and carriage return a diff needs.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """A diff or other multi-line text for a terminal: escape sequences (OSC window titles,
    OSC 52 clipboard writes, colour changes) from scanned files become visible ``\\x1b``."""
    return _TERMINAL_CONTROLS.sub(_visible, text)
