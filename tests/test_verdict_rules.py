"""One rule set for every verdict: each rule of the registry, as the deciding item of a project,
gives the verdict its readiness class gives (the same in every project), with an effort that
stays inside that verdict's bounds (``READY_MAX_HOURS``, ``PORT_BLOCK_HOURS``), a fix class that
agrees with the work item's basis, and a report that names the rule that applied, the deciding
items and the unknowns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrator.engine.registry import all_rules
from migrator.model import FileResult, Finding, ScanResult, Severity, Status
from migrator.reporting import readiness as r
from migrator.reporting.readiness.score import (
    PORT_BLOCK_HOURS,
    READY_MAX_HOURS,
    VERDICT_RULE_TEXT,
    item_class,
    port_hours,
)

RULES = sorted(all_rules(), key=lambda rule: rule.code)
#: A file of each kind a rule reads, where a project's own code or deployment keeps it.
_PATH_OF_KIND = {
    "python": "pkg/core.py",
    "cuda": "csrc/kernel.cu",
    "requirements": "requirements.txt",
    "pyproject": "pyproject.toml",
    "setupcfg": "setup.cfg",
    "conda": "environment.yml",
    "dockerfile": "Dockerfile",
    "compose": "docker-compose.yml",
    "shell": "run.sh",
    "ci-yaml": "Dockerfile",
    "cog": "cog.yaml",
    "cmake": "CMakeLists.txt",
}
#: (sites, files) of a deciding item: one site, a pattern over a few files, a large port.
SIZES = ((1, 1), (12, 4), (60, 15))
_CLASS_VERDICT = {
    "port": r.Verdict.BLOCKED,
    "breaks": r.Verdict.NEEDS_WORK,
    "minor": r.Verdict.READY,
    "none": r.Verdict.READY,
}


def _path(rule: type, number: int) -> str:
    kind = next(kind for kind in _PATH_OF_KIND if kind in rule.parsing.file_kinds)
    base = _PATH_OF_KIND[kind]
    if number == 0 or "/" not in base:
        return base
    folder, name = base.rsplit("/", 1)
    return f"{folder}/m{number}_{name}"


def _project(rule: type, sites: int, files: int) -> r.ProjectReport:
    findings = [
        Finding(
            rule=rule.code,
            name=rule.name,
            category=rule.category,
            severity=rule.severity,
            path=_path(rule, index % files) if "/" in _path(rule, 1) else _path(rule, 0),
            line=index + 1,
            column=1,
            end_line=index + 1,
            end_column=2,
            message=rule.message,
            source_line="x = 1",
        )
        for index in range(sites)
    ]
    paths = sorted({finding.path for finding in findings})
    scan = ScanResult(
        root="/nonexistent-project",
        files=[
            FileResult(
                path, Status.SCANNED, tuple(finding for finding in findings if finding.path == path)
            )
            for path in paths
        ],
    )
    # no root on disk: file roles come from path rules, as for any stored scan
    return r.build_project(scan, name="p", layout=r.ProjectLayout(known=False))


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_gives_the_verdict_of_its_class_with_effort_inside_its_bounds(rule):
    verdicts = set()
    for sites, files in SIZES:
        project = _project(rule, sites, files)
        items = [item for item in project.work if item.rules == [rule.code]]
        if rule.severity is Severity.HYGIENE:  # behaves the same on ROCm: never work
            assert not items and project.verdict is r.Verdict.READY, rule.code
            continue
        assert items, f"{rule.code}: no work item"
        item = items[0]
        klass = item_class(item)
        expected = _CLASS_VERDICT[klass]
        total = project.effort.total_hours
        if klass == "breaks" and port_hours(project.work) >= PORT_BLOCK_HOURS:
            expected = r.Verdict.BLOCKED  # pragma: no cover - a "breaks" item is not a port
        if expected is r.Verdict.READY and total > READY_MAX_HOURS:
            expected = r.Verdict.NEEDS_WORK  # more than a week of work is not ready
        assert project.verdict is expected, (
            f"{rule.code} ({klass}, {sites} sites in {files} files, {total} h): "
            f"{project.verdict.value}, expected {expected.value}"
        )
        verdicts.add((klass, project.verdict))
        # the effort is consistent with the verdict
        if project.verdict is r.Verdict.READY:
            assert total <= READY_MAX_HOURS, (rule.code, total)
        if project.verdict is r.Verdict.NEEDS_WORK:
            assert port_hours(project.work) < PORT_BLOCK_HOURS, (rule.code, total)
        if project.verdict is r.Verdict.BLOCKED:
            assert project.deciding and all(item_class(i) == "port" for i in project.deciding)
        # the verdict names the rule that applied and the items that decided it
        assert project.rule in VERDICT_RULE_TEXT
        if project.verdict is not r.Verdict.READY:
            assert project.deciding, rule.code
            assert rule.code in project.verdict_reason() or any(
                rule.code in item.rules for item in project.deciding
            )
        assert project.unknowns, rule.code  # at least: not run on ROCm
        # a finding's fix class says "port" exactly when its work item needs a port
        problems = [entry for entry in project.items if entry.fix_class in ("port", "manual")]
        for entry in problems:
            assert (entry.fix_class == "port") == (item.basis == "port"), rule.code
    # one class, one verdict, however many sites (the effort may only make a ready one
    # "needs work")
    assert len({klass for klass, _ in verdicts}) <= 1, (rule.code, verdicts)


def test_the_same_deciding_class_gives_the_same_verdict_in_every_project():
    """NVML as the deciding item: a GPU tool built on it needs a port (blocked), a compute
    project that queries it has a documented pattern (needs work); each says its class, and the
    class alone decides: two projects whose deciding items share a class share a verdict."""
    by_class: dict[str, set[r.Verdict]] = {}
    for rule in RULES:
        for sites, files in SIZES[:2]:
            project = _project(rule, sites, files)
            for item in project.deciding:
                if project.rule in ("port-eager", "port-hours", "breaks"):
                    by_class.setdefault(item_class(item), set()).add(project.verdict)
    assert by_class["port"] == {r.Verdict.BLOCKED}
    assert by_class["breaks"] == {r.Verdict.NEEDS_WORK}


def _item(basis: str, hours: float, *, role: str = r.LAZY, rules: tuple[str, ...] = ("ROC330",)):
    site = r.Site(
        rule=rules[0],
        category="cutlass",
        severity="error",
        path="csrc/gemm.cu",
        line=1,
        fixable=False,
        subject=f"rule:{rules[0]}",
        consequence="crash-path",
        tier=r.CORE,
        role=role,
    )
    return r.WorkItem(
        key=f"core:rule:{rules[0]}",
        title="cutlass-include (ROC330)",
        tier=r.CORE,
        consequence="crash-path",
        basis=basis,
        sites=[site],
        rules=list(rules),
        hours=hours,
        weight=18.0,
    )


def test_weeks_of_port_work_on_a_lazy_path_are_blocked_not_needs_work():
    state = r.readiness([_item("port", 286.0)])
    assert state.verdict is r.Verdict.BLOCKED and state.rule == "port-hours"
    # a few hours of port work there is still work, not a blocker
    assert r.readiness([_item("port", 16.0)]).verdict is r.Verdict.NEEDS_WORK
    # a partial port: the project ships an AMD path whose build leaves those kernels out
    evidence = [r.Evidence("dispatch", "setup.py", "vendor dispatch (`IS_HIP_EXTENSION`)")]
    assert r.readiness([_item("port", 286.0)], evidence).verdict is r.Verdict.NEEDS_WORK


def test_a_ready_project_has_at_most_a_week_of_work():
    item = _item("pattern", 64.0)
    item.consequence = "performance"
    state = r.readiness([item])
    assert state.verdict is r.Verdict.NEEDS_WORK and state.rule == "effort"


def test_an_amd_path_with_only_container_work_left_is_ready_with_work_items():
    docker = _item("pattern", 1.0)
    docker.tier = r.DEPLOY
    evidence = [r.Evidence("dispatch", "setup.py", "vendor dispatch (`torch.version.hip`)")]
    state = r.readiness([docker], evidence)
    assert state.verdict is r.Verdict.READY and state.rule == "deploy-only"
    assert state.deciding == [docker]
    # without an AMD path the same container recipe is work to do
    assert r.readiness([docker]).verdict is r.Verdict.NEEDS_WORK


def test_an_unknown_or_cuda_only_native_dependency_is_a_stated_rule_checked_in_order():
    from migrator.model import ImportedPackage

    cuda = ImportedPackage("cukern", "cuda-only", evidence=("needs libcudart.so.12",))
    unknown = ImportedPackage("mystery", "unknown")
    assert list(VERDICT_RULE_TEXT).index("unknown-native") == (
        list(VERDICT_RULE_TEXT).index("unknown") + 1
    )
    state = r.readiness([], native=[unknown])
    assert (state.verdict, state.rule) == (r.Verdict.NEEDS_WORK, "unknown-native")
    assert "`mystery`" in state.reason and "not ready until checked" in state.reason
    state = r.readiness([], native=[unknown, cuda])
    assert "CUDA-only" in state.reason and "`mystery`" not in state.reason
    # a project that ships an AMD path with only container work left is not ready either
    docker = _item("pattern", 1.0)
    docker.tier = r.DEPLOY
    evidence = [r.Evidence("dispatch", "setup.py", "vendor dispatch (`torch.version.hip`)")]
    assert r.readiness([docker], evidence, native=[cuda]).rule == "unknown-native"
    # an earlier rule still decides first
    assert r.readiness([_item("pattern", 2.0)], native=[cuda]).rule == "breaks"
    assert r.readiness([], unread=["app/x.py"], native=[cuda]).rule == "unknown"


def test_no_internal_problem_key_in_a_work_item_title():
    rule = next(rule for rule in RULES if rule.code == "ROC600")
    finding = Finding(
        rule="ROC600",
        name=rule.name,
        category=rule.category,
        severity=Severity.WARNING,
        path="setup.py",
        line=3,
        column=1,
        end_line=3,
        end_column=2,
        message="m",
        problem="cuda-extension-build",
    )
    scan = ScanResult(
        root="/nonexistent", files=[FileResult("setup.py", Status.SCANNED, (finding,))]
    )
    project = r.build_project(scan, name="p", layout=r.ProjectLayout(known=False))
    titles = [item.title for item in project.work]
    assert titles == ["cuda-extension-build (ROC600)"]


def test_kernel_effort_counts_a_repeated_construct_once_per_file_then_a_tenth(tmp_path: Path):
    metas = {"ROC330": r.catalog_meta("ROC330")}
    assert metas["ROC330"] is not None
    sites = [
        r.Site(
            "ROC330",
            "cutlass",
            "error",
            f"csrc/k{n % 2}.cu",
            n + 1,
            False,
            "rule:ROC330",
            "crash-import",
            r.CORE,
            r.CORE,
        )
        for n in range(12)
    ]
    (item,) = r.work_items(sites, metas)  # type: ignore[arg-type]
    hours = metas["ROC330"].effort_hours  # type: ignore[union-attr]
    # first site, half for the second file, a tenth for each of the ten further sites
    assert item.hours == pytest.approx(hours * (1 + 0.5 + 0.1 * 10))


def test_the_json_report_states_the_rule_class_thresholds_and_unknowns(tmp_path: Path):
    from migrator.reporting.report_json import render

    rule = next(rule for rule in RULES if rule.code == "ROC311")
    report = r.Report([_project(rule, 3, 1)], ("gfx942",))
    data = json.loads(render(report))
    project = data["projects"][0]
    assert project["verdict"] == "blocked"
    assert project["verdict_rule_id"] == "port-eager"
    assert project["verdict_rule_text"] == VERDICT_RULE_TEXT["port-eager"]
    assert project["deciding"][0]["class"] == "port"
    assert any(entry["what"] == "on ROCm" for entry in project["unknowns"])
    assert data["formula"]["thresholds"] == {
        "ready_max_hours": READY_MAX_HOURS,
        "port_block_hours": PORT_BLOCK_HOURS,
    }


def test_code_users_run_that_could_not_be_analysed_keeps_a_project_from_ready():
    def scan_with(failed: str) -> ScanResult:
        return ScanResult(
            root="/nonexistent",
            files=[
                FileResult("pkg/ok.py", Status.SCANNED),
                FileResult(failed, Status.FAILED, reason="not scanned: syntax error at line 3"),
            ],
        )

    project = r.build_project(
        scan_with("pkg/core.py"), name="p", layout=r.ProjectLayout(known=False)
    )
    assert project.verdict is r.Verdict.NEEDS_WORK and project.rule == "unknown"
    assert "pkg/core.py" in project.reason
    assert project.unknowns[0][0] == "not analysed"
    # a test file that could not be read is said, but does not decide
    project = r.build_project(
        scan_with("tests/test_x.py"), name="p", layout=r.ProjectLayout(known=False)
    )
    assert project.verdict is r.Verdict.READY
    assert project.unknowns[0][0] == "not analysed"
