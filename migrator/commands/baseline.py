"""Adopting migrate on a legacy codebase: a baseline file of known findings (matched by rule,
repository-relative path and code fingerprint, so line shifts do not matter), and "only what is
new since a git ref" (findings on lines changed since then).

A baseline holds every site of a folded problem, not only the one a finding shows: fixing that
site leaves the others known, and a finding is new when one of its sites is."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from migrator.errors import MigrateError
from migrator.files.paths import repository_root
from migrator.model import FileResult, Finding, ScanResult, Status
from migrator.output.fingerprint import VERSION, fingerprints
from migrator.process.git import run_git
from migrator.process.helper import HelperError

#: 2: every site of a folded problem (1 held only the site a finding showed).
FORMAT = 2
_Key = tuple[str, str, str]


def _keys(result: ScanResult) -> tuple[Path, list[Finding], list[_Key]]:
    """A result's findings with their (rule, repository path, fingerprint) keys."""
    root = Path(result.root).resolve()
    base = root.parent if root.is_file() else root
    repository = repository_root(base)
    findings = [finding for file in result.files for finding in file.findings]
    paths = [Path(os.path.relpath(base / f.path, repository)).as_posix() for f in findings]
    prints = fingerprints(findings, paths)
    keys = [(f.rule, p, fp) for f, p, fp in zip(findings, paths, prints, strict=True)]
    return repository, findings, keys


def _site_keys(result: ScanResult) -> list[tuple[Finding, list[_Key]]]:
    """Each finding with the keys of all its sites: its own, then each folded site's (read
    from the site's line, so that they too survive line shifts)."""
    from migrator.output.sites import line_reader, sites_of

    line_of = line_reader(result)
    owners: list[int] = []
    sites: list[Finding] = []
    findings = [finding for file in result.files for finding in file.findings]
    for number, finding in enumerate(findings):
        for site in sites_of(finding, line_of):
            owners.append(number)
            sites.append(site)
    _, _, keys = _keys(ScanResult(result.root, [FileResult("", Status.SCANNED, tuple(sites))]))
    grouped: list[tuple[Finding, list[_Key]]] = [(finding, []) for finding in findings]
    for owner, key in zip(owners, keys, strict=True):
        grouped[owner][1].append(key)
    return grouped


def write(results: list[ScanResult], destination: Path) -> int:
    """Write every finding of ``results`` as the baseline; returns how many."""
    entries = []
    for result in results:
        for finding, keys in _site_keys(result):
            lines = [finding.line, *(site.line for site in finding.related)]
            for (rule, path, fingerprint), line in zip(keys, lines, strict=True):
                entries.append(
                    {"rule": rule, "path": path, "fingerprint": fingerprint, "line": line}
                )
    entries.sort(key=lambda entry: (entry["path"], entry["line"], entry["rule"]))
    document = {"format": FORMAT, "fingerprint": VERSION, "findings": entries}
    from migrator.errors import MigrateError
    from migrator.files.writer import WriteRefused, write_output

    try:
        write_output(destination, json.dumps(document, indent=1) + "\n", _roots(results))
    except WriteRefused as error:
        raise MigrateError(str(error)) from None
    return len(entries)


def _roots(results: list[ScanResult]) -> list[Path]:
    return [Path(result.root) for result in results if result.root]


#: A baseline larger than this is refused (a million findings fit in about 150 MiB).
BASELINE_MAX_BYTES = 256 * 1024 * 1024


