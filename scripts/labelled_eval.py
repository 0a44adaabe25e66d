"""Score `migrate` on the shared labelled corpus (sets 1 to 3): blockers and misses found, verdicts.

Usage: python scripts/labelled_eval.py --corpus DIR [--labels DIR] [--projects a,b] [--jobs N]
                                       [--save FILE | --load FILE] [--missed] [--json]

``--labels`` is ``tests/eval/labelled/`` by default (projects.tsv, set*-sites.tsv,
set*-misses*.tsv, set*-readiness.md); ``--corpus`` holds one folder per project, named as in
``projects.tsv`` and checked out at its commit by whoever runs this (the script checks out
nothing and never writes into the corpus). For each project it runs this checkout's
``migrate report --format json`` once, from inside the project, and reads the findings and the
verdict from it.

What counts as a listed blocker (each once, by project, path and line range):

- ``set1-sites.tsv``: every row (the places a scan must report). This is the recall sample of
  the first days, when every use of a dependency was its own finding and TF32 flags were errors;
  one finding per problem and judging.md's "advisory at info" leave many of its rows rightly
  unreported at warning/error, so it is scored apart (line recall at warning/error and at any
  severity) and the headline figure is the others': the blockers and misses.
- ``set1-misses-*.tsv``, ``sets12-misses-*.tsv``: every row (real problems once missed);
- ``set3-sites.tsv``: the rows whose ``expect`` is ``report``;
- ``set2-readiness.md``: the numbered items of its blocker lists marked **error** or **warning**
  (one item may name several ``path:lines``; any of them found finds the item).

A listed blocker is found when a finding at warning or error points into its line range (its
primary location, its span, or one of its related sites) in the same file.

Verdicts: the expert's verdict of each project (the readiness files) is mapped in ``EXPERT``
below to the tool verdicts it accepts; a project whose expert verdict sits between two
(``needs work (small) - library itself ready``, ``hard``) or was given with low confidence is
marked ``clear=False`` and counted apart, so the figure on the clear ones is shown too.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The labelled sets, kept in the repository (``tests/eval/labelled/README.md``).
DEFAULT_LABELS = ROOT / "tests" / "eval" / "labelled"
SETS = ("set1", "set2", "set3")
LOUD = ("warning", "error")


@dataclass(frozen=True)
class Expected:
    """The expert's verdict and the tool verdicts that agree with it."""

    text: str
    accepted: tuple[str, ...]
    clear: bool = True


# From set1-readiness.md, set2-readiness.md and set3-readiness.md (the verdict columns).
EXPERT: dict[str, Expected] = {
    "nanoGPT": Expected("ready", ("ready",)),
    "gpustat": Expected("blocked", ("blocked",)),
    "text-generation-webui": Expected("ready / small work", ("ready",)),
    "peft": Expected("ready / small work", ("ready",)),
    "accelerate": Expected("ready / small work", ("ready",)),
    "generative-models": Expected("needs work, small", ("needs-work",)),
    "LLaVA": Expected("needs work, about a day", ("needs-work",)),
    "FastChat": Expected("needs work", ("needs-work",)),
    "gpt-neox": Expected("needs work [low confidence]", ("needs-work",), clear=False),
    "Open-Sora": Expected("hard", ("needs-work", "blocked"), clear=False),
    "whisper": Expected("ready", ("ready",)),
    "llama": Expected("ready", ("ready",)),
    "open_clip": Expected("ready", ("ready",)),
    "sam2": Expected("needs work (small), library ready", ("needs-work", "ready"), clear=False),
    "mamba": Expected("needs work", ("needs-work",)),
    "llm-awq": Expected("blocked", ("blocked",)),
    "lit-llama": Expected("ready", ("ready",)),
    "flux": Expected("ready", ("ready",)),
    "lm-evaluation-harness": Expected("ready", ("ready",)),
    "OpenRLHF": Expected("needs work", ("needs-work",)),
    "h2o-llmstudio": Expected("needs work", ("needs-work",)),
    "qserve": Expected("blocked", ("blocked",)),
}


@dataclass(frozen=True)
class Place:
    """A file and an inclusive line range."""

    path: str
    first: int
    last: int


@dataclass
class Blocker:
    """One listed blocker: found when any of its places is reported at warning or error."""

    project: str
    source: str
    kind: str
    places: list[Place]
    why: str = ""
    found: bool = False
    anywhere: bool = False  # reported at any severity (info included)


@dataclass
class Loud:
    """The places one finding points at, and whether it is at warning or error."""

    rule: str
    loud: bool
    places: list[Place] = field(default_factory=list)


