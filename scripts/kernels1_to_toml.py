"""Convert the shared kernels1 labels (kernels1-sites.tsv, kernels1-judgement.md) into the TOML format of
tests/eval/kernels/, so that scripts/kernel_eval.py scores them like the other labelled projects.

    python scripts/kernels1_to_toml.py --labelled DIR_OF_THE_ORIGINAL_TSVS --corpus /work/kernels1 \
        --out tests/eval/kernels/kernels1

Only kernel sites are kept (rows in C, C++ and CUDA files): the rows on Python imports and build scripts are
judged through the project verdict, not by the kernel rules. Each site gets the fingerprint of its line in the
checkout at the labelled commit; a row whose line is missing is left out with a message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

KERNEL_SUFFIXES = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".hip"}
VERDICTS = {"blocker": "blocker", "small-edit": "small edit", "not-a-problem": "not a problem"}


def fingerprint(line: str) -> str:
    """The fingerprint kernel_eval.py checks: sha1 of the line without whitespace, 10 hex digits."""
    return hashlib.sha1(re.sub(r"\s+", "", line).encode()).hexdigest()[:10]


def project_verdicts(judgement: str) -> dict[str, tuple[str, str, str]]:
    """(repository, commit, verdict) per project from the '### N. owner/name @ commit — verdict' headings."""
    found: dict[str, tuple[str, str, str]] = {}
    for repo, commit, words in re.findall(
        r"^### \d+\. (\S+) @ ([0-9a-f]{40}) — (.+)$", judgement, re.M
    ):
        verdict = (
            "blocked"
            if words.startswith("blocked")
            else "ready"
            if words.startswith("ready")
            else "needs work"
        )
        found[repo.split("/")[-1]] = (repo, commit, verdict)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labelled", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    options = parser.parse_args()
    verdicts = project_verdicts((options.labelled / "kernels1-judgement.md").read_text())
    rows: dict[str, list[list[str]]] = {}
    for raw in (options.labelled / "kernels1-sites.tsv").read_text().splitlines()[1:]:
        cells = raw.split("\t")
        if len(cells) >= 6 and Path(cells[1]).suffix in KERNEL_SUFFIXES:
            rows.setdefault(cells[0], []).append(cells)
    options.out.mkdir(parents=True, exist_ok=True)
    for project, sites in sorted(rows.items()):
        repo, commit, verdict = verdicts[project]
        out = [
            "# Converted by scripts/kernels1_to_toml.py from kernels1-sites.tsv and kernels1-judgement.md",
            f"# ({repo}); kernel sites only, the verdict from the judgement's heading.",
            f"project = {json.dumps(project)}",
            f"commit = {json.dumps(commit)}",
            f"verdict = {json.dumps(verdict)}",
            f"reason = {json.dumps('see kernels1-judgement.md, ' + repo)}",
            "covered = []",
        ]
        for _, path, line, klass, verdict_word, note in (s[:6] for s in sites):
            source = options.corpus / project / path
            lines = source.read_text(errors="replace").splitlines() if source.is_file() else []
            if not line.isdigit() or int(line) > len(lines):
                print(f"{project}: {path}:{line} not in the checkout; left out", file=sys.stderr)
                continue
            out += [
                "",
                "[[sites]]",
                f"path = {json.dumps(path)}",
                f"line = {int(line)}",
                f"fp = {json.dumps(fingerprint(lines[int(line) - 1]))}",
                f"class = {json.dumps(klass)}",
                f"verdict = {json.dumps(VERDICTS.get(verdict_word, verdict_word))}",
                f"note = {json.dumps(note)}",
            ]
        (options.out / f"{project}.toml").write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
