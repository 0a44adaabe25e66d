"""Read every output of one project and list where two of them contradict each other.

The scan (text and JSON), the SARIF log, the readiness report (JSON, Markdown, HTML) and the pull
request body must tell one story, the one ``migrator.model.MEANINGS`` writes down: problems
(warning, error) are work, fail CI and may move the verdict; hints (info) are none of these; a
blocker is exactly what decides a blocked verdict. ``tests/test_coherence.py`` runs this on the
bundled fixture; on the dev corpus:

    python scripts/coherence.py /work/corpus/litgpt /work/corpus/nvitop ...

It also scores a copy of each project before and after ``fix`` and ``fix --unsafe-fixes``: the
tool's own fixes must never lower the score.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from migrator.model import MEANINGS, Severity, is_problem
from migrator.reporting.readiness.score import BANDS


def _migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migrator", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def outputs(root: Path, work: Path) -> dict[str, Any]:
    """Every output of ``root``, keyed by name (exit codes included)."""
    scan_json = _migrate("scan", str(root), "--format", "json")
    scan_text = _migrate("scan", str(root), "--format", "concise")
    sarif = _migrate("scan", str(root), "--format", "sarif")
    got: dict[str, Any] = {
        "scan": json.loads(scan_json.stdout),
        "scan_exit": scan_json.returncode,
        "scan_text": scan_text.stdout,
        "sarif": json.loads(sarif.stdout),
    }
    for fmt, suffix in (("json", "json"), ("md", "md"), ("html", "html")):
        target = work / f"report.{suffix}"
        done = _migrate("report", str(root), "--format", fmt, "-o", str(target))
        if done.returncode not in (0, 1):
            raise RuntimeError(f"report --format {fmt} failed: {done.stderr.strip()[-300:]}")
        text = target.read_text(encoding="utf-8")
        got[f"report_{fmt}"] = json.loads(text) if fmt == "json" else text
    got["pr_body"] = _pr_body(root)
    return got


def _pr_body(root: Path) -> str:
    """The pull request body for the project as it stands (no commit applied)."""
    from migrator.pr.body import render_body
    from migrator.pr.options import PrOptions
    from migrator.reporting.cli import make_report

    project = make_report([str(root)]).projects[0]
    _, body = render_body(
        options=PrOptions(root),
        project_name=root.name,
        scan_prefix="",
        base="main",
        commits=[],
        before=project,
        after=project,
        verification=None,
        verification_note="not run",
        links="",
    )
    return body


def contradictions(got: dict[str, Any]) -> list[str]:
    """Each place where two outputs (or an output and the consequence model) disagree."""
    out: list[str] = []
    scan = got["scan"]["findings"]
    shown = [f for f in scan if not f.get("guard")]
    problems = [f for f in shown if is_problem(Severity.parse(f["severity"]))]
    summary_counts = got["scan"]["summary"]
    if summary_counts["problems"] != sum(is_problem(Severity.parse(f["severity"])) for f in scan):
        out.append("the scan JSON's problem count is not its findings' count")
    # CI: the exit code fails exactly on problems
    expected_exit = 1 if problems else 0
    if got["scan_exit"] != expected_exit:
        out.append(f"scan exits {got['scan_exit']} with {len(problems)} problem(s) shown")
    # SARIF levels follow the model
    levels = {(f["rule"], f["path"], f["line"]): f["severity"] for f in scan}
    for result in got["sarif"]["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        key = (
            result["ruleId"],
            location["artifactLocation"]["uri"],
            location["region"]["startLine"],
        )
        severity = next((s for k, s in levels.items() if k[0] == key[0] and k[2] == key[2]), None)
        if severity is not None:
            wanted = MEANINGS[Severity.parse(severity)].sarif_level
            if result["level"] != wanted:
                out.append(f"SARIF level {result['level']} for a {severity} {key[0]}")
    report = got["report_json"]["projects"][0]
    verdict = report["verdict"]
    # blockers exist exactly when the verdict is blocked, everywhere
    if bool(report["blockers"]) != (verdict == "blocked"):
        out.append(f"report JSON lists {len(report['blockers'])} blocker(s) beside {verdict}")
    fleet = got["report_json"]["fleet"][0]
    if fleet["blockers"] != len(report["blockers"]):
        out.append(
            f"fleet row says {fleet['blockers']} blockers, project {len(report['blockers'])}"
        )
    for target in report["targets"]["summary"]:
        if bool(target["blockers"]) != (target["verdict"] == "blocked"):
            out.append(
                f"target {target['target']}: {target['blockers']} blockers, {target['verdict']}"
            )
    low, high = BANDS[verdict]
    if not low <= report["score"] <= high:
        out.append(f"score {report['score']} outside the {verdict} band {low}-{high}")
    # hints are no work: no hours, never a port or manual item, never deciding
    for finding in report["findings"]:
        hint = not is_problem(Severity.parse(finding["severity"]))
        if hint and finding["fix_class"] in ("port", "manual"):
            out.append(f"hint {finding['rule']} at {finding['path']}:{finding['line']} is work")
    hint_rules = {f["rule"] for f in report["findings"] if f["severity"] == "info"}
    work_rules = {f["rule"] for f in report["findings"] if f["severity"] != "info"}
    for item in report["deciding"]:
        if item["rules"] and set(item["rules"]) <= hint_rules - work_rules:
            out.append(f"the verdict is decided by hints only: {item['title']}")
    # counts: the report says what the scan said
    summary = re.search(r"^Found (.+?)(?: \(\d+ fixable\))?\.$", got["scan_text"], re.M)
    counted = summary.group(1) if summary else ""
    if problems and not counted:
        out.append("the text scan prints no count")
    for name in ("report_md", "report_html", "pr_body"):
        text = got[name]
        if re.search(r"[.)]- (?:\*\*|\[ \]|[A-Z])", text):
            out.append(f"{name} runs two list items together")
        if name != "pr_body" and counted and counted not in text:
            out.append(f"{name} does not repeat the scan's count '{counted}'")
        said_blocked = bool(
            re.search(r"\bblockers? and manual work\b|⛔ blocker|\(blocker\)", text, re.I)
        )
        if said_blocked != (verdict == "blocked"):
            out.append(f"{name} {'names' if said_blocked else 'omits'} blockers beside {verdict}")
    html = got["report_html"]
    if f'class="verdict {verdict}"' not in html:
        out.append("the HTML headline shows another verdict")
    return out


def scores_after_fixes(root: Path, work: Path) -> tuple[int, int, int]:
    """Readiness scores of a copy of ``root``: as it is, after ``fix``, after ``fix
    --unsafe-fixes`` (the tool's own fixes must never lower it)."""
    import shutil

    copy = work / "copy"
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))

    def score() -> int:
        target = work / "score.json"
        _migrate("report", str(copy), "--format", "json", "-o", str(target))
        return int(json.loads(target.read_text())["projects"][0]["score"])

    before = score()
    _migrate("fix", str(copy))
    safe = score()
    _migrate("fix", "--unsafe-fixes", str(copy))
    return before, safe, score()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+", type=Path)
    args = parser.parse_args()
    status = 0
    for root in args.projects:
        with tempfile.TemporaryDirectory() as work:
            found = contradictions(outputs(root, Path(work)))
            before, safe, unsafe = scores_after_fixes(root, Path(work))
        if not before <= safe <= unsafe:
            found.append(f"fixes lower the score: {before} -> {safe} (safe) -> {unsafe} (unsafe)")
        print(f"{root.name}: score {before} -> {safe} after fix -> {unsafe} with --unsafe-fixes")
        verdict = "coherent" if not found else f"{len(found)} contradiction(s)"
        print(f"{root.name}: {verdict}")
        for line in found:
            print(f"  - {line}")
        status |= bool(found)
    return status


if __name__ == "__main__":
    sys.exit(main())
