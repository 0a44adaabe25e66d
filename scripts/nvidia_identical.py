#!/usr/bin/env python3
"""Check that `migrate fix --unsafe-fixes` leaves every NVIDIA-specific file byte-identical: run it
on a copy of each project and compare every file before and after.

NVIDIA-specific is the fix policy's own judgement (`migrator.engine.fix_policy`): a file whose path names
NVIDIA (`nvidia_specific_path`), a Python module importing an NVIDIA-only package
(`imports_nvidia_only_package`), and, in CI files, a job or step that exists for NVIDIA
(`ci_block_is_nvidia`, judged at each changed line). Prints one row per project (files changed,
siblings created, NVIDIA-specific files or CI blocks changed) and exits 1 when any of the latter.

    scripts/nvidia_identical.py                     # every project under /work/corpus
    scripts/nvidia_identical.py --corpus DIR a b    # projects a and b under DIR
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

from migrator.engine.fix_policy import (
    ci_block_is_nvidia,
    imports_nvidia_only_package,
    nvidia_specific_path,
)
from migrator.engine.runner import fix_tree
from migrator.files.discovery import file_kind
from migrator.model import Applicability


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _imported_modules(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _changed_offsets(old: str, new: str) -> list[int]:
    """Offsets in ``old`` of the lines the fix replaced or inserted before."""
    starts = [0]
    for line in old.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    offsets: list[int] = []
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            offsets.extend(starts[min(i, len(starts) - 1)] for i in range(i1, max(i2, i1 + 1)))
    return offsets


def nvidia_changes(relative: str, old: str, new: str) -> str | None:
    """Why this changed file counts as an NVIDIA-specific edit, or None."""
    kind = file_kind(relative) or "other"
    if nvidia_specific_path(relative, kind):
        return "path names NVIDIA"
    if kind in ("python", "notebook") and imports_nvidia_only_package(_imported_modules(old)):
        return "imports an NVIDIA-only package"
    if kind == "ci-yaml":
        hits = [offset for offset in _changed_offsets(old, new) if ci_block_is_nvidia(old, offset)]
        if hits:
            line = old.count("\n", 0, hits[0]) + 1
            return f"changes an NVIDIA CI job or step (line {line})"
    return None


def check(project: Path, scratch: Path) -> tuple[int, list[str], list[str]]:
    """(files changed, files created, NVIDIA-specific edits) of fix --unsafe-fixes on a copy."""
    copy = scratch / project.name
    shutil.copytree(project, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    before = _hashes(copy)
    texts = {
        rel: (copy / rel).read_text(encoding="utf-8", errors="surrogateescape") for rel in before
    }
    fix_tree(copy, level=Applicability.UNSAFE, write=True, jobs=1)
    after = _hashes(copy)
    changed = [rel for rel in before if after.get(rel) != before[rel]]
    created = sorted(set(after) - set(before))
    bad = []
    for rel in changed:
        new = (copy / rel).read_text(encoding="utf-8", errors="surrogateescape")
        why = nvidia_changes(rel, texts[rel], new)
        if why:
            bad.append(f"{rel}: {why}")
    for rel in created:  # a sibling must not be named for NVIDIA either
        if nvidia_specific_path(rel, file_kind(rel) or "other"):
            bad.append(f"{rel}: created with an NVIDIA name")
    shutil.rmtree(copy)
    return len(changed), created, bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    parser.add_argument("projects", nargs="*")
    args = parser.parse_args(argv)
    names = args.projects or sorted(p.name for p in args.corpus.iterdir() if p.is_dir())
    failures = 0
    print("| project | files changed | siblings created | NVIDIA-specific edits |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="nvidia-identical-") as scratch:
        for name in names:
            changed, created, bad = check(args.corpus / name, Path(scratch))
            failures += len(bad)
            print(f"| {name} | {changed} | {', '.join(created) or '-'} | {len(bad)} |", flush=True)
            for line in bad:
                print(f"  NVIDIA-specific edit: {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
