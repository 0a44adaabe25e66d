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
    """A path for a URL or a SARIF ``uri``: percent-encoded, ``/`` kept."""
    return quote(str(value), safe="/")


#: Control characters a terminal acts on (escape sequences, bell, C1 controls), apart from the
#: tab, line feed and carriage return a diff needs.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """A diff or other multi-line text for a terminal: escape sequences (OSC window titles,
    OSC 52 clipboard writes, colour changes) from scanned files become visible ``\\x1b``."""
    return _TERMINAL_CONTROLS.sub(_visible, text)
