"""The ``migrate`` command group: which commands it has (scan, fix, rules and explain from their
modules; verify, doctor, report, pr and fleet loaded on first use), and how errors, interrupts and a
closed stdout become one line and an exit status. Data goes to stdout; progress and summaries
to stderr."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from migrator import __version__
from migrator.commands.catalog import explain, rules_command
from migrator.commands.fix import fix
from migrator.commands.scan import scan
from migrator.errors import MigrateError

LAZY_COMMANDS = {
    "verify": ("migrator.verify.cli", "verify_command"),
    "doctor": ("migrator.doctor", "doctor_command"),
    "report": ("migrator.reporting.cli", "report_command"),
    "pr": ("migrator.pr.cli", "pr_command"),
    "kernels": ("migrator.commands.kernels", "kernels_command"),
    "server": ("migrator.lsp.cli", "server_command"),
    "fleet": ("migrator.fleet.cli", "fleet_command"),
}


class _Group(click.Group):
    """Loads heavy commands on first use and turns project errors into one-line messages
    with exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        available = [name for name, (module, _) in LAZY_COMMANDS.items() if _importable(module)]
        return sorted({*super().list_commands(ctx), *available})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module_name, attribute = LAZY_COMMANDS[cmd_name]
            try:
                command = getattr(importlib.import_module(module_name), attribute)
            except ImportError:
                return None
            return command if isinstance(command, click.Command) else None
        return super().get_command(ctx, cmd_name)

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Every usage error on one line (``migrate: error: ...``) with exit 2."""
        run = super().main
        if not standalone_mode:
            return run(args, prog_name, complete_var, False, **extra)
        try:
            code = run(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Abort:
            click.echo("migrate: interrupted", err=True)
            sys.exit(130)
        except click.ClickException as error:
            from migrator.output.escape import safe_text

            message = safe_text(" ".join(error.format_message().split()))
            click.echo(f"migrate: error: {message}", err=True)
            sys.exit(2)
        except BrokenPipeError:
            _quiet_exit()
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _quiet_exit()
        except MigrateError as error:  # may name a file of the project: shown escaped
            from migrator.output.escape import safe_text

            click.echo(f"migrate: error: {safe_text(error)}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("migrate: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except OSError as error:  # a path the user gave cannot be read or written
            from migrator.output.escape import safe_text

            where = f" ({safe_text(error.filename)})" if error.filename else ""
            click.echo(f"migrate: error: {safe_text(error.strerror or error)}{where}", err=True)
            ctx.exit(2)
        except Exception as error:  # a bug of ours: one line, exit 2, never a traceback
            from migrator.output.escape import safe_text

            first = safe_text(str(error).splitlines()[0]) if str(error) else ""
            click.echo(
                f"migrate: internal error: {type(error).__name__}: {first} "
                "(please report it; MIGRATE_DEBUG=1 shows the traceback)",
                err=True,
            )
            if os.environ.get("MIGRATE_DEBUG"):
                raise
            ctx.exit(2)


#: Exit status after stdout was closed early (``migrate scan | head -1``): 128 + SIGPIPE, as
#: for any Unix tool killed by a closed pipe; nothing is printed.
BROKEN_PIPE_EXIT = 141


def _quiet_exit() -> None:
    """Leave silently after the reader of stdout went away (no traceback, no flush error)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    os._exit(BROKEN_PIPE_EXIT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migrate")
def cli() -> None:
    """Find and rewrite CUDA-only code so PyTorch projects run on AMD GPUs with ROCm."""


cli.add_command(scan)
cli.add_command(fix)
cli.add_command(rules_command)
cli.add_command(explain)


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _exit_on_signals() -> None:
    """Turn SIGTERM and SIGHUP into a normal exit, so that every ``finally`` runs (temporary
    workspaces removed, worker processes stopped, a ``pr`` rolled back)."""
    import signal

    def leave(signum: int, _frame: object) -> None:
        helpers = sys.modules.get("migrator.process.helper")
        if helpers is not None:
            helpers.end_every_helper()
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), leave)


def main(prog_name: str | None = None) -> None:
    """Console-script (and ``python -m migrator``) entry point."""
    _exit_on_signals()
    cli(prog_name=prog_name)


if __name__ == "__main__":
    main()
