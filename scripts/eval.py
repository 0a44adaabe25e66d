"""Measure how far `migrate scan` can be trusted: strict precision against hand-made finding labels
and recall against a hand-made list of real sites.

Usage: python scripts/eval.py [--corpus DIR] [--labels DIR] [--projects a,b] [--save DIR | --load DIR]
                              [--todo N] [--json]

The labels live in ``tests/eval`` (see its README): ``findings/*.jsonl`` holds one verdict per
labelled finding (true / false / duplicate / wrong-message / advisory, with a reason) and
``sites/*.jsonl`` the places a scan must report. A label names a project, a path, a line, a short
fingerprint of that line (robust to small shifts) and the rule family; it never holds project code.

The script runs the current ``migrate scan --format json`` once per labelled project of the corpus
folder, matches every finding (and every related site of an aggregated finding) to the labels,
and prints strict precision per rule and overall, the number of findings with no label, and
recall on the site list. It never writes into the corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LABELS = ROOT / "tests" / "eval"
DEFAULT_CORPUS = Path("/work/corpus")
SHIFT_WINDOW = 40  # lines a labelled line may move and still be found by its fingerprint
VERDICTS = ("true", "false", "duplicate", "wrong-message", "advisory")
QUIET_SEVERITIES = ("info", "hygiene", "note")


def fingerprint(text: str) -> str:
    """Short hash of one source line without whitespace, so a label survives re-indentation."""
    squeezed = re.sub(r"\s+", "", text)
    return hashlib.sha1(squeezed.encode("utf-8", "replace")).hexdigest()[:10]


@dataclass
class Location:
    """One place a finding points at: the primary location or one of its related sites."""

    path: str
    line: int


@dataclass
class Finding:
    """The parts of a scan finding the evaluation looks at."""

    project: str
    rule: str
    name: str
    category: str
    severity: str
    message: str
    primary: Location
    related: list[Location] = field(default_factory=list)

    def families(self) -> set[str]:
        """Every name a label may use for this finding's rule family."""
        return {self.rule, self.name, self.category}


@dataclass
class Label:
    """One hand-made verdict about a finding or one site that must be reported."""

    project: str
    path: str
    line: int
    fp: str
    family: set[str]
    verdict: str
    reason: str
    severities: set[str]
    source: str
    problem: str = ""


