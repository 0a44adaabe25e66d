"""Neutralise text that comes from scanned code (paths, source lines, reasons) before any
output format shows it: control characters, line and paragraph separators, bidirectional
overrides, bytes that are not UTF-8 and CI command prefixes become visible escapes, so a file
name cannot move the cursor, recolour a terminal, end a Markdown line or code span, forge a CI
annotation, break an XML report or reorder what a reviewer reads. One home for every format."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

#: Controls, invisible and direction-changing characters, lone surrogates (a byte of a file name
#: that is not UTF-8, read as ``\\udcNN`` by ``os.fsdecode``) and the two non-characters XML
#: forbids (U+FFFE, U+FFFF).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ud800-\udfff"
    "\ufeff\ufff9-\ufffb\ufffe\uffff]"
)
#: What a CI runner takes for a command anywhere in a log line (Azure's ``##vso[``, the older
#: ``##[`` form) or at its start (GitHub's ``::``, leading blanks allowed).
_CI_COMMAND = re.compile(r"##(?=vso\[|\[)|^(\s*):(?=:)", re.IGNORECASE)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, shown as that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _no_command(match: re.Match[str]) -> str:
    return "#\\x23" if match.group(1) is None else f"{match.group(1)}\\x3a"


def safe_text(value: object) -> str:
    """``value`` as text with every invisible or control character, every byte that is not
    UTF-8 and every CI command prefix written as an escape (``\\x1b``, ``\\xff``, ``#\\x23vso[``)."""
    return _CI_COMMAND.sub(_no_command, _UNSAFE.sub(_visible, str(value)))


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
        return valid_utf8(value)
    if isinstance(value, dict):
        return {portable(key): portable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [portable(item) for item in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_utf8(text: str) -> str:
    """``text`` with every lone surrogate written as a visible escape (``\\xff`` for the byte
    0xFF of a file name), so it encodes as UTF-8: the last guard before output is written."""
    return _SURROGATE.sub(_visible, text) if _SURROGATE.search(text) else text


#: Characters JSON leaves raw that a terminal or reader acts on (C1 controls, bidirectional and
#: invisible characters; the C0 controls JSON escapes by itself), and a CI command prefix.
_JSON_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\ufffe\uffff]"
    "|(?<=#)#(?=vso\\[|\\[)",
    re.IGNORECASE,
)


def json_text(value: object, **options: Any) -> str:
    """``value`` as JSON (``json.dumps(..., **options)``) that decodes to the same data and is
    safe to print: no lone surrogate (``portable``), no raw control, invisible or
    direction-changing character even with ``ensure_ascii=False``, and ``##vso[`` written
    ``#\\u0023vso[`` so a CI log (Azure reads the prefix anywhere in a line) runs no command."""
    text = json.dumps(portable(value), **options)
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


#: What a whole HTML document may not carry raw: ``_UNSAFE`` less the tab, line feed and
#: carriage return of its own layout.
_DOCUMENT_UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ud800-\udfff\ufeff\ufff9-\ufffb\ufffe\uffff]"
)
_HTML_CI_COMMAND = re.compile(r"(?<=#)#(?=vso\[|\[)|^(\s*):(?=:)", re.IGNORECASE | re.MULTILINE)


def html_document(text: str) -> str:
    """A rendered HTML document made safe to print or open whatever its escaped values held:
    controls, invisible characters and bytes that are not UTF-8 written as visible escapes
    (``\\x1b``), and a CI command prefix as the same text in a browser (``#&#35;vso[``, a
    line's leading ``::`` as ``&#58;:``)."""
    return _HTML_CI_COMMAND.sub(_html_no_command, _DOCUMENT_UNSAFE.sub(_visible, text))


def _html_no_command(match: re.Match[str]) -> str:
    return "&#35;" if match.group(1) is None else f"{match.group(1)}&#58;"


_BACKTICKS = re.compile("`+")


def markdown_code(value: object) -> str:
    """``value`` as a Markdown code span nothing in it can close (CommonMark): the fence is one
    backtick longer than the longest run of backticks in it, with a space inside each end when
    it starts or ends with a backtick or a space (CommonMark strips one from each end of a span
    that is not all spaces); controls are escaped first (``safe_text``)."""
    text = safe_text(value)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_inline(value: object, *, ours: bool = False) -> str:
    """One line of Markdown prose that may quote scanned text: its code spans (as CommonMark
    reads them: a run of backticks closed by the next run of the same length) are kept, and
    everything else is made literal: ``<``, ``>`` and ``&`` as entities, and, unless the text
    is documentation of our own (``ours``: its links and escapes kept), backslashes, unclosed
    backticks, ``[`` and ``]`` escaped, so no HTML tag, link or image can start there."""
    text = safe_line(value)
    runs = list(_BACKTICKS.finditer(text))
    out: list[str] = []
    position = index = 0
    while index < len(runs):
        opening = runs[index]
        out.append(_markdown_literal(text[position : opening.start()], ours))
        closing = next(
            (later for later in runs[index + 1 :] if len(later.group()) == len(opening.group())),
            None,
        )
        if closing is None:  # nothing closes it: literal backticks
            out.append(opening.group() if ours else "\\`" * len(opening.group()))
            position = opening.end()
            index += 1
        else:
            out.append(text[opening.start() : closing.end()])
            position = closing.end()
            index = runs.index(closing) + 1
    out.append(_markdown_literal(text[position:], ours))
    return "".join(out)


def _markdown_literal(text: str, ours: bool) -> str:
    if not ours:
        text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_GIT_LETTERS = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r"}


def diff_name(name: str) -> str:
    """A file name for a diff's ``---``/``+++`` line, quoted as git quotes one (``"a/d\\n.py"``,
    octal ``\\377`` for a byte) when it holds a control, invisible or direction-changing
    character, a byte that is not UTF-8, a quote or a backslash: no line of the diff can be
    forged, and ``git apply`` reads the name back."""
    if not _UNSAFE.search(name) and '"' not in name and "\\" not in name:
        return name
    out = []
    for char in name:
        if char in _GIT_LETTERS:
            out.append("\\" + _GIT_LETTERS[char])
        elif char in '"\\':
            out.append("\\" + char)
        elif _UNSAFE.match(char):
            out.extend(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape"))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


#: Control characters a terminal acts on (escape sequences, bell, C1 controls), apart from the
#: tab, line feed and carriage return a diff needs.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """A diff or other multi-line text for a terminal: escape sequences (OSC window titles,
    OSC 52 clipboard writes, colour changes) from scanned files become visible ``\\x1b``, and a
    byte that is not UTF-8 its ``\\xNN``."""
    return _TERMINAL_CONTROLS.sub(_visible, text)
