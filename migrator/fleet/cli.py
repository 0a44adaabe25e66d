"""``migrate fleet MANIFEST``: assess every repository of a manifest as units of work on Ray
(a local instance by default, a cluster with ``--address``), reusing stored results, and write
the fleet report built from the results folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import click

from migrator.errors import MigrateError
from migrator.fleet.render import FORMATS

if TYPE_CHECKING:
    from migrator.fleet.engine import Choice
    from migrator.fleet.unit import Unit


@click.command("fleet")
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="html",
    show_default=True,
    help="The fleet report: html (one page), md, json or csv (a row per repository).",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout."
)
@click.option(
    "--results",
    type=click.Path(file_okay=False),
    default=None,
    help="Results folder (default: migrate-fleet-results beside the manifest).",
)
@click.option("--address", default=None, help="Join the Ray cluster at ADDRESS (e.g. auto).")
@click.option(
    "--num-cpus", type=click.IntRange(min=1), default=None, help="CPUs of a local Ray instance."
)
@click.option(
    "--retries",
    type=click.IntRange(min=0, max=20),
    default=2,
    show_default=True,
    help="Retries of a unit that fails, crashes or times out.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds one unit may take.",
)
@click.option(
    "--max-size",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="MiB a checkout may take.",
)
@click.option("--force", is_flag=True, help="Run every unit again, stored results or not.")
@click.option(
    "--engine",
    "engine_name",
    type=click.Choice(["auto", "ray", "serial"]),
    default="auto",
    show_default=True,
    help="Where units run: auto picks this process for a small fleet and a local Ray instance "
    "for a large one (and says which it took); --address always means Ray.",
)
@click.option("--serial", is_flag=True, help="Same as --engine serial.")
def fleet_command(
    manifest: str,
    output_format: str,
    output: str | None,
    results: str | None,
    address: str | None,
    num_cpus: int | None,
    retries: int,
    timeout: float,
    max_size: int,
    force: bool,
    engine_name: str,
    serial: bool,
) -> None:
    """Readiness of every repository in MANIFEST, each a unit of work on Ray.

    MANIFEST is TOML ([[repo]] tables: path, or url with a pinned ref; subdir, select,
    ignore, exclude, fix-diff, kernels, verify) or one path per line, as for
    `report --repos`. Units whose repository, commit, tool and options are unchanged are
    not run again. Exit status 0 when every unit succeeded, 1 when some failed, 2 on a usage
    error (and when Ray is not installed).
    """
    from migrator.fleet import aggregate, engine, render
    from migrator.fleet.manifest import read_manifest
    from migrator.fleet.store import Store

    fleet_manifest = read_manifest(manifest)
    if serial:
        engine_name = "serial"
    if address and engine_name == "serial":
        raise MigrateError("--address runs the fleet on Ray: leave out --serial/--engine serial")
    serial = engine_name == "serial"
    if output:
        from migrator.commands.options import check_output

        check_output(output, [Path(manifest)])
    store = Store(
        Path(results) if results else Path(manifest).resolve().parent / "migrate-fleet-results"
    )
    with _results_policy():
        store.open()  # a planted symlink is refused before any work
    if not serial:
        ray = engine.import_ray()
        if address:
            from migrator.fleet.connect import check_cluster

            # the usual mistakes (no cluster there, its token, its versions) in one line
            # within seconds, before any repository is resolved
            address = check_cluster(address, ray.__version__)
    planned = engine.plan(
        fleet_manifest.repos,
        store,
        timeout=timeout,
        max_bytes=max_size * 2**20,
        retries=retries,
        force=force,
    )
    with _results_policy():
        for unit in planned.units:
            store.check(unit.spec.name, unit.key)
    if engine_name == "auto" and not address and planned.todo:
        choice = _choose(planned.todo, store.root, num_cpus)
        if choice is not None:
            click.echo(choice.line(), err=True)
            serial = choice.engine == "serial"
    progress = engine.Progress(len(planned.todo) + len(planned.failed), len(planned.reused))
    with _results_policy():
        for unit, reason in planned.failed:
            store.write_failure(
                unit.spec.name, unit.key, engine._failure(unit, reason, retries + 1)
            )
            progress.failed += 1

    def connected(resources: dict[str, float]) -> None:
        cpus, gpus = resources.get("CPU", 0), resources.get("GPU", 0)
        click.echo(f"fleet: Ray with {cpus:g} CPUs, {gpus:g} GPUs", err=True)

    link_base = Path(output).resolve().parent if output else Path.cwd()
    built: list[tuple[aggregate.Fleet, str]] = []

    def build() -> None:
        """The fleet report, from the results folder."""
        progress.close()
        generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
        fleet = aggregate.collect(planned.units, store, link_base, generated)
        built.append((fleet, render.render(fleet, output_format)))

    with _results_policy():
        if serial:
            engine.run_serial(planned.todo, store, progress, retries)
        elif planned.todo:
            engine.run_ray(
                planned.todo,
                store,
                progress,
                address=address,
                num_cpus=num_cpus,
                retries=retries,
                on_connect=connected,
                then=build,
            )
    if not built:
        build()
    fleet, text = built[0]
    if output:
        from migrator.files.writer import WriteRefused, write_output

        try:
            write_output(output, text, [Path(manifest)])
        except WriteRefused as error:
            raise MigrateError(str(error)) from None
        counts = ", ".join(f"{count} {verdict}" for verdict, count in fleet.verdicts.items())
        click.echo(f"wrote {output}: {len(fleet.rows)} repositories ({counts})", err=True)
    else:
        click.echo(text, nl=False)
    sys.exit(1 if fleet.failed else 0)


def _choose(todo: Sequence[Unit], results: Path, num_cpus: int | None) -> Choice | None:
    """This process or a local Ray instance for ``todo``; None when this process has joined
    Ray already (a program calling the command), which the run then uses."""
    import ray

    from migrator.fleet.engine import choose_engine, measured_unit_seconds

    if ray.is_initialized():
        return None
    return choose_engine(len(todo), num_cpus or os.cpu_count() or 1, measured_unit_seconds(results))


@contextmanager
def _results_policy() -> Iterator[None]:
    """A write the write policy refuses in the results folder (a symlink planted there) ends
    the run with its one-line reason (exit 2), never a traceback."""
    from migrator.files.writer import WriteRefused

    try:
        yield
    except WriteRefused as error:
        raise MigrateError(f"results folder: {error}") from None