def read_projects(labels: Path) -> dict[str, tuple[str, str]]:
    """``name -> (repo, set)`` for the projects of sets 1 to 3 (repo owner/name)."""
    out: dict[str, tuple[str, str]] = {}
    with (labels / "projects.tsv").open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["set"] in SETS:
                out[row["name"]] = (row["repo"], row["set"])
    return out


def _rows(file: Path) -> list[dict[str, str]]:
    with file.open() as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def _name(repo: str, by_repo: dict[str, str]) -> str:
    return by_repo.get(repo, repo.split("/")[-1])


_ITEM = re.compile(r"^\d+\.\s")
_PLACE = re.compile(r"`([\w./\-]+\.[\w]+):([\d,\- ]+)`")
_SEVERITY = re.compile(r"\*\*([^*]+)\*\*")


def _ranges(spec: str) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        out.append((int(first), int(last or first)))
    return out


def set2_blockers(text: str) -> list[Blocker]:
    """The error/warning items of set2-readiness.md's blocker lists."""
    out: list[Blocker] = []
    project = ""
    in_lists = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_lists = line.startswith("## Blocker lists")
            continue
        heading = re.match(r"^### (\S+)", line)
        if heading:
            project = heading.group(1)
            continue
        if not in_lists or not _ITEM.match(line):
            continue
        marks = [m.lower() for m in _SEVERITY.findall(line)]
        last = marks[-1] if marks else ""
        if not re.search(r"\b(error|warning)\b", last) or re.search(r"\bnot\b|false|info", last):
            continue
        places = [
            Place(path, first, end)
            for path, spec in _PLACE.findall(line)
            for first, end in _ranges(spec)
        ]
        if places:
            out.append(Blocker(project, "set2-readiness.md", last, places, line[:120]))
    return out


def read_blockers(labels: Path, names: dict[str, tuple[str, str]]) -> list[Blocker]:
    """Every listed blocker of sets 1 to 3, each place range once per project."""
    by_repo = {repo: name for name, (repo, _set) in names.items()}
    found: list[Blocker] = []
    for row in _rows(labels / "set1-sites.tsv"):
        line = int(row["line"])
        found.append(
            Blocker(
                row["repo_name"],
                "set1-sites",
                row["category"],
                [Place(row["path"], line, line)],
                row["snippet"],
            )
        )
    for file in sorted(labels.glob("set*-misses-*.tsv")):
        for row in _rows(file):
            place = Place(row["path"], int(row["line_from"]), int(row["line_to"]))
            found.append(
                Blocker(_name(row["repo"], by_repo), file.stem, row["kind"], [place], row["why"])
            )
    for row in _rows(labels / "set3-sites.tsv"):
        if row["expect"] != "report":
            continue
        place = Place(row["path"], int(row["line_from"]), int(row["line_to"]))
        found.append(
            Blocker(_name(row["repo"], by_repo), "set3-sites", row["kind"], [place], row["why"])
        )
    readiness = labels / "set2-readiness.md"
    if readiness.exists():
        found.extend(set2_blockers(readiness.read_text()))
    unique: dict[tuple[str, tuple[Place, ...]], Blocker] = {}
    for blocker in found:
        unique.setdefault((blocker.project, tuple(blocker.places)), blocker)
    return [b for b in unique.values() if b.project in names]


def report(project_dir: Path) -> dict[str, Any]:
    """This checkout's ``migrate report --format json`` of one project, run from inside it."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrator.cli",
            "report",
            "--no-cache",
            "-j",
            "1",
            "--format",
            "json",
            ".",
        ],
        capture_output=True,
        text=True,
        cwd=project_dir,
        env={**os.environ, "PYTHONPATH": path},
    )
    if result.returncode != 0:
        print(f"labelled_eval: report of {project_dir.name} failed: {result.stderr[-300:]}")
        return {}
    data: dict[str, Any] = json.loads(result.stdout)
    projects = data.get("projects") or [{}]
    first: dict[str, Any] = projects[0]
    return first


def loud_findings(project: dict[str, Any]) -> list[Loud]:
    """The findings of one project's report, with every place they point at."""
    out = []
    for item in project.get("findings", []):
        line = int(item.get("line") or 0)
        places = [Place(str(item.get("path", "")), line, int(item.get("end_line") or line))]
        for rel in item.get("related", []) or []:
            if isinstance(rel, dict):
                at = int(rel.get("line") or 0)
                places.append(Place(str(rel.get("path", "")), at, at))
        out.append(Loud(str(item.get("rule", "")), item.get("severity") in LOUD, places))
    return out


