"""Continuation lines aligned under an opening bracket stay aligned when a fix moves that
bracket: ``torch.cuda.amp.autocast(enabled=True,`` rewritten to ``torch.amp.autocast("cuda",
enabled=True,`` moves the first argument three columns right, and the lines below it that
were aligned with it (PEP 8's visual indent) are moved by as much. Hanging indents (nothing
after the bracket on its line) do not depend on the bracket's column and are left alone."""

from __future__ import annotations

import difflib

_OPEN = "([{"
_CLOSE = ")]}"


def _scan(line: str, depth_stack: list[int | None]) -> list[int | None]:
    """``depth_stack`` (the alignment column of each bracket open before ``line``, None for a
    hanging bracket) updated by ``line``: brackets opened and closed on it, strings and a
    comment skipped. A bracket with code after it on its line aligns at that code's column."""
    stack = list(depth_stack)
    quote = ""
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 2
                continue
            if line.startswith(quote, index):
                index += len(quote)
                quote = ""
                continue
        elif char == "#":
            break
        elif char in "'\"":
            quote = char * 3 if line.startswith(char * 3, index) else char
            index += len(quote)
            continue
        elif char in _OPEN:
            rest = line[index + 1 :]
            stripped = rest.lstrip(" \t")
            hanging = not stripped or stripped.startswith(("#", "\\"))
            stack.append(None if hanging else index + 1 + len(rest) - len(stripped))
        elif char in _CLOSE and stack:
            stack.pop()
        index += 1
    return stack


def keep_visual_indent(old: str, new: str) -> str:
    """``new`` with the unchanged continuation lines that were aligned under a bracket of a
    rewritten line moved by as many columns as that bracket moved; ``new`` itself when no such
    line exists or the rewrite changed the brackets a line leaves open."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    shifts: dict[int, int] = {}  # new line index -> columns to add
    opcodes = matcher.get_opcodes()
    for position, (tag, a0, a1, b0, b1) in enumerate(opcodes):
        if tag != "replace" or a1 - a0 != b1 - b0 or position + 1 >= len(opcodes):
            continue
        after_tag, c0, c1, d0, _ = opcodes[position + 1]
        if after_tag != "equal":
            continue
        old_stack = _stack_before(old_lines, a0)
        new_stack = list(old_stack)
        for offset in range(a1 - a0):
            old_stack = _scan(old_lines[a0 + offset], old_stack)
            new_stack = _scan(new_lines[b0 + offset], new_stack)
        if len(old_stack) != len(new_stack) or old_stack == new_stack:
            continue
        _follow(old_lines, c0, c1, d0, old_stack, new_stack, shifts)
    if not shifts:
        return new
    out = []
    for index, line in enumerate(new_lines):
        delta = shifts.get(index, 0)
        if delta > 0:
            line = " " * delta + line
        elif delta < 0:
            line = line[-delta:]
        out.append(line)
    return "".join(out)


def _stack_before(lines: list[str], stop: int) -> list[int | None]:
    stack: list[int | None] = []
    for line in lines[:stop]:
        stack = _scan(line, stack)
    return stack


def _follow(
    old_lines: list[str],
    start: int,
    stop: int,
    new_start: int,
    old_stack: list[int | None],
    new_stack: list[int | None],
    shifts: dict[int, int],
) -> None:
    """Record the shifts of the unchanged lines ``old_lines[start:stop]`` (``new_start`` on in
    the new text) whose innermost bracket is one the rewritten lines left open, aligned under
    it, while it stays open."""
    stack = list(old_stack)
    alive = len(old_stack)  # stack[:alive] are the rewritten lines' brackets
    for offset, line in enumerate(old_lines[start:stop]):
        if alive == 0:
            return
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if len(stack) == alive and stripped.strip():
            was, now = old_stack[alive - 1], new_stack[alive - 1]
            if was is not None and now is not None and indent == was and now != was:
                shifts[new_start + offset] = now - was
        stack = _scan(line, stack)
        alive = min(alive, len(stack))
