"""``migrate server``: start the language server on stdin/stdout."""

from __future__ import annotations

import click

from migrator.errors import MigrateError


@click.command("server")
def server_command() -> None:
    """Run the language server over stdio, for editors (diagnostics, fixes, hover).

    Configure the editor to start `migrate server` for Python, requirements, Dockerfile, shell,
    YAML and TOML files; see docs/editors.md.
    """
    try:
        from migrator.lsp.server import main
    except ImportError as error:
        raise MigrateError(
            f"migrate server needs pygls ({error.name} is missing): pip install 'migrate-rocm[lsp]'"
        ) from None
    main()
