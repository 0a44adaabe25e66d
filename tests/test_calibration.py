"""The readiness score against written expert judgements of real projects.

``tests/calibration/judgements.toml`` holds a judgement per dev-corpus project (verdict, rank,
effort, decisive items), written from reading the code. ``tests/calibration/data/`` holds what the
scorer consumes for each (our findings without source text, file roles and tiers, AMD-path
evidence), extracted by ``scripts/calibrate.py --save-data``. These tests recompute every score and
verdict from that data with the real rule catalog and scorer, and check that verdicts agree and that
the scores order the projects as the judgements do (Kendall's tau-b >= 0.8).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from migrator.model import Finding, Severity
from migrator.reporting import readiness as r
from scripts.calibrate import JUDGEMENTS, agreement, kendall_tau_b, load_judgements

DATA = JUDGEMENTS.parent / "data"


def _severity(label: str) -> Severity:
    return getattr(Severity, label.upper())


def recompute(data: dict[str, Any]) -> r.ProjectReport:
    """Score one project from its stored scorer data through the product's own pipeline."""
    findings = [
        Finding(
            rule=record["rule"],
            name="",
            category=record["category"],
            severity=_severity(record["severity"]),
            path=record["path"],
            line=record["line"],
            column=1,
            end_line=record["line"],
            end_column=1,
            message="",
        )
        for record in data["findings"]
    ]
    records = data["findings"]
    optional_lines: dict[str, list[tuple[int, int]]] = {}
    facts: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record["role"] == r.OPTIONAL and record["file_role"] == r.CORE:
            optional_lines.setdefault(record["path"], []).append((record["line"], record["line"]))
        facts.setdefault(record["path"], []).append(record)
    layout = r.ProjectLayout(
        roles={record["path"]: record["file_role"] for record in records},
        optional_lines=optional_lines,
        amd_path=[
            r.Evidence(**{**evidence, "covers": tuple(evidence.get("covers", ()))})
            for evidence in data["amd_path"]
        ],
        dispatch_files=frozenset(
            record["path"] for record in data["findings"] if record["dispatched"]
        ),
        computes=data["computes"],
    )
    # What the scorer read from each file's syntax tree, per stored line.
    for path, lines in facts.items():
        layout.known_facts[path] = r.FileFacts(
            fallbacks=tuple((rec["line"], rec["line"]) for rec in lines if rec["fallback"]),
            opt_in=tuple(
                (rec["line"], rec["line"], rec["opt_in"]) for rec in lines if rec["opt_in"]
            ),
        )
    subjects = {
        (record["path"], record["line"], record["rule"]): record for record in data["findings"]
    }
    sites, metas = r.sites_of(findings, layout)
    # Subjects come from source lines (package names), which the stored data keeps without them.
    sites = [
        replace(
            site,
            subject=subjects[(site.path, site.line, site.rule)]["subject"],
            fixable=subjects[(site.path, site.line, site.rule)]["fixable"],
        )
        for site in sites
    ]
    work = r.work_items(
        sites,
        metas,
        amd_kinds=frozenset(evidence.kind for evidence in layout.amd_path),
        computes=layout.computes,
        targets=r.DEFAULT_TARGETS,
        covers=r.coverage(layout.amd_path),
        kernels=data.get("kernel_sources", ()),
    )
    state = r.readiness(work, layout.amd_path)
    return r.ProjectReport(
        name="",
        root="",
        items=[],
        files_scanned=0,
        files_skipped=[],
        files_failed=[],
        score=state.score,
        penalty=state.penalty,
        verdict=state.verdict,
        categories=[],
        files=[],
        manual=[],
        effort=r.effort_of(work),
        dependencies=[],
        targets=r.TargetMatrix([], []),
        work=work,
        deciding=state.deciding,
        reason=state.reason,
        amd_path=list(layout.amd_path),
    )


JUDGED = load_judgements()
STORED = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in DATA.glob("*.json")}
VERDICT = {
    "ready": r.Verdict.READY,
    "needs work": r.Verdict.NEEDS_WORK,
    "blocked": r.Verdict.BLOCKED,
}


def test_at_least_ten_judged_projects_have_data():
    assert len(JUDGED) >= 10
    assert set(STORED) <= set(JUDGED)
    assert len(STORED) >= 10, sorted(set(JUDGED) - set(STORED))
    for name, judgement in JUDGED.items():
        assert judgement["verdict"] in VERDICT, name
        assert judgement["decisive"] and judgement["why"].strip() and judgement["effort"], name


