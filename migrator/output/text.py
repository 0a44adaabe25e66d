"""Human output: one line per problem grouped by file (severity, rule, message, how many more
sites), the source line, each rule's rationale once, then a summary table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from migrator.model import Finding, ScanResult, Severity, Status, is_problem
from migrator.output.escape import safe_text

_STYLE = {
    Severity.ERROR: "bold red",
    Severity.WARNING: "yellow",
    Severity.INFO: "cyan",
    Severity.HYGIENE: "dim",
}


def _shown(value: str) -> str:
    """Scanned-code text for the terminal: control characters and markup neutralised."""
    return escape(safe_text(value))


def _location(finding: Finding) -> str:
    cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
    return f"{finding.path}{cell}:{finding.line}:{finding.column}"


def render(
    results: list[ScanResult], console: Console, *, show_source: bool = True, summary: bool = True
) -> None:
    findings_total: list[Finding] = []
    for result in results:
        current = None
        for finding in result.findings:
            findings_total.append(finding)
            if finding.path != current:
                current = finding.path
                console.print()
                console.print(f"[bold]{_shown(finding.path)}[/bold]")
            marker = ""
            if finding.fix is not None:
                marker = (
                    " [green]\\[*][/green]"
                    if finding.fix.applicability.value == "safe"
                    else " [magenta]\\[unsafe fix][/magenta]"
                )
            guard = f" [dim]\\[guarded: {_shown(finding.guard)}][/dim]" if finding.guard else ""
            console.print(
                f"  {_shown(_location(finding))} "
                f"[{_STYLE[finding.severity]}]{finding.rule} {finding.severity.label}[/] "
                f"{_shown(finding.message)}{marker}{guard}"
            )
            if show_source and finding.source_line:
                console.print(f"      [dim]{_shown(finding.source_line[:160])}[/dim]")
        for file in result.files:
            if file.status is Status.SKIPPED:
                console.print(f"[dim]skipped[/dim] {_shown(file.path)}: {_shown(file.reason)}")
            elif file.status is Status.FAILED:
                console.print(f"[red]failed[/red]  {_shown(file.path)}: {_shown(file.reason)}")
    if summary:
        _rationales(findings_total, console)
        _summary(results, findings_total, console)
        _packages(results, console)


def _packages(results: list[ScanResult], console: Console) -> None:
    """The unknown and CUDA-only native dependencies, one line each, then one summary line."""
    from migrator.output import packages

    concerns = packages.concerns(results)
    environment = "; ".join(result.environment for result in results if result.environment)
    if not concerns:
        if environment:
            read = sum(len(result.packages) for result in results)
            console.print(
                f"Native dependencies: {read} third-party package(s) of the GPU code read from "
                f"{_shown(environment)}: none unknown or CUDA-only."
            )
        return
    console.print()
    console.print("[bold]Native dependencies[/bold]")
    for package in concerns:
        style = "bold red" if package.status == "cuda-only" else "yellow"
        console.print(f"  [{style}]{_shown(packages.line(package))}[/]")
    console.print(
        f"Native dependencies: {_shown(packages.summary(concerns, environment))}."
        + (f" Read from {_shown(environment)}." if environment else "")
    )


def rationale(code: str) -> str:
    """The first paragraph of a rule's "Why it breaks on ROCm" section (its long rationale);
    empty for an unknown code (a finding from an older cache)."""
    from migrator.engine.registry import rule_rationales

    return rule_rationales().get(code, "")


def _rationales(findings: list[Finding], console: Console) -> None:
    """Each reported rule's rationale, once (not repeated on every finding)."""
    codes = sorted({finding.rule for finding in findings})
    if not codes:
        return
    console.print()
    console.print("[bold]Why[/bold] (`migrate explain CODE` for the fix)")
    for code in codes:
        text = rationale(code)
        if text:
            console.print(f"  [bold]{code}[/bold] {_shown(text)}")


def problems_and_hints(findings: Sequence[Finding]) -> str:
    """``3 problems (7 sites) and 2 hints``: problems break, change or install CUDA-only software
    on a ROCm build (error, warning); hints are true but need no change there (info, hygiene).
    A problem found at several sites is one finding; the sites are counted beside it."""
    problems = [f for f in findings if is_problem(f.severity)]
    hints = [f for f in findings if not is_problem(f.severity)]
    text = _counted(problems, "problem")
    if hints:
        text += " and " + _counted(hints, "hint")
    return text


def _counted(findings: Sequence[Finding], noun: str) -> str:
    count = len(findings)
    text = f"{count} {noun}{'s' if count != 1 else ''}"
    sites = sum(1 + len(finding.related) for finding in findings)
    if sites != count:
        text += f" ({sites} sites)"
    return text


def _summary(results: list[ScanResult], findings: list[Finding], console: Console) -> None:
    scanned = sum(1 for result in results for file in result.files if file.status is Status.SCANNED)
    problems = sum(
        1 for result in results for file in result.files if file.status is not Status.SCANNED
    )
    console.print()
    if not findings:
        console.print(f"[green]No CUDA-only constructs found[/green] in {scanned} files.")
        return
    table = Table(title="Findings by category", show_lines=False)
    table.add_column("category")
    table.add_column("error", justify="right", style="red")
    table.add_column("warning", justify="right", style="yellow")
    table.add_column("info", justify="right", style="cyan")
    table.add_column("hygiene", justify="right", style="dim")
    table.add_column("fixable", justify="right", style="green")
    counts: Counter[tuple[str, Severity]] = Counter((f.category, f.severity) for f in findings)
    fixable: Counter[str] = Counter(f.category for f in findings if f.fix is not None)
    for category in sorted({f.category for f in findings}):
        table.add_row(
            category,
            *(
                str(counts.get((category, level), "") or "")
                for level in (Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HYGIENE)
            ),
            str(fixable.get(category, "") or ""),
        )
    console.print(table)
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability.value == "safe")
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability.value == "unsafe")
    guarded = sum(1 for f in findings if f.guard)
    shown = [f for f in findings if not f.guard]
    console.print(
        f"Found {problems_and_hints(shown)} in {scanned} files"
        + (f" (and {guarded} in code that never runs on ROCm)" if guarded else "")
        + (f" ({problems} files skipped or failed)" if problems else "")
        + f". {safe} fixable with `migrate fix`, {unsafe} more with `--unsafe-fixes`."
    )
