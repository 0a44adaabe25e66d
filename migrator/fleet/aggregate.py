"""The fleet's figures, read back from the results folder: one row per repository (verdict,
score, hours, what decided it, a link to its report, or why its unit failed), the classes that
sort repositories by what stands between them and ROCm, the work items ranked by how many
repositories they unblock, and effort totals."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.fleet.store import Store
from migrator.fleet.unit import SCAN, VERIFY, Unit
from migrator.reporting.readiness.distribution import EffortSpread, spread

OK, FAILED, MISSING = "ok", "failed", "not run"


@dataclass(slots=True)
class RepoRow:
    """One repository of the fleet as the fleet report shows it."""

    name: str
    source: str
    ref: str
    commit: str
    status: str
    score: int | None = None
    verdict: str = ""
    hours: float = 0.0
    findings: int = 0
    work_items: int = 0
    deciding: list[str] = field(default_factory=list)
    #: Each deciding item in one line: title, its first file (repository-relative) and class.
    decided_by: list[str] = field(default_factory=list)
    #: The stated verdict rule that applied.
    rule: str = ""
    #: What the project's report could not tell and that could change its verdict (what only).
    unknowns: list[str] = field(default_factory=list)
    reason: str = ""
    report: str = ""
    folder: str = ""
    verify: str = ""
    klass: str = ""


@dataclass(slots=True)
class ItemRow:
    """A work item across the fleet: how many repositories have it, in how many it decides
    the verdict (fixing it is what unblocks them), and its hours summed."""

    key: str
    title: str
    consequence: str
    basis: str
    repos: int = 0
    deciding: int = 0
    hours: float = 0.0


@dataclass(slots=True)
class Fleet:
    """Everything the fleet renderers show."""

    rows: list[RepoRow]
    classes: list[tuple[str, int]]
    items: list[ItemRow]
    verdicts: dict[str, int]
    total_hours: float
    hours_by_verdict: dict[str, float]
    generated: str = ""
    spread: EffortSpread = field(default_factory=lambda: spread([]))

    @property
    def failed(self) -> list[RepoRow]:
        return [row for row in self.rows if row.status != OK]


def _item_key(key: str) -> str:
    return key.split(":", 1)[1] if key.split(":", 1)[0] in ("core", "deploy") else key


def _klass(row: RepoRow, work: Sequence[dict[str, Any]]) -> str:
    if row.status != OK:
        return "could not be assessed"
    if row.verdict == "ready":
        return "ready as they are"
    costly = [item for item in work if item.get("hours", 0) > 0 and not item.get("covered_by")]
    bases = {item.get("basis") for item in costly}
    if row.verdict == "blocked":
        return ""  # counted per deciding item
    if bases <= {"fix"}:
        return "need only automatic fixes (`migrate fix`)"
    if "port" in bases:
        return "need a port of some code"
    return "need documented, manual changes"


def _decided(item: dict[str, Any]) -> str:
    """A deciding item in one line: its title, where (its first repository-relative file, and
    how many more) and its readiness class."""
    files = [str(path) for path in item.get("files") or []]
    where = ""
    if files:
        where = f" in `{files[0]}`" + (
            f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""
        )
    klass = item.get("class")
    return f"{item['title']}{where}" + (f" ({klass})" if klass else "")


def _relative(path: Path, base: Path | None) -> str:
    if base is None:
        return str(path)
    return os.path.relpath(path, base).replace(os.sep, "/")


def collect(
    units: Sequence[Unit], store: Store, link_base: Path | None = None, generated: str = ""
) -> Fleet:
    """Read each unit's result (or failure) from ``store`` and compute the fleet's figures;
    links to project reports are made relative to ``link_base`` (the report's folder)."""
    verify = {unit.spec.name: unit for unit in units if unit.stage == VERIFY}
    rows: list[RepoRow] = []
    items: dict[str, ItemRow] = {}
    classes: Counter[str] = Counter()
    for unit in units:
        if unit.stage != SCAN:
            continue
        spec = unit.spec
        row = RepoRow(spec.name, spec.shown, spec.ref, unit.commit, MISSING)
        work: list[dict[str, Any]] = []
        meta = store.meta(spec.name, unit.key)
        if meta is not None:
            folder = store.folder(spec.name, unit.key)
            try:
                text = store.read(spec.name, unit.key, "report.json")
                if text is None:
                    raise OSError("report.json cannot be read")
                data = json.loads(text)
                project = data["projects"][0]
            except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
                row.status, row.reason = FAILED, f"unreadable result: {error}"
            else:
                row.status = OK
                row.score = int(project["score"])
                row.verdict = str(project["verdict"])
                row.hours = float(project["effort"]["total_hours"])
                row.findings = int(project["counts"]["total"])
                work = list(project["work_items"])
                row.work_items = len(work)
                row.deciding = [str(item["title"]) for item in project["deciding"]]
                row.decided_by = [_decided(item) for item in project["deciding"]]
                row.rule = str(project.get("verdict_rule_text") or project.get("verdict_rule", ""))
                row.unknowns = [str(entry.get("what", "")) for entry in project.get("unknowns", [])]
                row.report = _relative(folder / "report.html", link_base)
                row.folder = _relative(folder, link_base)
                deciding = {_item_key(str(item["key"])) for item in project["deciding"]}
                if row.verdict == "ready":
                    deciding = set()
                for item in work:
                    key = _item_key(str(item["key"]))
                    entry = items.setdefault(
                        key,
                        ItemRow(
                            key,
                            str(item["title"]),
                            str(item["consequence_label"]),
                            str(item["basis_label"]),
                        ),
                    )
                    entry.repos += 1
                    entry.deciding += key in deciding
                    entry.hours += float(item["hours"])
                if row.verdict == "blocked":
                    for item in project["deciding"]:
                        classes[f"blocked by {item['title']}: {item['consequence_label']}"] += 1
        else:
            failure = store.failure(spec.name, unit.key)
            if failure is not None:
                row.status, row.reason = FAILED, str(failure.get("reason", ""))
        if spec.name in verify:
            vunit = verify[spec.name]
            vmeta = store.meta(spec.name, vunit.key)
            vfail = store.failure(spec.name, vunit.key)
            if vmeta is not None:
                row.verify = "passed" if vmeta.get("summary", {}).get("verify_passed") else "failed"
            elif vfail is not None:
                row.verify = f"not run: {vfail.get('reason', '')}"
        row.klass = _klass(row, work)
        if row.klass:
            classes[row.klass] += 1
        rows.append(row)
    rows.sort(key=lambda row: (row.status != OK, -(row.score or 0), row.name))
    ranked = sorted(
        items.values(), key=lambda item: (-item.deciding, -item.repos, -item.hours, item.key)
    )
    verdicts = Counter(row.verdict or row.status for row in rows)
    by_verdict: dict[str, float] = {}
    for row in rows:
        if row.status == OK:
            by_verdict[row.verdict] = round(by_verdict.get(row.verdict, 0.0) + row.hours, 2)
    return Fleet(
        rows=rows,
        classes=sorted(classes.items(), key=lambda pair: (-pair[1], pair[0])),
        items=ranked,
        verdicts=dict(sorted(verdicts.items())),
        total_hours=round(sum(row.hours for row in rows), 2),
        hours_by_verdict=by_verdict,
        generated=generated,
        spread=spread([(row.name, row.hours) for row in rows if row.status == OK]),
    )
