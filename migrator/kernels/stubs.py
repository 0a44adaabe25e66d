"""Whether a stretch of C/C++ does anything once compiled: a branch or a function body that
holds only diagnostics (``#pragma message``, ``#warning``, ``#error``), assertions, traps,
``printf``, ``(void)`` casts and returns of a constant is a stub, not an implementation. An
``#else`` that is a stub is no AMD path (issue #48: a kernel whose ``#else`` only printed a
``#pragma message`` compiled to nothing on AMD and was hidden as guarded).

Read from the bytes alone; ``#define``, ``#include`` and ``#undef`` lines are code (a branch
that defines a macro for AMD is an AMD path). Ampere's async-copy bookkeeping PTX
(``cp.async.commit_group``, ``cp.async.wait_group``, ``cp.async.wait_all``) is no code either:
it only orders copies issued by other ``cp.async`` instructions, and where those have no AMD
path they are the problem, reported at their own lines; where they fall back to plain loads on
AMD (flashinfer's ``load_128``), there is nothing to commit or wait for."""

from __future__ import annotations

import functools
import re

#: Comments, and string and character literals (a ``;`` or ``(`` inside one is no code).
#: A literal ends at its quote, at the end of its line, or at the end of the text: the end
#: always matches where the characters stop, so a bad literal is never scanned twice.
_COMMENT_OR_LITERAL = re.compile(
    rb"//[^\n]*|/\*.*?(?:\*/|\Z)"
    rb"|\"(?:[^\"\\\n]|\\.)*(?:\"|(?=\n)|\\?\Z)|'(?:[^'\\\n]|\\.)*(?:'|(?=\n)|\\?\Z)",
    re.S,
)
#: Comments only (an unclosed ``/*`` runs to the end, as the compiler reads it).
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)
#: Constructs that make the code fail wherever it is compiled or run.
FAILS = re.compile(
    rb"#\s*error|__trap\s*\(|static_assert\s*\(\s*(false|0)|assert\s*\(\s*(false|0)|__builtin_trap"
    rb"|asm\s*\(\s*\"trap"
)
#: Preprocessor lines that are not code (diagnostics, conditionals, hints), continuations
#: included; ``#define``/``#undef``/``#include``/``#import`` are code.
_DIRECTIVE = re.compile(
    rb"(?m)^[ \t]*#(?![ \t]*(?:define|undef|include|import)\b)(?:[^\n]*\\\r?\n)*[^\n]*"
)
#: Calls that only report, check or stop: their statement computes nothing.
_REPORTING_CALL = re.compile(
    rb"\b(?:printf|assert|static_assert|__trap|__builtin_trap|__builtin_unreachable|abort"
    rb"|__assert_fail|__assertfail"
    # a project's assertion macro (``RUNTIME_ASSERT("Unsupported architecture")``, ``PANIC``):
    # an upper-case name that says it stops or asserts
    rb"|[A-Z][A-Z0-9_]*(?:ASSERT|UNREACHABLE|TRAP|PANIC|ABORT)[A-Z0-9_]*"
    # a message to the error stream: ``fprintf(stderr, ...)``
    rb"|fprintf(?=\s*\(\s*stderr\b))\s*\("
)
#: A statement that only writes to the error stream (``std::cerr << "GPU not compiled";``).
_ERROR_STREAM = re.compile(rb"\bstd\s*::\s*(?:cerr|clog)\b[^;{}]*;")
_VOID_CAST = re.compile(rb"\(\s*void\s*\)\s*[\w.\->\[\]:]+\s*;")
_NUMBER = (
    rb"[-+]?\s*(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[uUlLfF]*"
)
_CONSTANT = (
    rb"(?:" + _NUMBER + rb"|true|false|nullptr|NULL|\{\s*\}"
    rb"|[A-Za-z_][\w:<>, ]{0,120}(?:\(\s*" + _NUMBER + rb"\s*\)|\{\s*(?:" + _NUMBER + rb")?\s*\})"
    # an upper-case constant or enumerator (``RNNT_STATUS_EXECUTION_FAILED``, ``Status::FAILED``)
    rb"|(?:[A-Za-z_]\w*\s*::\s*)*[A-Z][A-Z0-9_]+\b(?!\s*[(\[.<]|\s*->))"
)
#: ``return;`` and ``return <constant>;``: a stub's answer, not a computation.
_CONSTANT_RETURN = re.compile(rb"\breturn\b\s*(?:" + _CONSTANT + rb")?\s*;")
_LEFTOVER = re.compile(rb"[\s;{}]+")
#: An ``asm`` statement whose only instruction is async-copy bookkeeping (commit a group of
#: ``cp.async`` copies, wait for groups): its operands may hold strings (``"n"(n)``).
ASYNC_BOOKKEEPING = re.compile(
    rb"\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(\s*"
    rb"\"\s*cp\.async\.(?:commit_group|wait_group|wait_all)\b[^\"]*\"(?:[^;\"]|\"[^\"]*\")*;"
)
_SPACES = re.compile(rb"\s+")
_SEMICOLON = re.compile(rb"\s*;")


