"""``# migrate: ignore`` and ``# migrate: ignore[ROC101,ROC102]`` comments on a finding's line,
and ``# migrate: ignore-file`` / ``# migrate: ignore-file[ROC101]`` on a line of their own for
the whole file (ruff's ``# ruff: noqa`` and ``# ruff: noqa: CODE``); ``//`` or ``/*`` in
C/C++/CUDA sources."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

#: Text every suppression comment holds: a file without it suppresses nothing.
SUPPRESSION_MARK = "migrate:"
#: How an unused file-level suppression is told apart from a line's in ``unused()``: its code
#: is ``file:*`` (every rule) or ``file:ROC101``.
FILE_PREFIX = "file:"
_CODES = r"(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?"
_PATTERN = re.compile(r"(?:#|//|/\*)\s*migrate:\s*ignore(?!-file)" + _CODES)
_FILE_PATTERN = re.compile(r"^\s*(?:#|//|/\*)\s*migrate:\s*ignore-file(?![\w-])" + _CODES)


def _codes(raw: str | None) -> frozenset[str] | None:
    """The codes of a comment's ``[...]`` (None without brackets: every rule)."""
    if raw is None:
        return None
    return frozenset(code.strip().upper() for code in raw.split(",") if code.strip())


@dataclass(slots=True)
class Suppressions:
    """Suppression comments of one text: per 1-based line, and for the whole file (by the line
    of each ``ignore-file`` comment); tracks which were used."""

    by_line: dict[int, frozenset[str] | None] = field(default_factory=dict)
    used: set[tuple[int, str]] = field(default_factory=set)
    whole_file: dict[int, frozenset[str] | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, whole_file: Iterable[str] = ()) -> Suppressions:
        """The comments of ``text``; ``whole_file``: more texts whose ``ignore-file`` comments
        apply too (the other cells of a notebook)."""
        found: dict[int, frozenset[str] | None] = {}
        files: dict[int, frozenset[str] | None] = {}
        others = [other for other in whole_file if SUPPRESSION_MARK in other]
        if SUPPRESSION_MARK not in text and not others:
            return cls(found)
        for number, line in enumerate(text.splitlines(), start=1):
            if SUPPRESSION_MARK not in line:
                continue
            whole = _FILE_PATTERN.search(line)
            if whole is not None:
                files[number] = _codes(whole.group("codes"))
                continue
            match = _PATTERN.search(line)
            if match is not None:
                found[number] = _codes(match.group("codes"))
        for other in others:  # counted as used or not in the text that holds them
            for line in other.splitlines():
                whole = _FILE_PATTERN.search(line)
                if whole is not None:
                    files[-1 - len(files)] = _codes(whole.group("codes"))
        return cls(found, whole_file=files)

    def suppresses(self, line: int, code: str) -> bool:
        for number, codes in self.whole_file.items():
            if codes is None or code in codes:
                self.used.add((number, FILE_PREFIX + (code if codes is not None else "*")))
                return True
        if line not in self.by_line:
            return False
        codes = self.by_line[line]
        if codes is None or code in codes:
            self.used.add((line, code if codes is not None else "*"))
            return True
        return False

    def unused(self) -> list[tuple[int, str]]:
        """(line, code) pairs of suppressions that silenced nothing; ``*`` for a bare ignore,
        ``file:*`` and ``file:CODE`` for the whole file's (``FILE_PREFIX``)."""
        out: list[tuple[int, str]] = []
        entries = [(line, codes, "") for line, codes in self.by_line.items()]
        entries += [
            (line, codes, FILE_PREFIX) for line, codes in self.whole_file.items() if line > 0
        ]
        for line, codes, prefix in sorted(entries, key=lambda entry: entry[0]):
            if codes is None:
                if (line, prefix + "*") not in self.used:
                    out.append((line, prefix + "*"))
            else:
                out.extend(
                    (line, prefix + code)
                    for code in sorted(codes)
                    if (line, prefix + code) not in self.used
                )
        return out


def comment_of(code: str) -> str:
    """The comment an unused suppression entry stands for: ``# migrate: ignore[ROC101]``,
    ``# migrate: ignore-file``..."""
    whole = code.startswith(FILE_PREFIX)
    bare = code[len(FILE_PREFIX) :] if whole else code
    label = "" if bare == "*" else f"[{bare}]"
    return f"# migrate: ignore{'-file' if whole else ''}{label}"
