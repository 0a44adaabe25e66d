"""``migrate doctor``: the click command (registered by ``migrator.cli`` with ``add_command``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from migrator.commands.params import SECONDS
from migrator.doctor.checks import CHECKS, FAIL, NA, PASS, CheckResult, gather
from migrator.doctor.project import needed_packages
from migrator.doctor.system import Host

_LABELS = {PASS: "PASS", FAIL: "FAIL", NA: "N/A "}


def run_checks(
    host: Host, project: Path | None, smoke: str | None, timeout: float
) -> list[CheckResult]:
    """Gather the machine's facts once and run every check (plus the smoke check if asked)."""
    needs = needed_packages(project) if project is not None else {}
    facts = gather(host, needs, project)
    results = [check(facts) for check in CHECKS]
    if smoke:
        from migrator.doctor.smoke import check_smoke

        results.append(check_smoke(host, project or Path.cwd(), smoke, timeout))
    return results


def render_text(results: list[CheckResult]) -> str:
    """One line per check, the fix indented under each failure, then a count; each line shown
    escaped (``safe_text``): details quote the project's file names and its smoke output."""
    from migrator.output.escape import safe_text

    width = max(len(result.id) for result in results)
    lines = ["migrate doctor: ROCm pre-flight checks on this machine"]
    for result in results:
        lines.append(f"{_LABELS[result.status]}  {result.id:<{width}}  {result.detail}")
        if result.status == FAIL and result.fix:
            lines.append(f"      {'':<{width}}  fix: {result.fix}")
    counts = {status: sum(r.status == status for r in results) for status in (PASS, FAIL, NA)}
    lines.append(f"{counts[PASS]} pass, {counts[FAIL]} fail, {counts[NA]} n/a")
    return "\n".join(safe_text(line) for line in lines)


def render_json(results: list[CheckResult]) -> str:
    """The checks as a JSON document (``--format json``; ``escape.json_text``: no CI command
    or control character from the project's names or output)."""
    from migrator.output.escape import json_text

    return json_text(
        {
            "checks": [result.as_dict() for result in results],
            "summary": {
                status: sum(r.status == status for r in results) for status in (PASS, FAIL, NA)
            },
            "exit_code": exit_code(results),
        },
        indent=2,
    )


def exit_code(results: list[CheckResult]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(result.status == FAIL for result in results) else 0


@click.command("doctor")
@click.argument(
    "path", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--smoke", help="Also run this smoke command and check the model used the GPU.")
@click.option(
    "--timeout",
    type=SECONDS,
    default=600.0,
    show_default=True,
    help="Seconds before the smoke command is killed.",
)
@click.option(
    "--python",
    "python",
    default=sys.executable,
    help="Interpreter whose torch is checked [default: this one].",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def doctor_command(
    path: Path | None, smoke: str | None, timeout: float, python: str, output_format: str
) -> None:
    """Check that this machine can run a migrated project on an AMD GPU with ROCm.

    Looks at the ROCm tools, the GPU, group membership, the torch build (in a subprocess),
    consumer-card overrides and, with PATH, the ROCm builds of flash-attn / bitsandbytes the
    project needs. Exit 0 when nothing fails, 1 otherwise, 2 on a usage error.
    """
    host = Host(python=python)
    results = run_checks(host, path.resolve() if path else None, smoke, timeout)
    click.echo(render_json(results) if output_format == "json" else render_text(results))
    raise SystemExit(exit_code(results))
