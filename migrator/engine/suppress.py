"""``# migrate: ignore`` and ``# migrate: ignore[ROC101,ROC102]`` comments on a finding's line
(``// migrate: ignore[...]`` in C/C++/CUDA sources)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Text every suppression comment holds: a file without it suppresses nothing.
SUPPRESSION_MARK = "migrate:"
_PATTERN = re.compile(r"(?:#|//|/\*)\s*migrate:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?")


@dataclass(slots=True)
class Suppressions:
    """Suppression comments of one text, by 1-based line; tracks which were used."""

    by_line: dict[int, frozenset[str] | None] = field(default_factory=dict)
    used: set[tuple[int, str]] = field(default_factory=set)

    @classmethod
    def parse(cls, text: str) -> Suppressions:
        found: dict[int, frozenset[str] | None] = {}
        if SUPPRESSION_MARK not in text:
            return cls(found)
        for number, line in enumerate(text.splitlines(), start=1):
            match = _PATTERN.search(line)
            if match is None:
                continue
            codes = match.group("codes")
            found[number] = (
                None
                if codes is None
                else frozenset(code.strip().upper() for code in codes.split(",") if code.strip())
            )
        return cls(found)

    def suppresses(self, line: int, code: str) -> bool:
        if line not in self.by_line:
            return False
        codes = self.by_line[line]
        if codes is None or code in codes:
            self.used.add((line, code if codes is not None else "*"))
            return True
        return False

    def unused(self) -> list[tuple[int, str]]:
        """(line, code) pairs of suppressions that silenced nothing; ``*`` for a bare ignore."""
        out: list[tuple[int, str]] = []
        for line, codes in sorted(self.by_line.items()):
            if codes is None:
                if (line, "*") not in self.used:
                    out.append((line, "*"))
            else:
                out.extend((line, code) for code in sorted(codes) if (line, code) not in self.used)
        return out