def _overlaps(a: Place, b: Place) -> bool:
    return a.path == b.path and a.first <= b.last and b.first <= a.last


def score(blockers: list[Blocker], findings: dict[str, list[Loud]]) -> None:
    """Mark each blocker found when a loud finding points into one of its places."""
    for blocker in blockers:
        for finding in findings.get(blocker.project, []):
            hit = any(_overlaps(a, b) for a in blocker.places for b in finding.places)
            blocker.anywhere |= hit
            blocker.found |= hit and finding.loud


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}%" if b else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="one folder per project")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    parser.add_argument("--projects", default="", help="comma-separated names (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="projects reported at once")
    parser.add_argument("--save", type=Path, help="write the reports read to this JSON file")
    parser.add_argument("--load", type=Path, help="score reports saved by --save; run nothing")
    parser.add_argument("--missed", action="store_true", help="list the blockers not found")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    names = read_projects(args.labels)
    wanted = [n for n in args.projects.split(",") if n] or list(names)
    blockers = [b for b in read_blockers(args.labels, names) if b.project in wanted]
    if args.load:
        reports: dict[str, dict[str, Any]] = json.loads(args.load.read_text())
    else:
        present = [n for n in wanted if (args.corpus / n).is_dir()]
        for missing in sorted(set(wanted) - set(present)):
            print(f"labelled_eval: {missing} is not in {args.corpus}; left out")
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            reports = dict(
                zip(present, pool.map(lambda n: report(args.corpus / n), present), strict=True)
            )
    if args.save:
        args.save.write_text(json.dumps(reports))
    findings = {name: loud_findings(rep) for name, rep in reports.items()}
    blockers = [b for b in blockers if b.project in reports]
    score(blockers, findings)

    rows = []
    for name in [n for n in wanted if n in reports]:
        mine = [b for b in blockers if b.project == name and b.source != "set1-sites"]
        verdict = str(reports[name].get("verdict", "?"))
        expected = EXPERT.get(name)
        agree = expected is not None and verdict in expected.accepted
        rows.append(
            {
                "project": name,
                "set": names[name][1],
                "found": sum(b.found for b in mine),
                "listed": len(mine),
                "verdict": verdict,
                "score": reports[name].get("score"),
                "expert": expected.text if expected else "?",
                "agree": agree,
                "clear": expected.clear if expected else False,
            }
        )
    headline = [b for b in blockers if b.source != "set1-sites"]
    found = sum(b.found for b in headline)
    listed = len(headline)
    sample = [b for b in blockers if b.source == "set1-sites"]
    agreeing = sum(r["agree"] for r in rows)
    clear = [r for r in rows if r["clear"]]
    summary = {
        "blockers_found": found,
        "blockers_listed": listed,
        "set1_sites_loud": sum(b.found for b in sample),
        "set1_sites_any": sum(b.anywhere for b in sample),
        "set1_sites": len(sample),
        "verdicts_agree": agreeing,
        "verdicts": len(rows),
        "clear_verdicts_agree": sum(r["agree"] for r in clear),
        "clear_verdicts": len(clear),
        "projects": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(
        "| project | set | blockers+misses found / listed | verdict tool (score) | expert | agree |"
    )
    print("|---|---|---:|---|---|---|")
    for r in rows:
        mark = "yes" if r["agree"] else "**no**"
        if not r["clear"]:
            mark += " (unclear)"
        print(
            f"| {r['project']} | {r['set']} | {r['found']} / {r['listed']} | "
            f"{r['verdict']} ({r['score']}) | {r['expert']} | {mark} |"
        )
    print(
        f"| **all** | | **{found} / {listed} = {_pct(found, listed)}** | | | "
        f"**{agreeing} / {len(rows)}** (clear: {summary['clear_verdicts_agree']} / {len(clear)}) |"
    )
    for source in sorted({b.source for b in blockers}):
        mine = [b for b in blockers if b.source == source]
        hits = sum(b.found for b in mine)
        anywhere = sum(b.anywhere for b in mine)
        print(
            f"{source}: at warning/error {hits} / {len(mine)} = {_pct(hits, len(mine))}; "
            f"at any severity {anywhere} / {len(mine)} = {_pct(anywhere, len(mine))}"
        )
    if args.missed:
        for b in headline:
            if not b.found:
                where = ", ".join(f"{p.path}:{p.first}-{p.last}" for p in b.places)
                print(f"missed: {b.project} {where} [{b.source} {b.kind}] {b.why[:90]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
