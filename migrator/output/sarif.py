"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import migrator
from migrator.model import MEANINGS, Finding, Related, ScanResult, Severity
from migrator.output.escape import safe_text, url_path
from migrator.output.fingerprint import VERSION as FINGERPRINT
from migrator.output.fingerprint import fingerprints
from migrator.output.rule_docs import project_url, rule_url, summary
from migrator.output.sites import line_reader, sites_of

_LEVEL = {severity: meaning.sarif_level for severity, meaning in MEANINGS.items()}
_RANK = {"note": 0, "warning": 1, "error": 2}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _prefix(root: str) -> str:
    """A repository's folder name, which tells apart the paths of a log over several."""
    name = Path(root).name
    return f"{name}/" if name else ""


def _with_prefix(finding: Finding, prefix: str) -> Finding:
    """The finding with ``prefix`` before its path and its sites' paths."""
    if not prefix:
        return finding
    related = tuple(replace(site, path=prefix + site.path) for site in finding.related)
    return replace(finding, path=prefix + finding.path, related=related)


def render(
    results: list[ScanResult], repository: Path | None = None, scanned: Sequence[str] = ()
) -> str:
    """The SARIF log; with ``repository``, URIs are relative to it (``%SRCROOT%``). ``scanned``
    names the folders scanned (the results' own roots when not given), for the run's
    ``automationDetails``."""
    from migrator.engine.registry import all_rules

    # only the rules with results are described: a log is read per result, and every rule's
    # full help made a 23-result log 270 KB
    reported = {finding.rule for result in results for finding in result.findings}
    rules = [rule for rule in all_rules() if rule.code in reported]
    index = {rule.code: position for position, rule in enumerate(rules)}
    sarif_results: list[dict[str, Any]] = []
    multiple = len(results) > 1
    for result in results:
        prefix = _prefix(result.root) if multiple else ""
        line_of = line_reader(result)
        # every site of a folded problem is a result of its own: code scanning shows one alert
        # per result, and a site shown only as a related location has no alert of its own
        sites: list[tuple[Finding, Finding, int]] = []
        for finding in result.findings:
            expanded = sites_of(finding, line_of)
            sites.extend((finding, site, number) for number, site in enumerate(expanded))
        shown = [_with_prefix(site, prefix) for _, site, _ in sites]
        prints = fingerprints(shown)
        first_print = ""
        for (owner, _, number), site, fingerprint in zip(sites, shown, prints, strict=True):
            owner = _with_prefix(owner, prefix)
            if number == 0:
                first_print = fingerprint
            sarif_results.append(_result(owner, site, number, fingerprint, first_print, index))
    levels: dict[str, Counter[str]] = {}
    for entry in sarif_results:
        levels.setdefault(entry["ruleId"], Counter())[entry["level"]] += 1
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "migrate",
                        "version": migrator.__version__,
                        "informationUri": project_url("Homepage"),
                        "rules": [_rule(rule, levels.get(rule.code)) for rule in rules],
                    }
                },
                "automationDetails": {
                    "id": _automation_id(list(scanned) or [r.root for r in results], repository)
                },
                "results": sarif_results,
                **_invocations(results, prefix_of=_prefix if multiple else None),
                **(
                    {"originalUriBaseIds": {"%SRCROOT%": {"uri": repository.as_uri() + "/"}}}
                    if repository is not None
                    else {}
                ),
            }
        ],
    }
    from migrator.output.escape import json_text

    return json_text(document, indent=2) + "\n"


def _invocations(results: list[ScanResult], prefix_of: Any = None) -> dict[str, Any]:
    """The unknown and CUDA-only native dependencies as tool execution notifications (they are
    what the analysis could not settle or read from an environment, not results of a rule):
    ``warning`` for a CUDA-only build, ``note`` for an unknown, at the first import site."""
    from migrator.output.packages import line

    notifications: list[dict[str, Any]] = []
    for result in results:
        prefix = prefix_of(result.root) if prefix_of is not None else ""
        for package in result.packages:
            if not package.is_concern:
                continue
            entry: dict[str, Any] = {
                "descriptor": {"id": f"{package.status}-native-dependency"},
                "level": "warning" if package.status == "cuda-only" else "note",
                "message": {"text": safe_text(line(package))},
                "properties": {"package": package.name, "status": package.status},
            }
            if package.sites:
                path, row = package.sites[0]
                entry["locations"] = [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": url_path(prefix + path),
                                "uriBaseId": "%SRCROOT%",
                            },
                            "region": {"startLine": row},
                        }
                    }
                ]
            notifications.append(entry)
    if not notifications:
        return {}
    return {
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}]
    }


