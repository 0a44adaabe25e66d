"""Score `migrate scan` against the hand-made kernel-site labels of tests/eval/kernels/ (issue
#32): recall of blocking sites (blocker or small edit) reported at warning or error with the
right class, false alarms on sites labelled harmless, findings no label covers, and the project
verdict against the report's. Prints a Markdown table; exits 0.

    python scripts/kernel_eval.py [--corpus /work/corpus] [--projects a,b] [--labels DIR] [--verbose]

--labels picks another folder of label files, e.g. tests/eval/kernels/kernels1 (the shared kernels1 set,
converted by scripts/kernels1_to_toml.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "eval" / "kernels"
if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The class each kernel rule reports (the kernel-site classes of tests/eval/kernels/README.md).
CLASSES: dict[str, frozenset[str]] = {
    "ROC303": frozenset({"warp32-mask"}),
    "ROC304": frozenset({"warp-size-constant"}),
    # the PTX rules report inline assembly by what it does (tensor-core MMA/ldmatrix, Ampere
    # cp.async, Hopper wgmma/TMA): a site labelled by its form (inline-ptx) is the same site
    "ROC310": frozenset({"inline-ptx"}),
    "ROC311": frozenset({"mma", "inline-ptx"}),
    "ROC312": frozenset({"ampere-only", "inline-ptx"}),
    "ROC313": frozenset({"hopper-only", "inline-ptx"}),
    "ROC315": frozenset({"hopper-only"}),
    # WMMA: the API and its header <mma.h>
    "ROC320": frozenset({"mma", "cuda-only-header"}),
    "ROC330": frozenset({"cutlass-cute"}),
    "ROC331": frozenset({"cutlass-cute"}),
    "ROC340": frozenset({"cuda-only-header", "ampere-only", "hopper-only", "inline-ptx"}),
    "ROC350": frozenset({"smem-limit"}),
    "ROC360": frozenset({"other"}),
    # a CUDA name hipify does not map: labelled by its library (cuBLASLt) or as "other" (an API
    # HIP lacks); the label classes have none of their own
    "ROC370": frozenset({"cublaslt", "other"}),
    # a function with code for NVIDIA and none for AMD: whatever construct a site inside it is,
    # it is not compiled for AMD and the function compiles to nothing (issue #48, item 1)
    "ROC361": frozenset(
        {
            "other",
            "inline-ptx",
            "mma",
            "warp32-mask",
            "warp-size-constant",
            "cutlass-cute",
            "hopper-only",
            "ampere-only",
            "cuda-only-header",
        }
    ),
    # an nvcc-only flag handed to hipcc (a related site of the extension build it reaches, named
    # by its own rule): labelled "other" (a build edit), the label classes have none of their own
    "ROC603": frozenset({"other"}),
}
#: Rules whose finding is a whole function (its braces), every line of it covered.
FUNCTION_RULES = frozenset({"ROC361"})
PROBLEM = {"blocker", "small edit"}


def fingerprint(line: str) -> str:
    return hashlib.sha1(re.sub(r"\s+", "", line).encode()).hexdigest()[:10]


@dataclass
class Result:
    project: str
    blocking: int = 0
    found: int = 0
    wrong_class: int = 0
    harmless: int = 0
    alarms: int = 0
    unlabelled: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)
    verdict_label: str = ""
    verdict_tool: str = ""


#: A reported statement (an ``asm volatile(...)`` over several lines) covers the lines up to its
#: closing parenthesis, at most this many: a site labelled at its instruction line is the same site.
STATEMENT_LINES = 25


def statement_lines(lines: list[str], line: int) -> range:
    """The lines of the statement starting at ``line`` (1-based): through the parenthesis that
    closes the first one opened on it, or the line alone."""
    depth, opened = 0, False
    for number in range(line, min(len(lines), line + STATEMENT_LINES) + 1):
        for char in lines[number - 1]:
            if char == "(":
                depth, opened = depth + 1, True
            elif char == ")":
                depth -= 1
                if opened and depth <= 0:
                    return range(line, number + 1)
        if not opened:
            break
    return range(line, line + 1)


def function_lines(lines: list[str], line: int) -> range:
    """The lines from ``line`` (a function's first) through the brace closing its body."""
    depth, opened = 0, False
    for number in range(line, min(len(lines), line + 2000) + 1):
        for char in lines[number - 1]:
            if char == "{":
                depth, opened = depth + 1, True
            elif char == "}":
                depth -= 1
                if opened and depth <= 0:
                    return range(line, number + 1)
    return range(line, line + 1)


def covered(path: str, cover: list[str]) -> bool:
    return any(path == c or (c.endswith("/") and path.startswith(c)) for c in cover)


def scan(project_dir: Path) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "migrator",
        "scan",
        "--no-cache",
        "--format",
        "json",
        ".",
    ]
    # run from the project: the scan prints paths from the current directory
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=project_dir)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def report_verdict(project_dir: Path) -> str:
    command = [
        sys.executable,
        "-m",
        "migrator",
        "report",
        "--format",
        "json",
        "--no-cache",
        str(project_dir.resolve()),
    ]
    # run from the project, as the scan: ``python -m`` puts the current folder first on the
    # path, so from a checkout of migrate it would import that tree, not the one measured
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=project_dir)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return "?"
    project = data["projects"][0] if "projects" in data else data
    return str(project.get("verdict") or project.get("status") or project.get("label") or "?")