def holds_code(body: bytes, stub_macros: frozenset[str] = frozenset()) -> bool:
    """Whether ``body`` holds code that computes something: False for a stub (nothing but
    comments, non-defining directives, assertions, ``printf``, messages to ``stderr`` or
    ``std::cerr``, traps, ``(void)`` casts, ``return;`` or ``return <constant>;`` (a number,
    an upper-case constant or enumerator), uses of ``stub_macros``: the file's macros that
    expand to such a stub or to nothing) and for code that must fail (``#error``, a trap,
    ``static_assert(false)``, ``assert(false)``)."""
    body = ASYNC_BOOKKEEPING.sub(b" ", body)
    without_comments = _COMMENT.sub(b" ", body)
    if not without_comments.strip() or FAILS.search(without_comments):
        return False
    text = _COMMENT_OR_LITERAL.sub(_literal, body)
    text = _DIRECTIVE.sub(b" ", text)
    text = _SPACES.sub(b" ", text)  # one space at most: the patterns below never backtrack far
    text = _drop_calls(text, _REPORTING_CALL)
    text = _ERROR_STREAM.sub(b" ", text)
    if stub_macros:
        called, named = _macro_patterns(stub_macros)
        text = named.sub(b" ", _drop_calls(text, called))
    text = _VOID_CAST.sub(b" ", text)
    text = _CONSTANT_RETURN.sub(b" ", text)
    return bool(_LEFTOVER.sub(b"", text))


def _literal(match: re.Match[bytes]) -> bytes:
    token = match.group(0)
    return b'""' if token[:1] in (b'"', b"'") else b" "


@functools.lru_cache(maxsize=64)
def _macro_patterns(names: frozenset[str]) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(a call of one of ``names``, a use of one of them as a word with its ``;``)."""
    words = b"|".join(re.escape(name.encode()) for name in sorted(names))
    return re.compile(rb"\b(?:" + words + rb")\b ?\("), re.compile(rb"\b(?:" + words + rb")\b ?;?")


def _drop_calls(text: bytes, calls: re.Pattern[bytes]) -> bytes:
    """``text`` without the statements that only make one of ``calls`` (``printf(...);``,
    ``assert(...);``); from a call whose parentheses never close on, the text is left as it is
    (code)."""
    out: list[bytes] = []
    position = 0
    for match in calls.finditer(text):
        if match.start() < position:
            continue
        close = _closing_parenthesis(text, match.end() - 1)
        if close is None:
            break  # unbalanced from here on: the rest stays (code), and is not scanned again
        end = close + 1
        rest = _SEMICOLON.match(text, end)
        if rest is not None:
            end = rest.end()
        out.append(text[position : match.start()])
        out.append(b" ")
        position = end
    out.append(text[position:])
    return b"".join(out)


def _closing_parenthesis(text: bytes, opening: int) -> int | None:
    depth = 0
    for index in range(opening, len(text)):
        char = text[index]
        if char == 0x28:  # (
            depth += 1
        elif char == 0x29:  # )
            depth -= 1
            if depth == 0:
                return index
    return None


__all__ = ["FAILS", "holds_code"]
