"""Print, one per line, the uv options that make ``uv pip install`` look where this machine's
pip looks: its index, extra indexes, find-links folders and constraints files (``pip config
list``: environment variables over the ``install`` section over ``global``). uv reads no pip
configuration; without these it would miss a local wheel pip finds (the CPU build of torch in a
find-links folder) and fetch another build. Used by ``scripts/setup.sh``."""

from __future__ import annotations

import ast
import subprocess
import sys

#: pip's option -> uv's, for the options that say where packages come from.
OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}

#: Where a value comes from, the later overriding the earlier (as pip reads them).
PRECEDENCE = ("global", "install", ":env:")


def uv_options(listing: str) -> list[str]:
    """The uv options for ``pip config list``'s output (lines ``section.name='value'``)."""
    chosen: dict[str, tuple[int, str]] = {}
    for line in listing.splitlines():
        key, separator, quoted = line.partition("=")
        section, _, name = key.rpartition(".")
        if not separator or name not in OPTIONS or section not in PRECEDENCE:
            continue
        rank = PRECEDENCE.index(section)
        if name not in chosen or rank >= chosen[name][0]:
            chosen[name] = (rank, str(ast.literal_eval(quoted)))
    out: list[str] = []
    for name, (_, value) in chosen.items():
        values = value.split()
        if name == "index-url":
            values = values[:1]
        for item in values:
            out.extend([OPTIONS[name], item])
    return out


def main() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    print("\n".join(uv_options(listing)))


if __name__ == "__main__":
    main()