def evaluate(
    name: str, labels: dict[str, Any], findings: list[dict[str, Any]], corpus: Path
) -> Result:
    result = Result(name, verdict_label=labels.get("verdict", ""))
    cover = list(labels.get("covered", []))
    by_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
    texts: dict[str, list[str]] = {}
    reported: set[tuple[str, int]] = set()  # the lines findings name (not those they span)
    for finding in findings:  # a site is reported directly or as a related site of a finding
        if finding["severity"] not in {"error", "warning"}:
            continue
        for site in [finding, *finding.get("related", [])]:
            # a kernel site folded into another problem names its own rule
            rule = site.get("rule") or finding["rule"]
            if rule not in CLASSES:
                continue
            path = site.get("path", finding["path"])
            if path not in texts:
                source = corpus / name / path
                texts[path] = (
                    source.read_text(errors="replace").splitlines() if source.is_file() else []
                )
            reported.add((path, site["line"]))
            spans = function_lines if rule in FUNCTION_RULES else statement_lines
            for number in spans(texts[path], site["line"]):
                by_line.setdefault((path, number), []).append({**finding, "rule": rule})
    labelled: set[tuple[str, int]] = set()
    for site in labels.get("sites", []):
        path, line = site["path"], int(site["line"])
        text_lines = (corpus / name / path).read_text(errors="replace").splitlines()
        if line > len(text_lines) or fingerprint(text_lines[line - 1]) != site["fp"]:
            continue  # the checkout differs from the labelled commit
        labelled.add((path, line))
        hits = by_line.get((path, line), [])
        where = f"{path}:{line} [{site['class']}]"
        if site["verdict"] in PROBLEM:
            result.blocking += 1
            if any(site["class"] in CLASSES[h["rule"]] for h in hits):
                result.found += 1
            elif hits:
                result.wrong_class += 1
                result.missed.append(f"{where} reported as {','.join(h['rule'] for h in hits)}")
            else:
                result.missed.append(where)
        else:
            result.harmless += 1
            if hits:
                result.alarms += 1
                result.false_alarms.append(f"{where} by {','.join(h['rule'] for h in hits)}")
    for (path, line), hits in sorted(by_line.items()):
        if (path, line) not in reported:
            continue  # a line inside a reported statement, not a finding of its own
        if any((path, number) in labelled for number in statement_lines(texts[path], line)):
            continue  # the statement's site is labelled at another of its lines
        if covered(path, cover) and (path, line) not in labelled:
            result.unlabelled.append(f"{path}:{line} {','.join(h['rule'] for h in hits)}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="/work/corpus", type=Path)
    parser.add_argument("--projects", default="")
    parser.add_argument(
        "--labels", default=LABELS, type=Path, help="folder of <project>.toml labels"
    )
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--no-report", action="store_true", help="skip the readiness verdicts")
    options = parser.parse_args()
    wanted = {p for p in options.projects.split(",") if p}
    rows: list[Result] = []
    for path in sorted(options.labels.glob("*.toml")):
        labels = tomllib.loads(path.read_text())
        name = labels.get("project", path.stem)
        if wanted and name not in wanted:
            continue
        project_dir = options.corpus / name
        if not project_dir.is_dir():
            print(f"skipped {name}: not checked out under {options.corpus}", file=sys.stderr)
            continue
        findings = scan(project_dir)["findings"]
        result = evaluate(name, labels, findings, options.corpus)
        if not options.no_report:
            result.verdict_tool = report_verdict(project_dir)
        rows.append(result)
    print(
        "| project | blocking sites | reported, right class | recall | harmless sites | reported | false-alarm rate | unlabelled findings | verdict (label) | verdict (tool) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    totals = Result("all")
    for r in rows:
        recall = f"{r.found / r.blocking:.0%}" if r.blocking else "-"
        rate = f"{r.alarms / r.harmless:.0%}" if r.harmless else "-"
        print(
            f"| {r.project} | {r.blocking} | {r.found} | {recall} | {r.harmless} | {r.alarms} | {rate} | {len(r.unlabelled)} | {r.verdict_label} | {r.verdict_tool} |"
        )
        totals.blocking += r.blocking
        totals.found += r.found
        totals.harmless += r.harmless
        totals.alarms += r.alarms
        totals.unlabelled += r.unlabelled
    recall = f"{totals.found / totals.blocking:.0%}" if totals.blocking else "-"
    rate = f"{totals.alarms / totals.harmless:.0%}" if totals.harmless else "-"
    print(
        f"| **all** | {totals.blocking} | {totals.found} | {recall} | {totals.harmless} | {totals.alarms} | {rate} | {len(totals.unlabelled)} | | |"
    )
    if options.verbose:
        for r in rows:
            for kind, items in (
                ("missed", r.missed),
                ("false alarm", r.false_alarms),
                ("unlabelled", r.unlabelled),
            ):
                for item in items:
                    print(f"{r.project}: {kind}: {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
