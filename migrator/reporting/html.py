"""The readiness report as one self-contained HTML file: inline CSS, inline SVG charts, no
JavaScript, no network. Everything that comes from scanned code is escaped by jinja2's
autoescape; rule documentation (Markdown) is rendered with raw HTML disabled."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

import migrator
from migrator.reporting.readiness import (
    BANDS,
    BASIS_LABELS,
    CONSEQUENCE_LABELS,
    EFFORT_ASSUMPTIONS,
    FIX_CLASSES,
    FORMULA_LINES,
    VERDICT_RULES,
    ProjectReport,
    Report,
)

TEMPLATES = Path(__file__).parent / "templates"

#: Fill colours of the fix classes (charts, badges); readable on white and in greyscale order.
COLOURS = {
    "blocker": "#b91c1c",
    "port": "#9f1239",
    "manual": "#ea580c",
    "unsafe": "#ca8a04",
    "safe": "#15803d",
    "hint": "#64748b",
}
CLASS_LABELS = {
    "port": "needs a port",
    "manual": "manual",
    "unsafe": "unsafe fix (review)",
    "safe": "safe fix",
    "hint": "hint (works on ROCm)",
}


@dataclass(frozen=True, slots=True)
class Gauge:
    """A half-circle score gauge: background arc, value arc and colour."""

    track: str
    value: str
    colour: str
    score: int


@dataclass(frozen=True, slots=True)
class Segment:
    """One coloured piece of a stacked bar."""

    x: float
    width: float
    colour: str
    label: str
    count: int


@dataclass(frozen=True, slots=True)
class Bar:
    """One row of a horizontal bar chart."""

    y: float
    label: str
    total: float
    segments: list[Segment]


@dataclass(frozen=True, slots=True)
class BarChart:
    """A horizontal bar chart laid out in SVG user units."""

    width: int
    height: int
    label_width: int
    bars: list[Bar]
    bar_height: int
    ticks: list[tuple[float, str]]


def score_colour(score: int) -> str:
    """The colour of the verdict band the score lies in: red blocked, amber needs work, green
    ready."""
    if score < BANDS["needs-work"][0]:
        return COLOURS["blocker"]
    if score < BANDS["ready"][0]:
        return COLOURS["unsafe"]
    return COLOURS["safe"]


def gauge(score: int, radius: float = 80.0) -> Gauge:
    """Arc paths for a 180° gauge centred at (100, 100)."""
    cx, cy = 100.0, 100.0

    def point(fraction: float) -> tuple[float, float]:
        angle = math.pi * (1.0 - fraction)
        return cx + radius * math.cos(angle), cy - radius * math.sin(angle)

    start = point(0.0)
    end = point(1.0)
    track = f"M {start[0]:.2f} {start[1]:.2f} A {radius} {radius} 0 0 1 {end[0]:.2f} {end[1]:.2f}"
    fraction = max(0.0, min(1.0, score / 100.0))
    tip = point(fraction) if fraction > 0 else start
    value = f"M {start[0]:.2f} {start[1]:.2f} A {radius} {radius} 0 0 1 {tip[0]:.2f} {tip[1]:.2f}"
    return Gauge(track, value, score_colour(score), score)


def _ticks(maximum: float, plot_width: float, label_width: int) -> list[tuple[float, str]]:
    if maximum <= 0:
        return []
    raw = maximum / 4
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    ticks = []
    value = 0.0
    while value <= maximum + 1e-9:
        ticks.append((label_width + plot_width * value / maximum, f"{value:g}"))
        value += step
    return ticks


def stacked_chart(
    rows: list[tuple[str, dict[str, int]]], *, width: int = 640, label_width: int = 180
) -> BarChart:
    """Horizontal stacked bars (one per row) of counts per fix class."""
    bar_height = 22
    gap = 8
    plot = width - label_width - 40
    maximum = max((sum(counts.values()) for _, counts in rows), default=0)
    bars = []
    for index, (label, counts) in enumerate(rows):
        x = float(label_width)
        segments = []
        for klass in FIX_CLASSES:
            count = counts.get(klass, 0)
            if not count:
                continue
            span = plot * count / maximum if maximum else 0.0
            segments.append(Segment(x, span, COLOURS[klass], CLASS_LABELS[klass], count))
            x += span
        bars.append(Bar(20 + index * (bar_height + gap), label, sum(counts.values()), segments))
    height = 20 + len(rows) * (bar_height + gap) + 30
    return BarChart(
        width, height, label_width, bars, bar_height, _ticks(maximum, plot, label_width)
    )


def score_chart(
    projects: list[ProjectReport], *, width: int = 640, label_width: int = 180
) -> BarChart:
    """Horizontal bars of the fleet's scores (0–100)."""
    bar_height = 22
    gap = 8
    plot = width - label_width - 40
    bars = []
    for index, project in enumerate(projects):
        span = plot * project.score / 100
        segment = Segment(
            label_width, span, score_colour(project.score), project.verdict.label, project.score
        )
        bars.append(Bar(20 + index * (bar_height + gap), project.name, project.score, [segment]))
    height = 20 + len(projects) * (bar_height + gap) + 30
    ticks = [(label_width + plot * value / 100, str(value)) for value in (0, 25, 50, 75, 100)]
    return BarChart(width, height, label_width, bars, bar_height, ticks)