def load(source: Path) -> Counter[_Key]:
    """The baseline's keys (a multiset); a missing or malformed file is a one-line error."""
    from migrator.files.sources import FailFile, SkipFile, read_regular

    try:
        data = read_regular(str(source), limit=BASELINE_MAX_BYTES)
    except (SkipFile, FailFile) as error:
        raise MigrateError(f"cannot read baseline {source}: {error}") from None
    try:
        document = json.loads(data.decode("utf-8"))
        if document.get("format") != FORMAT:
            raise MigrateError(
                f"baseline {source} has format {document.get('format')!r}, not {FORMAT} (this "
                "version keeps every site of a problem): write it again with --write-baseline"
            )
        if document.get("fingerprint") != VERSION:
            raise ValueError(f"fingerprint scheme {document.get('fingerprint')!r} is not {VERSION}")
        return Counter((e["rule"], e["path"], e["fingerprint"]) for e in document["findings"])
    except (OSError, UnicodeDecodeError) as error:
        raise MigrateError(f"cannot read baseline {source}: {error}") from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise MigrateError(f"baseline {source} is not a migrate baseline: {error}") from None


def without_baselined(results: list[ScanResult], baseline: Counter[_Key]) -> list[ScanResult]:
    """The results less every finding the baseline already holds: all of whose sites it holds
    (a finding with a new site is reported)."""
    remaining = Counter(baseline)
    out = []
    for result in results:
        dropped = set()
        for finding, keys in _site_keys(result):
            wanted = Counter(keys)
            if all(remaining[key] >= count for key, count in wanted.items()):
                remaining -= wanted
                dropped.add(id(finding))
        out.append(_keep(result, lambda finding: id(finding) not in dropped))  # noqa: B023
    return out


def changed_since(results: list[ScanResult], ref: str) -> list[ScanResult]:
    """The results restricted to findings on lines added or changed since the git ``ref``
    (untracked files count as new)."""
    out = []
    for result in results:
        repository, findings, keys = _keys(result)
        changed = _changed_lines(repository, ref)
        new = {
            id(finding)
            for finding, (_, path, _) in zip(findings, keys, strict=True)
            if path in changed and _touches(finding, changed[path])
        }
        out.append(_keep(result, lambda finding: id(finding) in new))  # noqa: B023
    return out


def _touches(finding: Finding, lines: set[int] | None) -> bool:
    """Whether the finding's lines meet the changed ones (``None``: a new file)."""
    if lines is None:
        return True
    return any(
        line in lines for line in range(finding.line, max(finding.end_line, finding.line) + 1)
    )


def _keep(result: ScanResult, keep: Callable[[Finding], bool]) -> ScanResult:
    files = [
        replace(file, findings=tuple(f for f in file.findings if keep(f))) for file in result.files
    ]
    return ScanResult(result.root, files, result.packages, result.environment)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _changed_lines(repository: Path, ref: str) -> dict[str, set[int] | None]:
    """Per repository path, the lines added or changed since ``ref`` (``None``: the whole file)."""
    if ref.startswith("-"):
        # `--output=FILE` would make git write a file: a ref is never an option
        raise MigrateError(f"--new-since: {ref!r} is not a git revision")
    diff = _git(repository, "diff", "--unified=0", "--no-color", "--no-ext-diff", ref, "--")
    changed: dict[str, set[int] | None] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            current = target[2:] if target.startswith("b/") else None
            if current is not None:
                changed.setdefault(current, set())
        elif current is not None and (hunk := _HUNK.match(line)):
            start, count = int(hunk.group(1)), int(hunk.group(2) or "1")
            lines = changed[current]
            if lines is not None:
                lines.update(range(start, start + count))
    for path in _git(repository, "ls-files", "--others", "--exclude-standard").splitlines():
        changed[path] = None
    return changed


def _git(repository: Path, *args: str) -> str:
    try:
        code, out, err = run_git(repository, ["-c", "core.quotepath=off", *args], timeout=120)
    except HelperError as error:
        raise MigrateError(f"--new-since needs git: {error}") from None
    if code is None:
        raise MigrateError(f"--new-since: git {args[0]} did not finish within 120 s")
    if code != 0:
        first = (err.strip().splitlines() or ["git failed"])[0]
        raise MigrateError(f"--new-since: git {args[0]} failed in {repository}: {first}")
    return out
