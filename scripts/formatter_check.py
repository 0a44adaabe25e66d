#!/usr/bin/env python3
"""Does the safe diff of `migrate fix` pass each project's own formatter check?

For each project under the corpus folder with a detected formatter
(`migrator.engine.formatter.detect_formatter`), the project is copied to a temporary folder
(without `.git`), `fix` (safe fixes; `--unsafe` for both levels) is applied to the copy, and
the detected formatter's check (`ruff format --diff` / `black --diff`, with the options the
project passes) is run on each changed Python file it covers, in the copy and in the untouched
project. A file counts as a new violation when the formatter would change a line in the fixed
file that it would not change in the original (pre-existing formatting drift cancels out, as
does a formatter version other than the project's pin). `--without-formatter` runs `fix` with
the formatter step off, for the figure before it existed.

    scripts/formatter_check.py                      # every corpus project with a formatter
    scripts/formatter_check.py axolotl litgpt       # these projects
    scripts/formatter_check.py --without-formatter  # the same, without the formatter step

Exit status 1 when any fixed file newly fails its project's formatter check.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from migrator.engine import formatter as formatting
from migrator.engine.formatter import Formatter, detect_formatter, executable


def _drift(root: Path, relative: str, found: Formatter) -> Counter[str]:
    """The lines the formatter's check would remove or add in one file (its ``--diff``)."""
    program = executable(found.tool)
    assert program is not None
    command = [*program, *(["format"] if found.tool == "ruff" else ["-q"])]
    command += [*found.options, "--diff", relative]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    return Counter(
        line
        for line in done.stdout.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def check(project: Path, level_name: str, with_formatter: bool) -> tuple[int, list[str]]:
    """The number of fixed Python files the formatter checks, and those newly failing it."""
    from migrator.engine.runner import fix_tree
    from migrator.model import Applicability

    level = Applicability.UNSAFE if level_name == "unsafe" else Applicability.SAFE
    found = detect_formatter(project)
    assert found is not None
    with tempfile.TemporaryDirectory(prefix="formatter-check-") as directory:
        copy = Path(directory) / project.name
        shutil.copytree(project, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        detect = formatting.detect_formatter
        if not with_formatter:
            setattr(formatting, "detect_formatter", lambda root: None)  # noqa: B010
        try:
            run = fix_tree(copy, level=level, write=True, jobs=1)
        finally:
            formatting.detect_formatter = detect
        fixed = [
            outcome.relative
            for outcome in run.outcomes
            if outcome.written
            and outcome.relative.endswith(".py")
            and found.covers(outcome.relative)
        ]
        failing = []
        for relative in fixed:
            introduced = _drift(copy, relative, found) - _drift(project, relative, found)
            if introduced:
                failing.append(relative)
        return len(fixed), failing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("projects", nargs="*", help="project folder names (default: all)")
    parser.add_argument("--corpus", default="/work/corpus", help="folder holding the projects")
    parser.add_argument("--unsafe", action="store_true", help="also check --unsafe-fixes")
    parser.add_argument(
        "--without-formatter", action="store_true", help="fix without the formatter step"
    )
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    names = args.projects or sorted(p.name for p in corpus.iterdir() if p.is_dir())
    levels = ["safe", "unsafe"] if args.unsafe else ["safe"]
    print("| project | formatter (from) | level | fixed files it checks | newly failing |")
    print("|---|---|---|---|---|")
    failed = False
    for name in names:
        found = detect_formatter(corpus / name)
        if found is None:
            continue
        shown = f"{found.tool} ({found.source})"
        if found.tool not in formatting.RUNNABLE or executable(found.tool) is None:
            print(f"| {name} | {shown} | - | not checked: {found.tool} is not run here | - |")
            continue
        for level in levels:
            count, failing = check(corpus / name, level, not args.without_formatter)
            failed = failed or bool(failing)
            print(f"| {name} | {shown} | {level} | {count} | {', '.join(failing) or 0} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
