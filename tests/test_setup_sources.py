"""``scripts/setup.sh`` installs through uv with the sources pip is configured with
(``scripts/pip_sources.py``), read from real pip's ``pip config list``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scripts.pip_sources import uv_options


def _pip_listing(tmp_path: Path, config: str, **env: str) -> str:
    conf = tmp_path / "pip.conf"
    conf.write_text(config, encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
        # this file only: no machine-wide (XDG) or user configuration
        env={
            **clean,
            "PIP_CONFIG_FILE": str(conf),
            "XDG_CONFIG_DIRS": str(tmp_path / "none"),
            "XDG_CONFIG_HOME": str(tmp_path / "none"),
            "HOME": str(tmp_path),
            **env,
        },
    )
    return done.stdout


def test_indexes_find_links_and_constraints_as_pip_reads_them(tmp_path: Path) -> None:
    listing = _pip_listing(
        tmp_path,
        "[global]\nindex-url = https://mirror.example/simple\n"
        "extra-index-url = file:///one/simple file:///two/simple\n"
        "find-links = /from/global\nconstraint = /c.txt\n"
        "[install]\nfind-links = /from/install\n",
        PIP_EXTRA_INDEX_URL="file:///env/simple",
    )
    options = uv_options(listing)
    pairs = sorted(zip(options[::2], options[1::2], strict=True))
    assert pairs == [
        ("--constraint", "/c.txt"),
        ("--extra-index-url", "file:///env/simple"),  # the environment over the file
        ("--find-links", "/from/install"),  # `install` over `global`
        ("--index-url", "https://mirror.example/simple"),
    ]


def test_nothing_configured_adds_no_option(tmp_path: Path) -> None:
    assert uv_options(_pip_listing(tmp_path, "[global]\ntimeout = 60\n")) == []
