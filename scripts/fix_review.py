#!/usr/bin/env python3
"""Regenerate `migrate fix --diff` (safe and --unsafe-fixes) for reviewed projects and compare every
hunk with its recorded verdict; fail when a hunk has none, and print the right/debatable/wrong table.

The verdict files (tests/fix_review/<project>.toml) hold, per hunk, the file path, the rules, a
hash of the hunk, our added lines and a one-line verdict; never the project's own code.

    scripts/fix_review.py                       # corpus projects under /work/corpus, check + table
    scripts/fix_review.py --corpus DIR          # another corpus root
    scripts/fix_review.py --update              # add new hunks (verdict empty), drop stale ones
    scripts/fix_review.py --fixtures            # the bundled fixtures (what the pytest test runs)
    scripts/fix_review.py --set fresh5 --corpus /work/fresh5   # a set reviewed in its own folder
    scripts/fix_review.py --set fresh10 --corpus /work/fresh10 # the 2026-12-08 round

Three levels: `safe` (`fix --diff`), `unsafe` (`--unsafe-fixes`) and `hygiene`: the hunks that
appear only when hygiene rules are selected (`--unsafe-fixes --min-severity hygiene`; ROC520,
ROC150 rewrite deprecated aliases, which is not part of the default fix).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from migrator.files.tomlcompat import tomllib

ROOT = Path(__file__).resolve().parent.parent
REVIEW_DIR = ROOT / "tests" / "fix_review"
FIXTURE_DIR = ROOT / "fixtures"
VERDICTS = ("right", "debatable", "wrong")
LEVELS = ("safe", "unsafe", "hygiene")
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


@dataclass
class Hunk:
    """One hunk of one file's diff, with the rules whose fixes touched its lines."""

    path: str
    old_start: int
    old_len: int
    lines: list[str]
    occurrence: int = 0
    rules: set[str] = field(default_factory=set)
    levels: set[str] = field(default_factory=set)

    @property
    def added(self) -> list[str]:
        return [line[1:].rstrip("\n") for line in self.lines if line.startswith("+")]

    @property
    def digest(self) -> str:
        """Hash of the path and the changed lines (not line numbers, so unrelated edits keep it)."""
        changed = [line for line in self.lines if line[:1] in "+-"]
        body = f"{self.path}\n{self.occurrence}\n" + "".join(changed)
        return hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _diff_hunks(root: Path, relative: str, new_text: str) -> list[Hunk]:
    from migrator.commands.fix import unified_diff

    text = unified_diff(root, relative, new_text)
    hunks: list[Hunk] = []
    for line in text.splitlines(keepends=True):
        match = _HUNK_RE.match(line)
        if match:
            length = int(match.group(2)) if match.group(2) is not None else 1
            hunks.append(Hunk(relative, int(match.group(1)), length, []))
        elif hunks and not line.startswith(("--- ", "+++ ")):
            hunks[-1].lines.append(line)
    seen: Counter[str] = Counter()
    for hunk in hunks:  # identical edits in one file: the n-th one gets its own digest
        key = "".join(line for line in hunk.lines if line[:1] in "+-")
        hunk.occurrence = seen[key]
        seen[key] += 1
    return hunks


def project_hunks(root: Path) -> dict[str, Hunk]:
    """Every hunk of the safe and of the unsafe diff of ``root``, keyed by digest."""
    from migrator.engine.runner import fix_tree
    from migrator.model import Applicability, Severity

    out: dict[str, Hunk] = {}
    runs = (
        ("safe", Applicability.SAFE, None),
        ("unsafe", Applicability.UNSAFE, None),
        ("hygiene", Applicability.UNSAFE, Severity.HYGIENE),
    )
    for level_name, level, min_severity in runs:
        run = fix_tree(root, level=level, write=False, jobs=1, min_severity=min_severity)
        for outcome in run.outcomes:
            if outcome.new_text is None or outcome.error is not None:
                continue
            file_rules = {f.rule for f in outcome.fixed}
            for hunk in _diff_hunks(root, outcome.relative, outcome.new_text):
                if level_name == "hygiene" and hunk.digest in out:
                    continue  # also made without the hygiene selection: counted there
                hunk = out.setdefault(hunk.digest, hunk)
                hunk.levels.add(level_name)
                end = hunk.old_start + max(hunk.old_len, 1)
                hunk.rules.update(f.rule for f in outcome.fixed if hunk.old_start <= f.line < end)
                if not hunk.rules:  # an added import: the file's fixes put it there
                    hunk.rules.update(file_rules)
        for variant in run.variants:  # a new ROCm sibling: one hunk holding the whole file
            if variant.text is None:
                continue
            lines = [f"+{line}" for line in variant.text.splitlines(keepends=True)]
            new = Hunk(variant.relative, 0, 0, lines, rules={f"variant of {variant.original}"})
            if level_name == "hygiene" and new.digest in out:
                continue
            out.setdefault(new.digest, new).levels.add(level_name)
    return out