def test_stored_data_holds_no_source_text():
    allowed = {
        "rule",
        "category",
        "severity",
        "path",
        "line",
        "fixable",
        "subject",
        "role",
        "file_role",
        "tier",
        "dispatched",
        "fallback",
        "opt_in",
    }
    for name, data in STORED.items():
        for record in data["findings"]:
            assert set(record) == allowed, name


#: Measured on the stored data (docs/report.md, "Calibration"): every verdict agrees and
#: tau-b is 0.811; the floors are the issue's targets, so a change that loses a verdict or drops
#: the order below 0.8 fails here.
AGREE_FLOOR = 14
TAU_FLOOR = 0.8
#: Judged-rank pairs (more ready, less ready) the scores still order the other way, each for a
#: reason recorded in docs/report.md: axolotl has more distinct breaking items than qlora (a
#: CUDA triton pin, two CUDA kernel packages its AMD guide covers, a compose file), while qlora's
#: single item breaks its whole purpose; the score counts items, not purposes. LLaMA-Factory has
#: no reachable item left once its flash-attn use is recognised as guarded, so it passes diffusers
#: and torchtune, which keep a performance item or opt-in remainder; the judgement ranks it below
#: them for depending on its ROCm container, which the score credits rather than charges.
MISORDERED = frozenset(
    {("axolotl", "qlora"), ("diffusers", "LLaMA-Factory"), ("torchtune", "LLaMA-Factory")}
)


def _rows() -> list[tuple[str, int, str, int]]:
    rows = []
    for name, data in sorted(STORED.items()):
        report = recompute(data)
        judged = JUDGED[name]
        rows.append((judged["verdict"], judged["rank"], report.verdict.value, report.score))
    return rows


def test_verdicts_and_order_agree_with_the_judgements():
    agree, tau = agreement(_rows())
    assert agree >= AGREE_FLOOR, agree
    assert tau >= TAU_FLOOR, tau


def test_badly_ordered_pairs_are_only_the_listed_ones():
    scores = {name: recompute(data).score for name, data in STORED.items()}
    misordered = {
        (better, worse)
        for better in STORED
        for worse in STORED
        if JUDGED[better]["rank"] < JUDGED[worse]["rank"] and scores[better] < scores[worse]
    }
    assert misordered <= MISORDERED, sorted(misordered - MISORDERED)


@pytest.mark.parametrize("name", sorted(STORED))
def test_every_verdict_names_what_decided_it(name):
    report = recompute(STORED[name])
    if report.verdict is not r.Verdict.READY:
        assert report.deciding, "a verdict other than ready names the items that decided it"
        assert all(item.breaks for item in report.deciding)


def test_nvml_core_is_blocked_and_an_amd_path_never_is():
    for name, data in STORED.items():
        report = recompute(data)
        if report.amd_path:
            assert report.verdict is not r.Verdict.BLOCKED, name
    nvitop = recompute(STORED["nvitop"])
    assert nvitop.verdict is r.Verdict.BLOCKED
    assert nvitop.deciding[0].key == "core:nvml" and nvitop.deciding[0].basis == "port"


def test_projects_judged_to_run_unchanged_without_an_amd_path_score_ready():
    for name, data in STORED.items():
        report = recompute(data)
        if JUDGED[name]["verdict"] == "ready" and not report.amd_path:
            assert report.verdict is r.Verdict.READY, name


def test_every_verdict_agrees_with_its_judgement():
    disagreeing = {
        name
        for name, data in STORED.items()
        if recompute(data).verdict is not VERDICT[JUDGED[name]["verdict"]]
    }
    assert disagreeing == set()


def test_fleet_scores_spread_across_the_range():
    scores = sorted(recompute(data).score for data in STORED.values())
    assert scores[0] <= 30 and scores[-1] >= 85
    assert len({score // 20 for score in scores}) >= 3


def test_kendall_tau_b_handles_ties_and_reversals():
    assert kendall_tau_b([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert kendall_tau_b([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    # One tie in x: (2 concordant - 0) / sqrt((2 + 0 + 1) * (2 + 0 + 0)).
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / (3 * 2) ** 0.5)
