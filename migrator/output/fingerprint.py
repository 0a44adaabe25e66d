"""A finding's identity that survives unrelated edits: rule, repository-relative path and the
code of the flagged line (whitespace-normalised), numbered when the same code repeats in a file.
Line numbers are left out, so lines added above a finding do not change it."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from migrator.model import Finding

VERSION = "migrate/v1"


def code_of(finding: Finding) -> str:
    """The flagged line's code with runs of whitespace collapsed."""
    return " ".join(finding.source_line.split())


def fingerprints(findings: Sequence[Finding], paths: Sequence[str] | None = None) -> list[str]:
    """One fingerprint per finding, in order; ``paths`` overrides each finding's path."""
    shown = list(paths) if paths is not None else [finding.path for finding in findings]
    order = sorted(range(len(findings)), key=lambda i: (shown[i], findings[i].sort_key()))
    seen: Counter[tuple[str, str, str]] = Counter()
    out = [""] * len(findings)
    for index in order:
        finding = findings[index]
        identity = (finding.rule, shown[index], code_of(finding))
        occurrence = seen[identity]
        seen[identity] += 1
        text = "\0".join([*identity, str(occurrence)])
        out[index] = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return out
