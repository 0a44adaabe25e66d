"""Per AMD GPU target: which findings matter there, with notes per architecture."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from migrator.reporting.readiness.amd_evidence import Evidence
from migrator.reporting.readiness.meta import RuleMeta, target_matches
from migrator.reporting.readiness.score import Verdict, readiness
from migrator.reporting.readiness.scoring import Item, grouped
from migrator.reporting.readiness.workitems import WorkItem

#: The GPU targets reported when ``--target`` is not given.
DEFAULT_TARGETS: tuple[str, ...] = ("gfx942", "gfx90a", "gfx950", "gfx1100")


_TARGET_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")


def parse_targets(values: Iterable[str]) -> tuple[str, ...]:
    """Comma-separated gfx ids, validated and de-duplicated (order kept)."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            target = part.strip().lower()
            if not target:
                continue
            if not _TARGET_RE.match(target):
                raise ValueError(
                    f"unknown GPU target {part.strip()!r} (expected a gfx id such as gfx942)"
                )
            if target not in out:
                out.append(target)
    return tuple(out) or DEFAULT_TARGETS


@dataclass(frozen=True, slots=True)
class Arch:
    """Facts about one AMD architecture (rocm-facts §0)."""

    gfx: str
    products: str
    family: str
    wave_size: int
    fp8: str
    capability: str


