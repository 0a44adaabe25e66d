"""Version numbers and specifiers of requirements (PEP 440 through ``packaging``; Poetry
constraints translated)."""

from __future__ import annotations

import re

_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version(text: str) -> tuple[int, ...] | None:
    """The release segment of a version (``2.3.1+cu121`` → ``(2, 3, 1)``), else None."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def _cmp(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)


_CLAUSE_RE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*(\S+?)\s*$")


def spec_admits(spec: str, version: str) -> bool | None:
    """Whether a PEP 440 specifier admits ``version``; None when the specifier is not understood."""
    spec = spec.strip().strip("()").strip()
    target = parse_version(version)
    if target is None:
        return None
    if not spec:
        return True
    for clause in spec.split(","):
        if not clause.strip():
            continue
        match = _CLAUSE_RE.match(clause)
        if match is None:
            return None
        op, text = match.groups()
        if "$" in text or "{" in text:
            return None
        wildcard = text.endswith(".*")
        bound = parse_version(text[:-2] if wildcard else text)
        if bound is None:
            return None
        if wildcard:
            head = target[: len(bound)] + (0,) * max(0, len(bound) - len(target))
            same = head == bound
            ok = same if op == "==" else not same if op == "!=" else None
            if ok is None:
                return None
        elif op in ("==", "==="):
            ok = _cmp(target, bound) == 0
        elif op == "!=":
            ok = _cmp(target, bound) != 0
        elif op == ">=":
            ok = _cmp(target, bound) >= 0
        elif op == "<=":
            ok = _cmp(target, bound) <= 0
        elif op == ">":
            ok = _cmp(target, bound) > 0
        elif op == "<":
            ok = _cmp(target, bound) < 0
        else:  # ~=
            if len(bound) < 2:
                return None
            prefix = bound[:-1]
            ok = _cmp(target, bound) >= 0 and target[: len(prefix)] == prefix
        if not ok:
            return False
    return True


def poetry_to_pep440(spec: str) -> str:
    """Poetry's ``^1.2``, ``~1.2``, bare ``1.2.3`` and ``*`` as a PEP 440 specifier."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip()
        if not clause or clause == "*":
            continue
        if clause[0] in "^~" and not clause.startswith("~="):
            release = parse_version(clause[1:])
            if release is None:
                return clause
            if clause[0] == "^":
                index = next((i for i, part in enumerate(release) if part != 0), len(release) - 1)
            else:
                index = min(1, len(release) - 1) if len(release) > 1 else 0
            upper = list(release[: index + 1])
            upper[-1] += 1
            out.append(f">={'.'.join(map(str, release))},<{'.'.join(map(str, upper))}")
        elif clause[0].isdigit():
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)