def _automation_id(roots: list[str], repository: Path | None) -> str:
    """``migrate/<scanned folder>/``: the category that tells this analysis apart from others of
    the same repository in code scanning (the trailing ``/`` leaves the run id to the host)."""
    if len(roots) != 1:
        return "migrate/several/"
    root = Path(roots[0]).absolute()
    folder = root if root.is_dir() else root.parent
    if repository is not None:
        try:
            relative = folder.resolve().relative_to(repository.resolve()).as_posix()
        except ValueError:
            relative = folder.name
    else:
        relative = folder.name
    relative = url_path(relative.strip("/")) if relative not in ("", ".") else ""
    return f"migrate/{relative}/" if relative else "migrate/"


def _result(
    owner: Finding,
    site: Finding,
    number: int,
    fingerprint: str,
    problem: str,
    index: dict[str, int],
) -> dict[str, Any]:
    """The result for one site of ``owner`` (``number`` 0: the site the finding shows). Each
    names the other sites as related locations (the first site names them all, a further site
    names the first), and every site of one problem carries that problem's key
    (``properties.problem``: the first site's fingerprint)."""
    total = 1 + len(owner.related)
    message = owner.message
    if number > 0:  # the finding's message counts the further sites; a site says which it is
        from migrator.engine.aggregate import more_sites

        message = message.replace(more_sites(total - 1), "")
        message += f" (site {number + 1} of {total} of this problem; the first is at "
        message += f"{owner.path}:{owner.line})"
    message = safe_text(message)
    entry: dict[str, Any] = {
        "ruleId": owner.rule,
        "ruleIndex": index.get(owner.rule, 0),
        "level": _LEVEL[owner.severity],
        "message": {"text": message},
        "locations": [_location(site)],
        "partialFingerprints": {FINGERPRINT: fingerprint},
    }
    if number == 0 and owner.related:
        entry["relatedLocations"] = [
            {
                "id": position,
                **_location(other),
                "message": {
                    "text": f"{other.rule}: a site of this problem"
                    if other.rule
                    else "another site of this problem"
                },
            }
            for position, other in enumerate(owner.related, start=1)
        ]
    elif number > 0:
        entry["relatedLocations"] = [
            {"id": 1, **_location(owner), "message": {"text": "the first site of this problem"}}
        ]
        via = owner.related[number - 1].rule
        if via and via != owner.rule:
            entry["message"]["text"] += f" (found by {safe_text(via)})"
    properties: dict[str, Any] = {}
    if total > 1:
        properties["problem"] = problem
    if site.cell is not None:
        properties["notebookCell"] = site.cell
    if owner.guard:
        properties["guard"] = owner.guard
    if owner.severity is Severity.HYGIENE:
        properties["severity"] = "hygiene"
    if properties:
        entry["properties"] = properties
    return entry


def _location(place: Finding | Related) -> dict[str, Any]:
    """A ``physicalLocation`` under ``%SRCROOT%``."""
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": url_path(place.path), "uriBaseId": "%SRCROOT%"},
            "region": {
                "startLine": place.line,
                "startColumn": place.column,
                "endLine": place.end_line,
                "endColumn": place.end_column,
            },
        }
    }


def _rule(rule: Any, levels: Counter[str] | None = None) -> dict[str, Any]:
    """A reporting descriptor: a one-line description, the rule's page and its Markdown help.
    Its default level is the level of its results in this log (the most common, the more
    severe on a tie), so that a consumer reading either sees the same; the catalog's level
    where the rule has none."""
    level = _LEVEL[rule.severity]
    if levels:
        level = max(levels, key=lambda name: (levels[name], _RANK.get(name, 0)))
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": summary(rule)},
        "help": {
            "text": f"{summary(rule)} See `migrate explain {rule.code}`.",
            "markdown": rule.doc(),
        },
        "defaultConfiguration": {"level": level},
        "properties": {"category": rule.category, "fact": rule.fact},
    }
    url = rule_url(rule.code)
    if url:
        descriptor["helpUri"] = url
    return descriptor