class LineReader:
    """Reads corpus lines on demand to compare fingerprints (cached per file)."""

    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self._cache: dict[tuple[str, str], list[str]] = {}

    def lines(self, project: str, path: str) -> list[str]:
        key = (project, path)
        if key not in self._cache:
            try:
                text = (self.corpus / project / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._cache[key] = text.splitlines()
        return self._cache[key]

    def fp_at(self, project: str, path: str, line: int) -> str | None:
        lines = self.lines(project, path)
        return fingerprint(lines[line - 1]) if 0 < line <= len(lines) else None


def _family(value: Any) -> set[str]:
    if isinstance(value, list):
        return {str(v) for v in value}
    return {str(value)}


def load_labels(folder: Path) -> tuple[list[Label], list[Label]]:
    """Read ``findings/*.jsonl`` and ``sites/*.jsonl``; a malformed line is a usage error."""
    found: dict[str, list[Label]] = {"findings": [], "sites": []}
    for kind in found:
        for file in sorted((folder / kind).glob("*.jsonl")):
            for number, raw in enumerate(file.read_text().splitlines(), 1):
                if not raw.strip() or raw.lstrip().startswith("//"):
                    continue
                where = f"{file.relative_to(folder)}:{number}"
                try:
                    data = json.loads(raw)
                    verdict = data.get("verdict", "site")
                    if kind == "findings" and verdict not in VERDICTS:
                        raise ValueError(f"verdict {verdict!r} is not one of {VERDICTS}")
                    found[kind].append(
                        Label(
                            project=data["project"],
                            path=data["path"],
                            line=int(data["line"]),
                            fp=data.get("fp", ""),
                            family=_family(data.get("family", "*")),
                            verdict=verdict,
                            reason=data.get("reason", ""),
                            severities=set(data.get("severities", [])),
                            source=where,
                            problem=str(data.get("problem", "")),
                        )
                    )
                except (ValueError, KeyError, TypeError) as error:
                    raise SystemExit(f"eval: {where}: bad label ({error})") from None
    return found["findings"], found["sites"]


def _location(data: dict[str, Any]) -> Location:
    path = str(data.get("path", ""))
    if "cell" in data:  # a notebook finding: lines count within the cell
        path = f"{path}[cell {data['cell']}]"
    return Location(path=path, line=int(data.get("line") or 0))


def parse_report(project: str, report: dict[str, Any]) -> list[Finding]:
    """Turn one ``scan --format json`` report into findings, keeping related sites."""
    findings = []
    for item in report.get("findings", []):
        related = [
            _location(r)
            for r in item.get("related", []) or item.get("related_locations", []) or []
            if isinstance(r, dict)
        ]
        findings.append(
            Finding(
                project=project,
                rule=str(item.get("rule", "")),
                name=str(item.get("name", "")),
                category=str(item.get("category", "")),
                severity=str(item.get("severity", "")),
                message=str(item.get("message", "")),
                primary=_location(item),
                related=related,
            )
        )
    return findings


def scan(project_dir: Path) -> dict[str, Any]:
    """Run this checkout's scanner on one project, from inside it (so that the report's paths
    are the project-relative ones the labels use), and return its JSON report."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "migrator.cli", "scan", "--no-cache", "--format", "json", "."],
        capture_output=True,
        text=True,
        cwd=project_dir,
        env={**os.environ, "PYTHONPATH": path},
    )
    if result.returncode not in (0, 1):
        print(f"eval: scan of {project_dir.name} failed: {result.stderr.strip()[-300:]}")
        return {"findings": []}
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _same_place(label: Label, project: str, loc: Location, reader: LineReader) -> bool:
    """A label names this location: same file, and the same line or its fingerprint nearby."""
    if label.project != project or label.path != loc.path:
        return False
    if label.line == loc.line:
        return True
    if not label.fp or abs(label.line - loc.line) > SHIFT_WINDOW:
        return False
    if reader.fp_at(project, loc.path, label.line) == label.fp:
        return False  # the labelled line has not moved: only that exact line matches
    return reader.fp_at(project, loc.path, loc.line) == label.fp


def _family_matches(label: Label, finding: Finding) -> bool:
    return "*" in label.family or bool(label.family & finding.families())


def _label_at(
    finding: Finding, loc: Location, labels: list[Label], reader: LineReader
) -> Label | None:
    for label in labels:
        if _family_matches(label, finding) and _same_place(label, finding.project, loc, reader):
            return label
    return None


def match_label(
    finding: Finding, by_place: dict[tuple[str, str], list[Label]], reader: LineReader
) -> Label | None:
    """The label for this finding: the one at its primary location, else (for an aggregated
    finding) the best one among its related sites, a real problem first."""
    primary = _label_at(
        finding, finding.primary, by_place.get((finding.project, finding.primary.path), []), reader
    )
    if primary is not None or not finding.related:
        return primary
    found = [
        label
        for loc in finding.related
        if (label := _label_at(finding, loc, by_place.get((finding.project, loc.path), []), reader))
    ]
    real = [label for label in found if label.verdict in ("true", "advisory", "duplicate")]
    return real[0] if real else (found[0] if found else None)


def strict_verdict(finding: Finding, label: Label) -> str:
    """The verdict counted: a true label at a severity the label rules out is a wrong message;
    an advisory counts as correct only at info or hygiene level."""
    if label.verdict == "advisory":
        return "true" if finding.severity in QUIET_SEVERITIES else "wrong-message"
    if label.verdict == "true" and label.severities and finding.severity not in label.severities:
        return "wrong-message"
    return label.verdict


def site_found(site: Label, findings: list[Finding], reader: LineReader) -> bool:
    """A site is recalled when a finding of its family reports it, directly or as a related site."""
    for finding in findings:
        if finding.project != site.project or not _family_matches(site, finding):
            continue
        for loc in [finding.primary, *finding.related]:
            if _same_place(site, finding.project, loc, reader):
                return True
    return False


@dataclass
class Evaluation:
    """Counts behind the printed tables."""

    per_rule: dict[str, dict[str, int]]
    unlabelled: list[Finding]
    sites_found: list[Label]
    sites_missed: list[Label]
    findings_total: int
    per_project: dict[str, int]
    #: every finding not counted as a true problem: (finding, verdict, the label's reason)
    wrong: list[tuple[Finding, str, str]] = field(default_factory=list)

    def precision(self) -> tuple[int, int]:
        """(correct, labelled) over all rules."""
        correct = sum(c.get("true", 0) for c in self.per_rule.values())
        labelled = sum(sum(c.values()) for c in self.per_rule.values())
        return correct, labelled


def evaluate(
    findings: list[Finding], labels: list[Label], sites: list[Label], reader: LineReader
) -> Evaluation:
    """Match findings to labels and sites; pure, so tests can run it on fixture reports."""
    by_place: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for entry in labels:
        by_place[(entry.project, entry.path)].append(entry)
    per_rule: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unlabelled: list[Finding] = []
    per_project: dict[str, int] = defaultdict(int)
    used: set[tuple[str, str]] = set()  # (label source, rule): a second hit repeats a finding
    reported: set[tuple[str, str]] = set()  # (project, problem) already reported once
    wrong: list[tuple[Finding, str, str]] = []
    for finding in findings:
        per_project[finding.project] += 1
        label = match_label(finding, by_place, reader)
        if label is None:
            unlabelled.append(finding)
            continue
        verdict = strict_verdict(finding, label)
        if (label.source, finding.rule) in used:
            verdict = "duplicate"
        used.add((label.source, finding.rule))
        if label.problem and verdict in ("true", "wrong-message"):
            key = (finding.project, label.problem)
            verdict = "duplicate" if key in reported else verdict
            reported.add(key)
        per_rule[finding.rule][verdict] += 1
        if verdict != "true":
            wrong.append((finding, verdict, label.reason))
    found = [s for s in sites if site_found(s, findings, reader)]
    missed = [s for s in sites if s not in found]
    return Evaluation(
        per_rule={k: dict(v) for k, v in per_rule.items()},
        unlabelled=unlabelled,
        sites_found=found,
        sites_missed=missed,
        findings_total=len(findings),
        per_project=dict(per_project),
        wrong=wrong,
    )


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def render(result: Evaluation, todo: int) -> str:
    """Markdown tables: precision per rule and overall, unlabelled count, site recall."""
    out = ["| rule | labelled | true | false | duplicate | wrong message | strict precision |"]
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for rule in sorted(result.per_rule):
        c = result.per_rule[rule]
        n = sum(c.values())
        cells = [str(c.get(v, 0)) for v in ("true", "false", "duplicate", "wrong-message")]
        out.append(f"| {rule} | {n} | {' | '.join(cells)} | {_pct(c.get('true', 0), n)} |")
    correct, labelled = result.precision()
    out.append(f"| **all** | {labelled} | {correct} | | | | **{_pct(correct, labelled)}** |")
    out.append("")
    out.append(
        f"findings: {result.findings_total} in {len(result.per_project)} projects; "
        f"labelled: {labelled}; unlabelled: {len(result.unlabelled)}"
    )
    total_sites = len(result.sites_found) + len(result.sites_missed)
    out.append(
        f"site recall: {len(result.sites_found)}/{total_sites} = "
        f"{_pct(len(result.sites_found), total_sites)}"
    )
    if result.sites_missed:
        out.append("missed sites:")
        for site in result.sites_missed:
            family = ",".join(sorted(site.family))
            out.append(f"  {site.project}/{site.path}:{site.line} [{family}] {site.reason}")
    for finding in result.unlabelled[:todo]:
        out.append(
            f"unlabelled: {finding.project}/{finding.primary.path}:{finding.primary.line} "
            f"{finding.rule} {finding.severity} {finding.message}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--projects", default="", help="comma-separated subset of projects")
    parser.add_argument("--save", type=Path, help="also write each scan report to DIR/<p>.json")
    parser.add_argument("--load", type=Path, help="read scan reports from DIR instead of scanning")
    parser.add_argument("--todo", type=int, default=0, help="list up to N unlabelled findings")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument(
        "--wrong", action="store_true", help="also list each finding not counted as true, why"
    )
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"eval: corpus folder {args.corpus} does not exist")
        return 2
    labels, sites = load_labels(args.labels)
    projects = sorted({label.project for label in labels + sites})
    if args.projects:
        wanted = set(args.projects.split(","))
        projects = [p for p in projects if p in wanted]
        labels = [label for label in labels if label.project in wanted]
        sites = [s for s in sites if s.project in wanted]
    findings: list[Finding] = []
    for project in projects:
        if not (args.corpus / project).is_dir():
            print(f"eval: {project} is not in {args.corpus}; its labels are skipped")
            labels = [label for label in labels if label.project != project]
            sites = [s for s in sites if s.project != project]
            continue
        if args.load:
            report = json.loads((args.load / f"{project}.json").read_text())
        else:
            report = scan(args.corpus / project)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / f"{project}.json").write_text(json.dumps(report))
        findings.extend(parse_report(project, report))
    result = evaluate(findings, labels, sites, LineReader(args.corpus))
    if args.json:
        correct, labelled = result.precision()
        print(
            json.dumps(
                {
                    "per_rule": result.per_rule,
                    "correct": correct,
                    "labelled": labelled,
                    "unlabelled": len(result.unlabelled),
                    "sites_found": len(result.sites_found),
                    "sites_total": len(result.sites_found) + len(result.sites_missed),
                }
            )
        )
    else:
        print(render(result, args.todo))
    if args.wrong:
        print("\nfindings not counted as true:")
        for finding, verdict, reason in result.wrong:
            where = f"{finding.project}/{finding.primary.path}:{finding.primary.line}"
            print(f"  {verdict:<14} {finding.rule} {where}: {reason[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
