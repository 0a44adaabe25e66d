"""What a report could not tell about a project and that could change its verdict: files it
could not analyse or skipped, builds it could not read, native dependencies of the GPU code it
could not clear, kernels no HIP compile checked, and the run on ROCm that did not happen. Shown
beside the verdict in every format."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from migrator.model import Finding
from migrator.reporting.readiness.meta import MetaLookup, meta_for
from migrator.reporting.readiness.score import Verdict

#: At most this many files are named in one unknown; the rest are counted.
_NAMED = 3


def _files(pairs: Sequence[tuple[str, str]]) -> str:
    named = ", ".join(f"`{path}` ({reason})" for path, reason in pairs[:_NAMED])
    more = len(pairs) - _NAMED
    return named + (f" and {more} more" if more > 0 else "")


def unknowns_of(
    verdict: Verdict,
    findings: Sequence[Finding],
    skipped: Sequence[tuple[str, str]],
    failed: Sequence[tuple[str, str]],
    extensions: Sequence[Any],
    lookup: MetaLookup,
    native: Sequence[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """(what, detail) of each unknown, worst first: what was not read can hold a blocker, so
    none of it is counted as fine (a ready verdict says so); ``native``: one entry per unknown or
    CUDA-only native dependency imported from code users run (``native.native_unknown``)."""
    out: list[tuple[str, str]] = []
    if failed:
        out.append(("not analysed", f"{len(failed)} file(s) could not be read: {_files(failed)}"))
    unread: dict[str, list[Finding]] = {}
    for finding in findings:
        if meta_for(finding, lookup).unknown:
            unread.setdefault(finding.rule, []).append(finding)
    for code, group in unread.items():
        first = group[0]
        where = f"`{first.path}:{first.line}`" + (
            f" and {len(group) - 1} more" if len(group) > 1 else ""
        )
        out.append((f"not read ({code})", f"{first.message} ({where})"))
    out.extend(native)
    if extensions:
        out.append(
            (
                "CUDA kernels",
                f"{len(extensions)} extension(s): no HIP compile checked them here "
                "(`migrate kernels PATH --compile`)",
            )
        )
    if skipped:
        out.append(("skipped", f"{len(skipped)} file(s) not scanned: {_files(skipped)}"))
    run = "not run: the verdict reads the code (`migrate verify` runs it)"
    if verdict is Verdict.READY and (failed or unread):
        run += "; what was not read could still hold a blocker"
    out.append(("on ROCm", run))
    return out