def markdown(text: str) -> Markup:
    """Rule documentation (Markdown) as HTML; raw HTML in the source is escaped, not passed."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - rich depends on markdown-it-py
        return Markup("<pre>") + escape(text) + Markup("</pre>")
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    return Markup(renderer.render(text))  # noqa: S704 - html disabled above, input is escaped


_CODE_SPAN = re.compile(r"`([^`]+)`")


def code_spans(text: object) -> Markup:
    """Escape text, then show its `backtick` spans as ``<code>`` (messages are Markdown-ish)."""
    escaped = str(escape(str(text)))
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", escaped))  # noqa: S704 - escaped first


def hours(value: float) -> str:
    """``1.5 h``, ``0 h``."""
    return f"{value:.1f} h" if value else "0 h"


def environment() -> jinja2.Environment:
    """The jinja2 environment shared by the HTML templates (autoescape on)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = markdown
    env.filters["hours"] = hours
    env.filters["code_spans"] = code_spans
    from migrator.output.packages import LABELS

    env.globals.update(
        package_labels=LABELS,
        colours=COLOURS,
        class_labels=CLASS_LABELS,
        fix_classes=FIX_CLASSES,
        gauge=gauge,
        stacked_chart=stacked_chart,
        score_colour=score_colour,
    )
    return env


@functools.cache
def _shared_environment() -> jinja2.Environment:
    """One environment per process for ``render``: jinja2 compiles a template once per
    environment, and compiling ``report.html.j2`` costs 60 to 100 ms of CPU, as much as the
    scan of a small project (a fleet worker renders one report per unit, hundreds per
    process). ``environment()`` still gives a fresh one to callers that add to it."""
    return environment()


def render(report: Report) -> str:
    """The whole report as one HTML document (``html_document``: no raw control character or
    byte that is not UTF-8 from a scanned name, even where autoescape lets one through)."""
    template = _shared_environment().get_template("report.html.j2")
    category_charts = {
        project.name: stacked_chart([(row.category, row.by_class) for row in project.categories])
        for project in report.projects
    }
    overview_charts = {
        project.name: stacked_chart(
            [(row.category, row.by_class) for row in project.categories[:6]],
            width=420,
            label_width=120,
        )
        for project in report.projects
    }
    from migrator.output.escape import html_document

    return html_document(
        template.render(
            report=report,
            overview_charts=overview_charts,
            version=migrator.__version__,
            formula=FORMULA_LINES,
            verdict_rules=VERDICT_RULES,
            assumptions=EFFORT_ASSUMPTIONS,
            consequence_labels=CONSEQUENCE_LABELS,
            basis_labels=BASIS_LABELS,
            fleet_chart=score_chart(report.projects) if report.is_fleet else None,
            category_charts=category_charts,
        )
    )
