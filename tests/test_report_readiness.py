"""Readiness arithmetic: fix classes, score formula, verdicts, breakdowns, effort, targets,
dependencies and receipts, on synthetic findings with injected rule metadata."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from migrator.model import Applicability, FileResult, Finding, FixInfo, ScanResult, Severity, Status
from migrator.reporting import readiness as r


def meta(code: str, **changes) -> r.RuleMeta:
    base = r.RuleMeta(
        code=code,
        name=f"rule-{code.lower()}",
        category="misc",
        severity=Severity.WARNING,
        message=f"message of {code}",
        fix_title=None,
        applicability=Applicability.NONE,
        fact="§0 [X]",
        targets=("all",),
        effort_hours=2.0,
        blocker=False,
        manual_steps="Do it by hand.",
        references="",
    )
    return replace(base, **changes)


CATALOG = {
    "ROC901": meta(
        "ROC901",
        name="hard-pycuda",
        category="dependency",
        blocker=True,
        port=True,
        effort_hours=8.0,
        consequence="crash-path",
    ),
    "ROC902": meta(
        "ROC902",
        name="nvml-query",
        category="monitoring",
        effort_hours=1.0,
        consequence="crash-path",
    ),
    "ROC903": meta(
        "ROC903", name="amp-alias", category="amp", effort_hours=0.1, consequence="crash-path"
    ),
    "ROC120": meta("ROC120", name="fp8-e4m3fn-dtype", category="fp8", targets=("gfx942",)),
    "ROC301": meta("ROC301", name="hardcoded-warp-size", category="kernels", targets=("cdna",)),
    "ROC906": meta("ROC906", name="cuda-wheel", category="dependency"),
}


def lookup(code: str) -> r.RuleMeta | None:
    return CATALOG.get(code)


def finding(
    code: str,
    *,
    path: str = "pkg/a.py",
    line: int = 1,
    severity: Severity = Severity.WARNING,
    fix: Applicability | None = None,
    source: str = "",
    message: str | None = None,
) -> Finding:
    info = CATALOG.get(code)
    return Finding(
        rule=code,
        name=info.name if info else "unknown-rule",
        category=info.category if info else "other",
        severity=severity,
        path=path,
        line=line,
        column=1,
        end_line=line,
        end_column=2,
        message=message or f"message of {code}",
        fix=None if fix is None else FixInfo(fix, "rewrite it"),
        source_line=source,
    )


def scan_of(*findings: Finding, root: str = "/x/proj") -> ScanResult:
    paths = sorted({f.path for f in findings}) or ["pkg/a.py"]
    files = [
        FileResult(path, Status.SCANNED, tuple(f for f in findings if f.path == path))
        for path in paths
    ]
    return ScanResult(root, files)


def project(*findings: Finding, targets=r.DEFAULT_TARGETS) -> r.ProjectReport:
    return r.build_project(scan_of(*findings), name="proj", targets=targets, lookup=lookup)


# -- fix classes, work items, score, verdicts -------------------------------------------------


def test_fix_class_follows_the_finding_fix_and_the_port_flag():
    items = r.classify(
        [
            finding("ROC901"),
            finding("ROC901", fix=Applicability.SAFE),
            finding("ROC902"),
            finding("ROC903", fix=Applicability.UNSAFE),
            finding("ROC903", fix=Applicability.SAFE),
            finding("ROC902", severity=Severity.INFO),
        ],
        lookup,
    )
    # a rule with no drop-in equivalent needs a port (the flag the verdict reads, not ``blocker``); an info finding with no fix is a hint
    assert [item.fix_class for item in items] == [
        "port",
        "safe",
        "manual",
        "unsafe",
        "safe",
        "hint",
    ]
    assert [item.hours for item in items][-1] == 0.0


def test_no_findings_scores_100_and_is_ready():
    report = project()
    assert report.score == 100
    assert report.verdict is r.Verdict.READY
    assert report.deciding == []
    assert report.verdict_reason() == "nothing reachable from the entry points breaks on ROCm"


def test_findings_of_one_rule_in_one_tier_are_one_work_item():
    report = project(
        finding("ROC902", path="pkg/a.py"),
        finding("ROC902", path="pkg/a.py", line=9),
        finding("ROC902", path="pkg/b.py"),
        finding("ROC902", path="tests/test_a.py"),
    )
    keys = [item.key for item in report.work]
    assert keys == ["core:rule:ROC902", "peripheral:rule:ROC902"]
    core, peripheral = report.work
    assert core.files == ["pkg/a.py", "pkg/b.py"] and len(core.sites) == 3
    # 6 points for a crash on a path, size factor 1 + 0.25 log2(2 files), location 1 vs 0.1.
    assert core.weight == pytest.approx(6 * 1.25)
    assert peripheral.weight == pytest.approx(6 * 0.1)
    assert report.score == r.score_from_penalty(6 * 1.25 + 0.6 * r.RANK_DECAY, report.verdict)
    assert report.reachable_work == [core] and report.peripheral_work == [peripheral]


def test_peripheral_items_count_by_the_heaviest_not_by_their_number():
    one = project(finding("ROC902", path="pkg/a.py"), finding("ROC902", path="tests/test_a.py"))
    many = project(
        finding("ROC902", path="pkg/a.py"),
        finding("ROC902", path="tests/test_a.py"),
        finding("ROC903", path="examples/demo.py"),
        finding("ROC901", path="benchmarks/bench_a.py", severity=Severity.WARNING),
    )
    assert len(many.peripheral_work) == 3 and len(one.peripheral_work) == 1
    assert many.penalty == pytest.approx(one.penalty)
    assert many.score == one.score
    # A core item still counts with the decay of its rank.
    more_core = project(finding("ROC902", path="pkg/a.py"), finding("ROC903", path="pkg/b.py"))
    assert more_core.penalty > one.penalty


def test_a_dependency_and_its_uses_are_one_work_item():
    dependency = replace(CATALOG["ROC906"], category="dependency")
    bnb = replace(CATALOG["ROC902"], code="ROC907", category="bitsandbytes")

    def local(code: str) -> r.RuleMeta | None:
        return {"ROC906": dependency, "ROC907": bnb}.get(code)

    findings = [
        finding("ROC906", path="requirements.txt", source="bitsandbytes==0.40.0"),
        replace(finding("ROC902", path="train.py"), rule="ROC907", category="bitsandbytes"),
    ]
    report = r.build_project(scan_of(*findings), name="p", lookup=local)
    assert [item.key for item in report.work] == ["core:bitsandbytes"]
    assert report.work[0].rules == ["ROC906", "ROC907"]


def test_consequence_weights_crash_over_cpu_fallback_over_performance_over_hygiene():
    def score(consequence: str) -> int:
        changed = replace(CATALOG["ROC902"], consequence=consequence)
        return r.build_project(
            scan_of(finding("ROC902")), name="p", lookup=lambda code: changed
        ).score

    assert score("crash-import") < score("crash-path") == score("cpu-fallback")
    assert score("cpu-fallback") < score("performance") < score("hygiene") == 100


def test_hygiene_and_guarded_findings_never_count():
    hygiene = project(finding("ROC902", severity=Severity.HYGIENE))
    guarded = project(replace(finding("ROC902", severity=Severity.ERROR), guard="vendor"))
    for report in (hygiene, guarded):
        assert report.score == 100
        assert report.verdict is r.Verdict.READY
        assert report.work == [] and report.items == []


def test_info_severity_is_hygiene_whatever_the_rule_declares():
    report = project(finding("ROC902", severity=Severity.INFO))
    assert report.work[0].consequence == "hygiene" and report.work[0].weight == 0
    assert report.work[0].hours == 0.0


def test_score_formula_matches_the_documented_one():
    for verdict in r.Verdict:
        low, high = r.BANDS[verdict.value]
        for penalty in (0.0, 1.0, 6.0, 12.0, 60.0, 500.0):
            expected = round(low + (high - low) * 0.5 ** (penalty / r.HALF_LIFE))
            assert r.score_from_penalty(penalty, verdict) == expected


def test_the_score_never_contradicts_the_verdict():
    scores = {
        verdict: [r.score_from_penalty(penalty, verdict) for penalty in (0.0, 3.0, 30.0, 900.0)]
        for verdict in r.Verdict
    }
    assert min(scores[r.Verdict.READY]) > max(scores[r.Verdict.NEEDS_WORK])
    assert min(scores[r.Verdict.NEEDS_WORK]) > max(scores[r.Verdict.BLOCKED])
    assert scores[r.Verdict.READY][0] == 100 and scores[r.Verdict.BLOCKED][-1] == 0


@pytest.mark.parametrize(
    ("findings", "verdict", "deciding"),
    [
        ([], r.Verdict.READY, []),
        ([finding("ROC902", severity=Severity.INFO)], r.Verdict.READY, []),
        ([finding("ROC902", path="tests/test_x.py")], r.Verdict.READY, []),
        ([finding("ROC902")], r.Verdict.NEEDS_WORK, ["core:rule:ROC902"]),
        ([finding("ROC903", fix=Applicability.SAFE)], r.Verdict.NEEDS_WORK, ["core:rule:ROC903"]),
        (
            [finding("ROC902"), finding("ROC901", severity=Severity.ERROR)],
            r.Verdict.BLOCKED,
            ["core:rule:ROC901"],
        ),
        (
            [finding("ROC901", severity=Severity.WARNING)],
            r.Verdict.NEEDS_WORK,
            ["core:rule:ROC901"],
        ),
    ],
    ids=["nothing", "info", "test-only", "manual", "fixable", "port-crash", "port-no-crash"],
)
def test_verdict_rules_and_deciding_items(findings, verdict, deciding):
    catalog = {**CATALOG, "ROC901": replace(CATALOG["ROC901"], port=True)}
    report = r.build_project(scan_of(*findings), name="p", lookup=catalog.get)
    assert report.verdict is verdict
    assert [item.key for item in report.deciding] == deciding


def test_an_amd_path_is_credited_and_never_blocked():
    catalog = {**CATALOG, "ROC901": replace(CATALOG["ROC901"], port=True)}
    scan = scan_of(finding("ROC901", severity=Severity.ERROR))
    plain = r.build_project(scan, name="p", lookup=catalog.get, layout=r.ProjectLayout())
    evidence = [r.Evidence("container", "docker/rocm/Dockerfile", "AMD container image")]
    credited = r.build_project(
        scan, name="p", lookup=catalog.get, layout=r.ProjectLayout(amd_path=evidence)
    )
    assert plain.verdict is r.Verdict.BLOCKED
    assert credited.verdict is r.Verdict.NEEDS_WORK
    # The container names nothing the item is about: the credit is the verdict, not the weight.
    assert credited.penalty == pytest.approx(plain.penalty)
    assert credited.score > plain.score
    assert credited.amd_path == evidence


def test_an_amd_container_covers_container_files():
    container = replace(CATALOG["ROC906"], code="ROC908", category="container")
    found = replace(finding("ROC906", path="Dockerfile"), rule="ROC908", category="container")
    layout = r.ProjectLayout(amd_path=[r.Evidence("container", "Dockerfile.rocm", "AMD image")])
    report = r.build_project(
        scan_of(found), name="p", lookup={"ROC908": container}.get, layout=layout
    )
    # Covered, but a separate path to take: half the weight (x 0.5 for a deployment file), and it
    # does not decide the verdict.
    item = report.work[0]
    assert item.covered_by == "an AMD container"
    points = r.CONSEQUENCE_POINTS[item.consequence]
    assert points > 0 and item.weight == pytest.approx(points * 0.5 * (1 - r.AMD_PATH_CREDIT))
    assert report.verdict is r.Verdict.READY
    # Nothing else is left: what the AMD path takes care of is what the verdict names.
    assert report.deciding == [item]
    assert report.verdict_reason().startswith(
        "nothing reachable from the entry points breaks on ROCm; the project ships an AMD path"
        " — decided by: container file `Dockerfile`"
    )


def test_effort_is_per_work_item_with_its_basis():
    catalog = {**CATALOG, "ROC901": replace(CATALOG["ROC901"], port=True)}
    report = r.build_project(
        scan_of(
            finding("ROC901"),
            finding("ROC902", path="pkg/a.py"),
            finding("ROC902", path="pkg/b.py"),
            finding("ROC903", fix=Applicability.UNSAFE),
            finding("ROC903", path="pkg/c.py", fix=Applicability.SAFE),
            finding("ROC902", path="examples/demo.py"),
        ),
        name="p",
        lookup=catalog.get,
    )
    hours = {item.key: (item.basis, item.hours) for item in report.effort.rows}
    assert hours["core:rule:ROC901"] == ("port", r.PORT_HOURS)
    assert hours["core:rule:ROC902"] == ("pattern", 1.0 * 1.5)
    assert hours["core:rule:ROC903"] == ("fix", r.FIX_REVIEW_HOURS)
    assert [item.key for item in report.effort.apart] == ["peripheral:rule:ROC902"]
    assert report.effort.total_hours == pytest.approx(r.PORT_HOURS + 1.5 + r.FIX_REVIEW_HOURS)


def test_unknown_rule_codes_fall_back_to_the_finding():
    report = project(finding("ROC999"))
    [item] = report.items
    assert item.meta.known is False
    assert item.fix_class == "manual"
    assert item.meta.category == "other"
    # Without metadata the severity decides: a warning runs but differs, an error crashes.
    assert report.work[0].consequence == "performance"
    assert project(finding("ROC999", severity=Severity.ERROR)).work[0].consequence == "crash-path"


# -- breakdowns ----------------------------------------------------------------------------------


def test_breakdown_by_category_severity_fix_and_file():
    report = project(
        finding("ROC902", path="a.py", severity=Severity.ERROR),
        finding("ROC902", path="a.py", line=2),
        finding("ROC903", path="b.py", fix=Applicability.SAFE, severity=Severity.INFO),
        finding("ROC901", path="c.py"),
    )
    assert [row.category for row in report.categories] == ["monitoring", "dependency", "amp"]
    monitoring = report.categories[0]
    assert monitoring.by_severity == {"error": 1, "warning": 1, "info": 0}
    assert monitoring.by_class["manual"] == 2
    assert report.class_counts() == {"port": 1, "manual": 2, "unsafe": 0, "safe": 1, "hint": 0}
    assert report.severity_counts() == {"error": 1, "warning": 2, "info": 1}
    assert [row.path for row in report.files] == ["a.py", "c.py", "b.py"]


def test_ports_come_first_with_manual_steps_and_hints_are_no_work():
    report = project(
        finding("ROC902"),
        finding("ROC902", line=3),
        finding("ROC901"),
        finding("ROC901", path="d.py", severity=Severity.INFO),
    )
    assert [group.meta.code for group in report.manual] == ["ROC901", "ROC902"]
    assert report.manual[0].fix_class == "port"
    assert [f.path for f in report.manual[0].findings] == ["pkg/a.py"]  # the hint is no work
    assert report.manual[1].findings[1].line == 3
    assert report.manual[0].meta.manual_steps == "Do it by hand."


def test_blockers_are_exactly_what_decides_a_blocked_verdict():
    catalog = {**CATALOG, "ROC901": replace(CATALOG["ROC901"], port=True)}

    def build(*findings: Finding, evidence: list[r.Evidence] | None = None) -> r.ProjectReport:
        layout = r.ProjectLayout(amd_path=evidence or [])
        return r.build_project(scan_of(*findings), name="p", lookup=catalog.get, layout=layout)

    blocked = build(finding("ROC901", severity=Severity.ERROR))
    assert blocked.verdict is r.Verdict.BLOCKED
    assert blocked.blockers == blocked.deciding and blocked.blockers
    assert blocked.blocking_rules == {"ROC901"}
    # the same port with an AMD path needs work, and no output may call it a blocker
    evidence = [r.Evidence("container", "docker/rocm/Dockerfile", "AMD container image")]
    credited = build(finding("ROC901", severity=Severity.ERROR), evidence=evidence)
    assert credited.verdict is r.Verdict.NEEDS_WORK
    assert credited.blockers == [] and credited.blocking_rules == frozenset()
    assert all(summary.blockers == 0 for summary in credited.targets.targets)


def test_manual_steps_come_from_the_manual_migration_section():
    class Documented:
        """
        ## What it does
        Flags things.

        ## Manual migration
        Step one.

        ## References
        - somewhere
        """

        code = "ROC999"

        @classmethod
        def doc(cls) -> str:
            import inspect

            return inspect.cleandoc(cls.__doc__ or "")

    info = r.meta_from_rule(Documented)
    assert info.manual_steps == "Step one."
    assert info.references == "- somewhere"
    assert info.targets == ("all",)


# -- targets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule_targets", "target", "expected"),
    [
        (("all",), "gfx1100", True),
        (("gfx942",), "gfx942", True),
        (("gfx942",), "gfx950", False),
        (("gfx94x",), "gfx942", True),
        (("gfx11",), "gfx1101", True),
        (("cdna",), "gfx90a", True),
        (("cdna",), "gfx1100", False),
        (("rdna3",), "gfx1100", True),
        (("cdna3",), "gfx950", False),
    ],
)
def test_target_matching(rule_targets, target, expected):
    assert r.target_matches(rule_targets, target) is expected


def test_target_matrix_uses_rule_targets_and_arch_notes():
    report = project(finding("ROC120"), finding("ROC301"), finding("ROC902"))
    matrix = report.targets
    assert [t.gfx for t in matrix.targets] == list(r.DEFAULT_TARGETS)
    rows = {row.meta.code: row for row in matrix.rows}
    fp8 = dict(zip(r.DEFAULT_TARGETS, rows["ROC120"].cells, strict=True))
    assert fp8["gfx942"].applies and "FNUZ" in (fp8["gfx942"].note or "")
    assert not fp8["gfx950"].applies and "OCP" in (fp8["gfx950"].note or "")
    warp = dict(zip(r.DEFAULT_TARGETS, rows["ROC301"].cells, strict=True))
    assert warp["gfx90a"].applies and "64" in (warp["gfx90a"].note or "")
    assert not warp["gfx1100"].applies and "32" in (warp["gfx1100"].note or "")
    summaries = {t.gfx: t for t in matrix.targets}
    assert summaries["gfx942"].findings == 3
    assert summaries["gfx1100"].findings == 1
    assert summaries["gfx1100"].score > summaries["gfx942"].score
    assert summaries["gfx942"].arch is not None and summaries["gfx942"].arch.wave_size == 64


def test_topics_come_from_the_rule_data():
    assert r.topic_for(meta("ROC400")).key == "flash-attn"
    assert r.topic_for(meta("ROC810")).key == "bitsandbytes"
    assert r.topic_for(meta("ROC150")).key == "sdpa"
    # the name no longer decides: a rule listed under no topic has none
    assert r.topic_for(meta("ROC999", name="flash-attn-import")) is None
    note = r.arch_note(r.topic_for(meta("ROC400")), "gfx1100")
    assert note is not None and "Triton" in note


def test_report_topics_name_real_rules_and_topics():
    from migrator.engine.registry import all_rules
    from migrator.knowledge.tables import load_table

    codes = {rule.code for rule in all_rules()}
    keys = {topic.key for topic in r.TOPICS}
    table = load_table("report_topics")
    assert set(table) <= keys
    listed = [code for listed_codes in table.values() for code in listed_codes]
    assert sorted(set(listed) - codes) == []
    assert len(listed) == len(set(listed))  # one topic per rule


def test_parse_targets():
    assert r.parse_targets(()) == r.DEFAULT_TARGETS
    assert r.parse_targets(["gfx942, gfx90a", "gfx942"]) == ("gfx942", "gfx90a")
    with pytest.raises(ValueError, match="unknown GPU target"):
        r.parse_targets(["mi300x"])


# -- dependencies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "source", "item", "kind"),
    [
        ("requirements.txt", "flash-attn==2.5.8", "flash-attn", "package"),
        (
            "requirements.txt",
            "bitsandbytes>=0.41 ; sys_platform == 'linux'",
            "bitsandbytes",
            "package",
        ),
        (
            "requirements.txt",
            "--extra-index-url https://download.pytorch.org/whl/cu121",
            "https://download.pytorch.org/whl/cu121",
            "index",
        ),
        (
            "Dockerfile",
            "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04",
            "nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04",
            "image",
        ),
        ("pyproject.toml", '    "xformers==0.0.26",', "xformers", "package"),
        (
            "docker-compose.yml",
            "    image: nvcr.io/nvidia/pytorch:24.01-py3",
            "nvcr.io/nvidia/pytorch:24.01-py3",
            "image",
        ),
    ],
)
def test_dependency_items(path, source, item, kind):
    message = "`flash-attn` is CUDA-only" if "pip install" in source else None
    found = finding("ROC906", path=path, source=source, message=message)
    assert r.dependency_item(found) == (item, kind)


def test_dependency_rows_merge_locations_and_look_up_counterparts():
    items = r.classify(
        [
            finding("ROC906", path="requirements.txt", line=3, source="flash-attn==2.5.8"),
            finding("ROC906", path="pyproject.toml", line=9, source='"flash_attn>=2"'),
            finding("ROC906", path="requirements.txt", line=4, source="xformers"),
            finding("ROC906", path="requirements.txt", line=5, source="bitsandbytes==0.41.1"),
            finding("ROC906", path="requirements.txt", line=6, source="mystery-cuda-thing"),
            finding("ROC902", path="pkg/a.py", source="import pynvml"),
        ],
        lookup,
    )
    rows = {row.item: row for row in r.dependency_rows(items)}
    assert set(rows) == {"flash-attn", "xformers", "bitsandbytes", "mystery-cuda-thing"}
    assert rows["flash-attn"].locations == [("requirements.txt", 3), ("pyproject.toml", 9)]
    assert rows["flash-attn"].rocm.startswith("ROCm/flash-attention")
    assert rows["xformers"].min_version == "0.0.28"
    assert rows["bitsandbytes"].min_version == "0.49.0 (official 0.50.0)"
    assert rows["mystery-cuda-thing"].min_version == "unknown"


def test_package_table_lookups_by_name_pattern_and_prefix():
    cupy = r.package_info("cupy-cuda12x")
    assert cupy is not None and "cupy-rocm-7-0" in cupy.rocm and cupy.min_version == "13.x"
    assert r.package_info("cupy-cuda") == r.package_info("cupy-cuda-anything")  # prefix only
    bnb = r.package_info("bitsandbytes[extra]")
    assert bnb is not None and bnb.min_version == "0.49.0 (official 0.50.0)"
    nvml = r.package_info("nvidia_ml_py")
    assert nvml is not None and nvml.rocm == "amdsmi" and nvml.min_version == "ROCm 6.0"
    trt = r.package_info("TensorRT")
    assert trt is not None and "MIGraphX" in trt.rocm
    assert r.package_info("numpy") is None


def test_image_and_index_lookups():
    assert r.package_info("nvidia/cuda:12.1.1-devel") is not None
    info = r.package_info("https://download.pytorch.org/whl/cu121")
    assert info is not None and "rocm" in info.rocm
    assert r.package_info("nvidia-cublas-cu12") is not None
    assert r.package_info("nvidia/cuda") == r.package_info("docker.io/nvidia/cuda:12.4.1")
    assert r.package_info("download.pytorch.org") is None  # a URL part, not a package name


# -- receipts ----------------------------------------------------------------------------


def receipt(**overrides) -> dict:
    data = {
        "schema": "migrate-verify-receipt/1",
        "project": "/p",
        "created": "2026-01-01T00:00:00+00:00",
        "passed": True,
        "amd_gpu_used": False,
        "runs": [
            {
                "target": "native",
                "tree": "original",
                "baseline": True,
                "emulated": False,
                "real_device": "NVIDIA H200",
                "torch_build": {"torch": "2.13.0", "cuda": "13.0", "hip": None, "kind": "cuda"},
                "tokens_per_second": 100.0,
                "passed": True,
                "ran_on_gpu": True,
            },
            {
                "target": "rocm-sim",
                "tree": "migrated",
                "baseline": False,
                "emulated": True,
                "emulation": "ROCm 7.2 on AMD Instinct MI300X (gfx942), emulated",
                "real_device": "NVIDIA H200",
                "torch_build": {"torch": "2.13.0", "cuda": "13.0", "hip": None, "kind": "cuda"},
                "tokens_per_second": 90.0,
                "passed": True,
                "ran_on_gpu": True,
            },
        ],
    }
    data.update(overrides)
    return data


def test_emulated_receipt_says_emulated_rocm_and_never_claims_amd_hardware():
    view = r.verification_from_dict(receipt())
    assert view.emulated and not view.amd_hardware
    assert "emulated ROCm" in view.headline and "no AMD GPU ran" in view.headline
    assert view.tokens_before == 100.0 and view.tokens_after == 90.0
    assert view.speedup == pytest.approx(0.9)
    assert all(run.amd_hardware is False for run in view.runs)
    assert "emulated ROCm" in view.runs[1].device


def test_amd_claimed_only_for_a_rocm_build_on_a_real_amd_device():
    real = receipt(amd_gpu_used=True)
    real["runs"][1] = {
        "target": "native",
        "tree": "migrated",
        "emulated": False,
        "real_device": "AMD Instinct MI300X",
        "device_name": "AMD Instinct MI300X",
        "torch_build": {"torch": "2.13.0", "hip": "7.2.0"},
        "tokens_per_second": 120.0,
        "passed": True,
        "ran_on_gpu": True,
    }
    view = r.verification_from_dict(real)
    assert view.amd_hardware and "AMD Instinct MI300X" in view.headline
    # the same run, but the receipt itself says no AMD GPU was used: trust the receipt
    assert not r.verification_from_dict({**real, "amd_gpu_used": False}).amd_hardware
    # a ROCm build that did not touch the GPU is not AMD hardware either
    cpu_only = json.loads(json.dumps(real))
    cpu_only["runs"][1]["ran_on_gpu"] = False
    assert not r.verification_from_dict(cpu_only).amd_hardware
    # a CUDA build on an AMD-named device string is not a ROCm run
    cuda = json.loads(json.dumps(real))
    cuda["runs"][1]["torch_build"] = {"torch": "2.13.0", "cuda": "13.0"}
    assert not r.verification_from_dict(cuda).amd_hardware


def test_receipt_reader_tolerates_missing_and_odd_fields(tmp_path):
    view = r.verification_from_dict({"runs": [{"target": 3}, "junk", {"emulated": "yes"}]})
    assert view.passed is None and not view.amd_hardware
    assert view.runs[1].emulated and "emulated ROCm" in view.runs[1].device
    path = tmp_path / "receipt.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(r.ReceiptError):
        r.read_receipt(str(path))
    with pytest.raises(r.ReceiptError):
        r.read_receipt(str(tmp_path / "missing.json"))


# -- fleet -------------------------------------------------------------------------------


def test_fleet_is_sorted_by_readiness_then_name():
    report = r.build_report(
        [
            ("blocked", scan_of(finding("ROC901", severity=Severity.ERROR))),
            ("clean-b", scan_of()),
            ("clean-a", scan_of()),
            ("manual", scan_of(finding("ROC902"))),
        ],
        lookup={**CATALOG, "ROC901": replace(CATALOG["ROC901"], port=True)}.get,
    )
    assert [p.name for p in report.projects] == ["clean-a", "clean-b", "manual", "blocked"]
    assert [p.verdict for p in report.projects][2:] == [r.Verdict.NEEDS_WORK, r.Verdict.BLOCKED]
    assert report.is_fleet


def test_unique_names_add_parents_for_duplicates(tmp_path):
    (tmp_path / "a" / "app").mkdir(parents=True)
    (tmp_path / "b" / "app").mkdir(parents=True)
    (tmp_path / "solo").mkdir()
    names = r.unique_names(
        [str(tmp_path / "a" / "app"), str(tmp_path / "b" / "app"), str(tmp_path / "solo")]
    )
    assert names == ["a/app", "b/app", "solo"]
