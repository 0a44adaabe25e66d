"""Try `migrate` on real repositories as a new user would: scan, then `fix --unsafe-fixes` on a
copy, check every rewritten Python file compiles and that a second fix run changes nothing.

Usage: python scripts/corpus_check.py REPO_DIR... [--keep DIR]

Never writes into the given repositories (it works on copies in a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIGRATE = [sys.executable, "-m", "migrator.cli"]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MIGRATE, *args], capture_output=True, text=True)


def check(repo: Path, scratch: Path) -> dict[str, object]:
    started = time.perf_counter()
    scan = _run(["scan", "--no-cache", "--format", "json", str(repo)])
    scan_seconds = time.perf_counter() - started
    report = json.loads(scan.stdout) if scan.returncode in (0, 1) else {}
    work = scratch / repo.name
    shutil.copytree(repo, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file() and not p.is_symlink()}
    fix = _run(["fix", "--unsafe-fixes", str(work)])
    changed = [p for p, data in before.items() if p.exists() and p.read_bytes() != data]
    not_compiling = []
    for path in changed:
        if path.suffix == ".py":
            try:
                compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
            except (SyntaxError, ValueError) as error:
                not_compiling.append(f"{path.relative_to(work)}: {error}")
    second = _run(["fix", "--unsafe-fixes", "--diff", str(work)])
    return {
        "repo": repo.name,
        "scan_exit": scan.returncode,
        "scan_seconds": round(scan_seconds, 2),
        "traceback": "Traceback" in scan.stderr + fix.stderr + second.stderr,
        "findings": len(report.get("findings", [])),
        "failed_files": len(report.get("files", {}).get("failed", [])),
        "fix_exit": fix.returncode,
        "files_changed": len(changed),
        "not_compiling": not_compiling,
        "not_fixed": [line for line in fix.stderr.splitlines() if line.startswith("not fixed")],
        "second_run_changes": second.stdout.count("+++ b/"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as scratch:
        for repo in args.repos:
            result = check(repo.resolve(), Path(scratch))
            print(json.dumps(result))
            ok &= (
                not result["traceback"]
                and not result["not_compiling"]
                and not result["second_run_changes"]
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