#: rocm-facts §0 (hardware reference) [D1][D2][D3][H4][L4][T1].
ARCHITECTURES: dict[str, Arch] = {
    arch.gfx: arch
    for arch in (
        Arch("gfx908", "MI100", "CDNA1", 64, "none", "(9, 0)"),
        Arch("gfx90a", "MI210, MI250(X)", "CDNA2", 64, "none", "(9, 0)"),
        Arch("gfx942", "MI300X, MI300A, MI325X", "CDNA3", 64, "FNUZ only", "(9, 4)"),
        Arch("gfx950", "MI350X, MI355X", "CDNA4", 64, "OCP + MX", "(9, 5)"),
        Arch("gfx1100", "Radeon RX 7900 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch("gfx1101", "Radeon RX 7800/7700 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch("gfx1102", "Radeon RX 7600 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch(
            "gfx1200", "Radeon RX 9060 (RDNA4)", "RDNA4", 32, "OCP (Triton: e5m2 only)", "(12, 0)"
        ),
        Arch(
            "gfx1201", "Radeon RX 9070 (RDNA4)", "RDNA4", 32, "OCP (Triton: e5m2 only)", "(12, 0)"
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Topic:
    """Per-architecture notes for one kind of finding; the rules it covers are listed in the
    rule data (``rules/data/report_topics.toml``)."""

    key: str
    title: str
    notes: dict[str, str]
    fact: str


#: Keys of ``notes`` are gfx ids or gfx prefixes (``gfx11`` covers gfx1100–gfx1102).
TOPICS: tuple[Topic, ...] = (
    Topic(
        "fp8",
        "FP8 formats",
        {
            "gfx908": "no FP8",
            "gfx90a": "no FP8: keep bf16/fp16 weights",
            "gfx942": "FNUZ only: float8_e4m3fnuz (max 240, not 448); e4m3fn checkpoints need "
            "conversion (same bits = half the value, scales x2)",
            "gfx950": "OCP float8_e4m3fn / e5m2 as on NVIDIA, plus MX formats",
            "gfx11": "no FP8 on RDNA3",
            "gfx12": "OCP FP8 (Triton: e5m2 only)",
        },
        "rocm-facts §0, §8 [H4][L4][L5]",
    ),
    Topic(
        "sdpa",
        "SDPA fused kernels (AOTriton)",
        {
            "gfx908": "unsupported: falls back to the math kernel",
            "gfx90a": "flash / mem-efficient: official",
            "gfx942": "flash / mem-efficient: official",
            "gfx950": "official from AOTriton 0.10b",
            "gfx1100": "experimental: needs TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1, else math",
            "gfx1101": "experimental (AOTriton 0.10b)",
            "gfx1200": "experimental (AOTriton 0.10b)",
            "gfx1201": "official from AOTriton 0.10b",
        },
        "rocm-facts §2 [P8][P10][P11]",
    ),
    Topic(
        "flash-attn",
        "flash-attn",
        {
            "gfx908": "not supported by ROCm/flash-attention",
            "gfx90a": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx942": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx950": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx11": "Triton backend only (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE)",
            "gfx12": "Triton backend only (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE)",
        },
        "rocm-facts §4a [F1]",
    ),
    Topic(
        "bitsandbytes",
        "bitsandbytes",
        {
            "gfx908": "only in the ROCm 7.14 build",
            "gfx90a": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx942": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx950": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx11": ">= 0.49 (gfx110x Linux build), official in 0.50",
            "gfx12": ">= 0.49 (gfx120x Linux build), official in 0.50",
        },
        "rocm-facts §5 [B1]",
    ),
    Topic(
        "wave-size",
        "wave size",
        {
            "gfx9": "wavefront 64: code that assumes 32 lanes gives wrong results",
            "gfx11": "wave 32 (as on NVIDIA), but read the property instead of hard-coding it",
            "gfx12": "wave 32 (as on NVIDIA), but read the property instead of hard-coding it",
        },
        "rocm-facts §0, §7 [D2][T1][H3]",
    ),
    Topic(
        "tf32",
        "TF32",
        {
            "gfx908": "no TF32: the flags are no-ops",
            "gfx90a": "no TF32: the flags are no-ops",
            "gfx942": "TF32 via hipBLASLt with HIPBLASLT_ALLOW_TF32=1; numerics differ from NVIDIA",
            "gfx950": "is_tf32_supported() is True on gfx95*; the docs list gfx942 only - measure",
            "gfx11": "no TF32: the flags are no-ops",
            "gfx12": "no TF32: the flags are no-ops",
        },
        "rocm-facts §1, §2 [P2][P6]",
    ),
    Topic(
        "capability",
        "capability gates",
        {
            "gfx908": "capability (9, 0): passes >= (8, 0) gates",
            "gfx90a": "capability (9, 0): passes >= (8, 0) and >= (9, 0) gates",
            "gfx942": "capability (9, 4): passes Ampere/Hopper gates, selects Hopper-only paths",
            "gfx950": "capability (9, 5): passes Ampere/Hopper gates, selects Hopper-only paths",
            "gfx11": "capability (11, 0): passes every sm gate",
            "gfx12": "capability (12, 0): passes every sm gate",
        },
        "rocm-facts §0, §1 [D1][D3]",
    ),
)


@functools.cache
def _topic_of_code() -> dict[str, Topic]:
    from migrator.knowledge.tables import load_table

    topics = {topic.key: topic for topic in TOPICS}
    return {
        code: topics[key] for key, codes in load_table("report_topics").items() for code in codes
    }


def topic_for(meta: RuleMeta) -> Topic | None:
    """The topic the rule data lists the rule's code under (``rules/data/report_topics.toml``)."""
    return _topic_of_code().get(meta.code)


def arch_note(topic: Topic | None, target: str) -> str | None:
    """The topic's note for a target: exact id first, then the longest matching prefix."""
    if topic is None:
        return None
    if target in topic.notes:
        return topic.notes[target]
    prefixes = [key for key in topic.notes if target.startswith(key)]
    return topic.notes[max(prefixes, key=len)] if prefixes else None


@dataclass(frozen=True, slots=True)
class TargetCell:
    """Whether one rule's findings matter on one target, and the arch note if there is one."""

    applies: bool
    note: str | None


@dataclass(slots=True)
class TargetRow:
    """One rule with findings, against every requested target."""

    meta: RuleMeta
    count: int
    topic: Topic | None
    cells: list[TargetCell]


@dataclass(slots=True)
class TargetSummary:
    """One target: its facts, how many findings matter there, and the score restricted to them."""

    gfx: str
    arch: Arch | None
    findings: int
    blockers: int
    score: int
    verdict: Verdict


@dataclass(slots=True)
class TargetMatrix:
    """Targets (columns) against rules with findings (rows)."""

    targets: list[TargetSummary]
    rows: list[TargetRow]


def target_matrix(
    items: Sequence[Item],
    targets: Sequence[str],
    work: Sequence[WorkItem] = (),
    amd_path: Sequence[Evidence] = (),
) -> TargetMatrix:
    """Which findings matter on which AMD architecture, with a score per target (the work
    items whose rules apply there)."""
    rows = []
    for group in grouped(items, lambda item: item.meta.code).values():
        meta = group[0].meta
        topic = topic_for(meta)
        cells = [
            TargetCell(target_matches(meta.targets, target), arch_note(topic, target))
            for target in targets
        ]
        rows.append(TargetRow(meta, len(group), topic, cells))
    rows.sort(key=lambda row: (-sum(cell.applies for cell in row.cells), -row.count, row.meta.code))
    targets_of = {item.meta.code: item.meta.targets for item in items}
    summaries = []
    for target in targets:
        relevant = [item for item in items if target_matches(item.meta.targets, target)]
        # On one target an item either matters fully or not at all.
        applying = [
            replace(entry, share=1.0, weight=entry.weight / entry.share)
            for entry in work
            if entry.share
            and (
                not entry.rules  # an item no rule raised (the project's own kernels): everywhere
                or any(
                    target_matches(targets_of.get(rule, ("all",)), target) for rule in entry.rules
                )
            )
        ]
        state = readiness(applying, amd_path)
        summaries.append(
            TargetSummary(
                gfx=target,
                arch=ARCHITECTURES.get(target),
                findings=len(relevant),
                # the items that decide a blocked verdict there, as the project's own count
                blockers=len(state.deciding) if state.verdict is Verdict.BLOCKED else 0,
                score=state.score,
                verdict=state.verdict,
            )
        )
    return TargetMatrix(summaries, rows)
