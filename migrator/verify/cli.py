"""``migrate verify``: the click command (registered by ``migrator.cli`` with ``add_command``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from migrator.commands.params import SECONDS
from migrator.errors import MigrateError
from migrator.verify.core import verify
from migrator.verify.options import TARGETS, resolve_options
from migrator.verify.receipt import summary


class VerifyUsageError(click.UsageError):
    """A bad option or configuration (exit 2)."""


def _config_table(root: Path) -> dict[str, Any]:
    from migrator.files.config import load_config

    table = load_config(root).verify
    return dict(table)


@click.command("verify")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--smoke", help='Smoke command run in the project root, e.g. "python smoke.py".')
@click.option(
    "--targets", help=f"Comma-separated targets: {', '.join(TARGETS)} [default: native,rocm-sim]."
)
@click.option("--timeout", type=SECONDS, help="Seconds per run before the process group is killed.")
@click.option("--rtol", type=float, help="Relative tolerance for float outputs [default: 1e-4].")
@click.option("--atol", type=float, help="Absolute tolerance for float outputs [default: 1e-4].")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option(
    "--allow-module",
    "allow_modules",
    multiple=True,
    metavar="NAME",
    help="A CUDA-only module you have a ROCm build of (rocm-sim imports it).",
)
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the JSON receipt here ('-' prints it instead of the summary).",
)
@click.option("--docker-image", help="Image for the docker target [default: rocm/pytorch:latest].")
@click.option("--python", "python", help="Interpreter for the smoke runs [default: this one].")
@click.option(
    "--env",
    "env",
    multiple=True,
    metavar="NAME=VALUE",
    help="Extra environment variable for the smoke runs (repeatable).",
)
@click.option(
    "--pytest",
    "pytest",
    metavar="ARGS",
    help="Run pytest with ARGS on both trees and compare per-test outcomes (instead of --smoke).",
)
@click.option(
    "--compare",
    "compare",
    multiple=True,
    metavar="REGEX",
    help="Compare the numbers this regex captures on stdout (named groups are keys; repeatable).",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME=REGEX[:higher|lower]",
    help="A throughput/time/memory figure to report side by side (repeatable).",
)
@click.option(
    "--timing-threshold",
    type=click.FloatRange(0, None, min_open=True),
    help="The slowdown you care about: timings are judged against it [default: 0.1].",
)
@click.option(
    "--regression-threshold",
    type=click.FloatRange(0, None, min_open=True),
    hidden=True,
    help="The earlier name of --timing-threshold.",
)
@click.option(
    "--require-timing",
    is_flag=True,
    default=None,
    help="Fail a run whose timing is not judged (too few runs) or is a regression.",
)
@click.option(
    "--allow-uncompared",
    is_flag=True,
    default=None,
    help="Let runs whose outputs could not be compared pass (reported as not compared).",
)
@click.option("--setup", help="Command run once in each copy before the runs (logged).")
@click.option("--setup-timeout", type=float, help="Seconds for --setup [default: 1800].")
@click.option(
    "--baseline-runs",
    type=click.IntRange(1, 50),
    help="Runs of the unchanged original; their noise sets float tolerances [default: 5].",
)
@click.option(
    "--timing-runs",
    type=click.IntRange(1, 50),
    help="Alternating runs per side when timings are printed, for a 95%% interval [default: 5].",
)
@click.option(
    "--noise-multiple",
    type=click.FloatRange(0, None),
    help="A float output may differ by this many times the baseline's own noise [default: 5].",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Live phase, elapsed time and last printed line on stderr [default: on a terminal].",
)
@click.option("--keep-workspace", is_flag=True, help="Keep the temporary copies and run logs.")
def verify_command(
    path: Path, receipt_path: str | None, progress: bool | None, **overrides: Any
) -> None:
    """Apply the fixes to a copy of the project and prove it still runs: run a smoke command on
    the original and the migrated copy, natively and under emulated ROCm, and compare outputs.

    Exit 0 when every migrated run passes and its outputs match the original's, 1 otherwise
    (outputs that could not be compared fail unless --allow-uncompared; timing that could not be
    judged, or a slowdown beyond --timing-threshold, fails only with --require-timing), 2 on a
    usage error.
    The rocm-sim target emulates ROCm's software stack; it is not an AMD GPU.
    """
    root = path.resolve()
    try:
        options = resolve_options(root, _config_table(root), overrides)
    except MigrateError as error:
        raise VerifyUsageError(str(error)) from None
    from migrator.verify.live import live_progress

    with live_progress(progress) as live:
        if live is None:
            receipt = verify(options)
        else:
            receipt = verify(options, on_step=live.step, on_output=live.output)
    if receipt_path == "-":
        click.echo(_json(receipt.as_dict()))
    else:
        if receipt_path:
            receipt.write(Path(receipt_path))
        click.echo(summary(receipt, receipt_path))
    sys.stdout.flush()
    raise SystemExit(receipt.exit_code)


def _json(data: dict[str, Any]) -> str:
    """The receipt for stdout (``escape.json_text``: the project's output it quotes can issue
    no CI command)."""
    from migrator.output.escape import json_text

    return json_text(data, indent=2)