def load_verdicts(path: Path) -> dict[str, dict[str, object]]:
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {str(entry["hash"]): entry for entry in data.get("hunk", [])}


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def write_verdicts(
    path: Path, project: str, hunks: dict[str, Hunk], old: dict[str, dict[str, object]]
) -> None:
    """Write the verdict file: one table per hunk, sorted by path and line."""
    lines = [
        f"# Reviewed `migrate fix --diff [--unsafe-fixes]` hunks for {project}; regenerate with",
        "# scripts/fix_review.py --update, then give every empty verdict a value (right/debatable/wrong) and why.",
        "",
    ]
    for digest, hunk in sorted(hunks.items(), key=lambda item: (item[1].path, item[1].old_start)):
        previous = old.get(digest, {})
        lines.append("[[hunk]]")
        lines.append(f"path = {_toml_string(hunk.path)}")
        lines.append(f"line = {hunk.old_start}")
        lines.append(f"rules = [{', '.join(_toml_string(r) for r in sorted(hunk.rules))}]")
        lines.append(f"levels = [{', '.join(_toml_string(lv) for lv in sorted(hunk.levels))}]")
        lines.append(f"hash = {_toml_string(digest)}")
        lines.append("added = [")
        lines.extend(f"  {_toml_string(line)}," for line in hunk.added)
        lines.append("]")
        lines.append(f"verdict = {_toml_string(str(previous.get('verdict', '')))}")
        lines.append(f"why = {_toml_string(str(previous.get('why', '')))}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


@dataclass
class Review:
    """The outcome of comparing one project's hunks with its verdicts."""

    project: str
    counts: dict[str, Counter[str]]
    unreviewed: list[Hunk]
    stale: list[str]


def review(project: str, root: Path, verdict_file: Path, update: bool = False) -> Review:
    hunks = project_hunks(root)
    verdicts = load_verdicts(verdict_file)
    if update:
        write_verdicts(verdict_file, project, hunks, verdicts)
        verdicts = load_verdicts(verdict_file)
    counts: dict[str, Counter[str]] = {level: Counter() for level in LEVELS}
    unreviewed = []
    for digest, hunk in hunks.items():
        verdict = str(verdicts.get(digest, {}).get("verdict", ""))
        if verdict not in VERDICTS:
            unreviewed.append(hunk)
            continue
        for level in hunk.levels:
            counts[level][verdict] += 1
    stale = sorted(set(verdicts) - set(hunks))
    return Review(project, counts, unreviewed, stale)


def recorded(project: str, verdict_file: Path) -> Review:
    """The counts of a verdict file as stored (what the last review found)."""
    counts: dict[str, Counter[str]] = {level: Counter() for level in LEVELS}
    for entry in load_verdicts(verdict_file).values():
        levels = entry.get("levels", [])
        for level in levels if isinstance(levels, list) else []:
            counts[str(level)][str(entry.get("verdict", ""))] += 1
    return Review(project, counts, [], [])


def tsv(targets: list[tuple[str, Path, Path]]) -> str:
    """The recorded verdicts as one TSV (project, levels, path, line, rules, verdict, why)."""
    rows = ["project\tlevels\tpath\tline\trules\tverdict\twhy"]
    for project, _, verdict_file in targets:
        entries = sorted(
            load_verdicts(verdict_file).values(),
            key=lambda e: (str(e["path"]), int(str(e["line"]))),
        )
        for entry in entries:
            cells = [
                project,
                ",".join(str(level) for level in cast("list[object]", entry.get("levels", []))),
                str(entry["path"]),
                str(entry["line"]),
                ",".join(str(rule) for rule in cast("list[object]", entry.get("rules", []))),
                str(entry.get("verdict", "")),
                str(entry.get("why", "")).replace("\t", " "),
            ]
            rows.append("\t".join(cells))
    return "\n".join(rows) + "\n"


def table(reviews: list[Review]) -> str:
    """Markdown table: per project and in total, right/debatable/wrong for safe, unsafe and
    hygiene (selected) hunks; a project's safe diff is mergeable when none of its hunks is wrong."""
    rows = [
        "| project | safe: right | debatable | wrong | unsafe: right | debatable | wrong"
        " | unsafe % right | hygiene: right | debatable | wrong | safe diff mergeable |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    total = {level: Counter[str]() for level in LEVELS}

    def row(name: str, counts: dict[str, Counter[str]]) -> str:
        unsafe_total = sum(counts["unsafe"].values())
        share = f"{100 * counts['unsafe']['right'] / unsafe_total:.0f}%" if unsafe_total else "-"
        cells = [str(counts[level][v]) for level in ("safe", "unsafe") for v in VERDICTS]
        hygiene = [str(counts["hygiene"][v]) for v in VERDICTS]
        if not sum(counts["safe"].values()):
            mergeable = "no safe hunk"
        else:
            mergeable = "yes" if not counts["safe"]["wrong"] else "no"
        return f"| {name} | " + " | ".join([*cells, share, *hygiene, mergeable]) + " |"

    for item in reviews:
        rows.append(row(item.project, item.counts))
        for level in total:
            total[level].update(item.counts[level])
    rows.append(row("**total**", total))
    return "\n".join(rows)


def _targets(args: argparse.Namespace) -> list[tuple[str, Path, Path]]:
    review_dir = REVIEW_DIR / args.set if args.set else REVIEW_DIR
    if args.fixtures:
        base, prefix = FIXTURE_DIR, "fixture-"
    else:
        base, prefix = Path(args.corpus), ""
    out = []
    for verdict_file in sorted(review_dir.glob(f"{prefix}*.toml")):
        name = verdict_file.stem
        if not args.fixtures and name.startswith("fixture-"):
            continue
        project = name[len(prefix) :]
        if args.project and project not in args.project:
            continue
        out.append((project, base / project, verdict_file))
    for project in args.add or []:
        out.append((project, base / project, review_dir / f"{prefix}{project}.toml"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="/work/corpus", help="folder holding the projects")
    parser.add_argument("--fixtures", action="store_true", help="review the bundled fixtures")
    parser.add_argument(
        "--set", help="verdicts in tests/fix_review/SET/ (a set of projects reviewed together)"
    )
    parser.add_argument(
        "--update", action="store_true", help="rewrite verdict files (keeps verdicts)"
    )
    parser.add_argument("--add", action="append", help="start reviewing another project")
    parser.add_argument("--project", action="append", help="only these projects")
    parser.add_argument(
        "--recorded", action="store_true", help="tabulate the verdict files without running fix"
    )
    parser.add_argument("--tsv", action="store_true", help="with --recorded: the verdicts as TSV")
    args = parser.parse_args(argv)
    if args.recorded and args.tsv:
        print(tsv(_targets(args)), end="")
        return 0
    if args.recorded:
        print(table([recorded(project, file) for project, _, file in _targets(args)]))
        return 0
    reviews = []
    for project, root, verdict_file in _targets(args):
        if not root.is_dir():
            print(f"fix_review: {root} is not a folder; skipped", file=sys.stderr)
            continue
        reviews.append(review(project, root, verdict_file, update=args.update))
    print(table(reviews))
    failed = False
    for item in reviews:
        for hunk in item.unreviewed:
            failed = True
            print(
                f"UNREVIEWED {item.project}: {hunk.path}:{hunk.old_start} {sorted(hunk.rules)} {hunk.digest}"
            )
        for digest in item.stale:
            print(f"stale verdict {item.project}: {digest} (run --update)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
