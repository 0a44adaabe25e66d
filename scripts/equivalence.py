"""Record, then compare, what `migrate` prints on fixed inputs: proof that a refactor changed no
behaviour (findings, fixes and readiness reports byte for byte).

    python scripts/equivalence.py record DIR [PROJECT ...]   # before the change
    python scripts/equivalence.py compare DIR [PROJECT ...]  # after it: exit 1 on any difference

The fixtures are always included; PROJECT adds real projects (scanned read-only, never fixed).
Each output is one file in DIR named after the command and input; `compare` prints a unified
diff of the first lines that differ for every output that changed.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(path for path in (ROOT / "fixtures").iterdir() if path.is_dir())
# Lines that change from run to run whatever the code does (timings, dates, versions).
_VOLATILE = re.compile(
    r'"(?:elapsed|duration|seconds|generated_at|generated|timestamp|date|time)[a-z_]*": [^,}\n]*'
)
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


def _migrate() -> list[str]:
    return [sys.executable, "-m", "migrator.cli"]


def _commands(projects: list[Path]) -> Iterator[tuple[str, list[str]]]:
    """(output name, migrate arguments) for every recorded output."""
    yield "rules.json", ["rules", "--format", "json"]
    for fixture in FIXTURES:
        name = fixture.name
        yield f"scan-{name}.json", ["scan", "--no-cache", "--format", "json", str(fixture)]
        yield f"fix-{name}.diff", ["fix", "--diff", "--unsafe-fixes", str(fixture)]
        yield f"report-{name}.json", ["report", "--no-cache", "--format", "json", str(fixture)]
        yield f"report-{name}.md", ["report", "--no-cache", "--format", "md", str(fixture)]
    for project in projects:
        name = project.name
        yield f"scan-{name}.json", ["scan", "--no-cache", "--format", "json", str(project)]
        yield f"report-{name}.json", ["report", "--no-cache", "--format", "json", str(project)]


def _run(arguments: list[str]) -> str:
    """Exit code, stdout (volatile fields blanked) of one `migrate` run, paths made relative."""
    environment = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    completed = subprocess.run(
        [*_migrate(), *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    text = _VOLATILE.sub(
        lambda match: match.group(0).split(":")[0] + ": <volatile>", completed.stdout
    )
    text = _TIMESTAMP.sub("<timestamp>", text).replace(str(ROOT), "<root>")
    return f"exit {completed.returncode}\n{text}"


def main() -> int:
    """Record or compare; 0 when every output matches."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["record", "compare"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("projects", nargs="*", type=Path)
    arguments = parser.parse_args()
    directory: Path = arguments.directory
    directory.mkdir(parents=True, exist_ok=True)
    differences = 0
    for name, command in _commands([path.resolve() for path in arguments.projects]):
        output = _run(command)
        recorded = directory / name
        if arguments.mode == "record":
            recorded.write_text(output, encoding="utf-8")
            print(f"recorded {name} ({len(output.splitlines())} lines)")
            continue
        if not recorded.exists():
            print(f"MISSING  {name}: no recorded baseline")
            differences += 1
            continue
        expected = recorded.read_text(encoding="utf-8")
        if expected == output:
            print(f"same     {name}")
            continue
        differences += 1
        print(f"DIFFERS  {name}")
        diff = difflib.unified_diff(
            expected.splitlines(), output.splitlines(), "baseline", "now", lineterm="", n=1
        )
        for line in list(diff)[:40]:
            print(f"    {line}")
    if arguments.mode == "compare":
        print(f"{differences} output(s) differ" if differences else "all outputs identical")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
