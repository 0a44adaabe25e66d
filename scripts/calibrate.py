"""Compare readiness scores with written expert judgements: verdict agreement and Kendall's tau.

Runs ``migrate report --format json`` on each judged project found under ``--corpus`` and prints,
per project, the judged verdict and rank next to the tool's verdict, score and deciding items,
then the agreement and Kendall's tau-b between the scores and the judged order.

With ``--save-data`` it also stores, per project, the data the scorer consumes (findings without
source text, the role and tier of each finding's file, AMD-path evidence) in
``tests/calibration/data/``, so that ``tests/test_calibration.py`` recomputes the scores in CI
where the projects are not available.

    python scripts/calibrate.py --corpus /path/to/projects [--save-data] [--only a,b]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from migrator.files.tomlcompat import tomllib

ROOT = Path(__file__).resolve().parent.parent
JUDGEMENTS = ROOT / "tests" / "calibration" / "judgements.toml"
DATA = ROOT / "tests" / "calibration" / "data"
VERDICTS = {"ready": "ready", "needs work": "needs-work", "blocked": "blocked"}
#: Verdicts of earlier versions of the report, mapped onto today's three.
OLD_VERDICTS = {"ready-after-fixes": "needs-work", "needs-manual-work": "needs-work"}


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Kendall's tau-b between two sequences (ties in either count for neither side)."""
    concordant = discordant = ties_x = ties_y = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx = (xs[i] > xs[j]) - (xs[i] < xs[j])
            dy = (ys[i] > ys[j]) - (ys[i] < ys[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif dx == dy:
                concordant += 1
            else:
                discordant += 1
    denominator = ((concordant + discordant + ties_x) * (concordant + discordant + ties_y)) ** 0.5
    return (concordant - discordant) / denominator if denominator else 0.0


def load_judgements(path: Path = JUDGEMENTS) -> dict[str, dict[str, Any]]:
    """The written judgements, keyed by project name."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


def agreement(rows: Sequence[tuple[str, int, str, int]]) -> tuple[int, float]:
    """``(verdicts that agree, tau)`` for rows of (judged verdict, judged rank, verdict, score)."""
    agree = sum(VERDICTS[judged] == verdict for judged, _, verdict, _ in rows)
    tau = kendall_tau_b([-rank for _, rank, _, _ in rows], [score for *_, score in rows])
    return agree, tau


def report_json(project: Path) -> dict[str, Any]:
    """``migrate report --format json`` on one project."""
    run = subprocess.run(
        [sys.executable, "-m", "migrator.cli", "report", "--format", "json", str(project)],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(
            f"{project}: migrate report exited {run.returncode}: {run.stderr[-500:]}"
        )
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def scorer_data(project: Path) -> dict[str, Any]:
    """What the scorer consumes for one project: findings without source text, each with its
    file's role and tier and its subject, plus the AMD-path evidence and the paths of its own
    CUDA kernel sources."""
    from migrator.engine.runner import scan
    from migrator.reporting.readiness import sites_of
    from migrator.reporting.readiness.assembly import counted, layout_of

    result = scan(project).scan
    layout = layout_of(result)
    sites, _ = sites_of(counted(result.findings), layout)
    return {
        "entry_points": len(layout.entry_points),
        "computes": layout.computes,
        "kernel_sources": list(layout.kernel_sources),
        "amd_path": [
            {
                "kind": evidence.kind,
                "path": evidence.path,
                "detail": evidence.detail,
                "covers": list(evidence.covers),
            }
            for evidence in layout.amd_path
        ],
        "findings": [
            {
                "rule": site.rule,
                "category": site.category,
                "severity": site.severity,
                "path": site.path,
                "line": site.line,
                "fixable": site.fixable,
                "subject": site.subject,
                "role": site.role,
                "file_role": layout.role_of(site.path),
                "tier": site.tier,
                "dispatched": site.dispatched,
                "fallback": site.fallback,
                "opt_in": site.opt_in,
            }
            for site in sites
        ],
    }


def compact(data: dict[str, Any]) -> str:
    """JSON with one finding per line: small files, readable diffs."""
    head = {key: value for key, value in data.items() if key != "findings"}
    lines = [json.dumps(record, sort_keys=True) for record in data["findings"]]
    body = ",\n  ".join(lines)
    text = json.dumps(head, indent=1, sort_keys=True)[:-2]
    return (
        f'{text},\n "findings": [\n  {body}\n ]\n}}\n'
        if lines
        else (json.dumps({**head, "findings": []}, indent=1, sort_keys=True) + "\n")
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="folder holding the judged projects")
    parser.add_argument(
        "--reports",
        help="read NAME.json reports saved from `migrate report --format json` in this folder "
        "instead of running migrate (to measure an earlier version)",
    )
    parser.add_argument("--save-data", action="store_true", help="store scorer data for CI")
    parser.add_argument("--only", default="", help="comma-separated project names")
    args = parser.parse_args(argv)
    judgements = load_judgements()
    only = {name for name in args.only.split(",") if name}
    rows = []
    print(f"{'project':<15} {'judged':<11} {'rank':>4}  {'tool':<11} {'score':>5}  deciding")
    for name, judgement in judgements.items():
        project = Path(args.corpus) / name
        if (only and name not in only) or not project.is_dir():
            continue
        if args.reports:
            saved = Path(args.reports) / f"{name}.json"
            if not saved.is_file() or not saved.stat().st_size:
                continue
            data = json.loads(saved.read_text(encoding="utf-8"))["projects"][0]
            data["verdict"] = OLD_VERDICTS.get(data["verdict"], data["verdict"])
        else:
            data = report_json(project)["projects"][0]
        deciding = "; ".join(item["summary"] for item in data.get("deciding", []))
        print(
            f"{name:<15} {judgement['verdict']:<11} {judgement['rank']:>4}  "
            f"{data['verdict']:<11} {data['score']:>5}  {deciding[:160]}"
        )
        rows.append((judgement["verdict"], judgement["rank"], data["verdict"], data["score"]))
        if args.save_data and not args.reports:
            DATA.mkdir(parents=True, exist_ok=True)
            (DATA / f"{name}.json").write_text(compact(scorer_data(project)), encoding="utf-8")
    if not rows:
        print("no judged project found under", args.corpus)
        return 2
    agree, tau = agreement(rows)
    print(
        f"\nverdicts agree: {agree}/{len(rows)}   Kendall tau-b (score vs judged order): {tau:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
