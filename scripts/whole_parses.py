"""Count the files a cold scan parses whole, and the rules that force it: the deterministic
figure behind partial parsing (``docs/performance.md``, sixth round).

    python scripts/whole_parses.py TREE [TREE ...] [--list]

Runs ``migrate scan --no-cache --jobs 1`` on each tree in this process with a hook on the
engine's parse functions and prints, per tree: the files parsed, those parsed whole (and their
lines), those not parsed because they hold nothing the active rules read, the whole ones that
a ``parse_scope = "module"`` rule active by its text forced (by rule), and the lines libcst
parses (whole files plus the kept lines of partially parsed ones).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import migrator.engine.engine as engine  # noqa: E402
import migrator.engine.isolation as isolation  # noqa: E402
import migrator.engine.parse_plan as parse_plan  # noqa: E402
import migrator.engine.python_reports as python_reports  # noqa: E402
from migrator.engine.rule import PythonRule  # noqa: E402


def _hooks(records: list[dict[str, Any]]) -> None:
    reports, parse = python_reports._reports, python_reports._parse
    partial_source = getattr(parse_plan, "partial_source")  # noqa: B009 (imported, not exported)
    state: dict[str, Any] = {}

    def hooked_reports(text: str, path: str, rules: Any, **options: Any) -> Any:
        state.clear()
        result = reports(text, path, rules, **options)
        if result is not None and options.get("partial"):
            prefilter = options.get("prefilter", True)
            chosen = [
                rule
                for rule in parse_plan.active_rules(rules, text, prefilter)
                if issubclass(rule, PythonRule)
            ]
            records.append(
                {
                    "path": path,
                    "lines": text.count("\n"),
                    "whole": state.get("whole", False),
                    # a file holding nothing the active rules read is not parsed at all
                    "unread": result is getattr(python_reports, "_UNREAD"),  # noqa: B009
                    "kept": state.get("kept"),
                    "forcing": sorted(r.code for r in chosen if r.parsing.scope == "module"),
                }
            )
        return result

    def hooked_parse(text: str) -> Any:
        state["whole"] = True
        return parse(text)

    def hooked_partial_source(text: str, *args: Any, **options: Any) -> Any:
        source = partial_source(text, *args, **options)
        state["kept"] = source.kept_lines if source is not None else None
        return source

    for module in (engine, python_reports):  # each calls ``_reports`` by its own name
        setattr(module, "_reports", hooked_reports)  # noqa: B010 (a hook for this measurement)
    setattr(python_reports, "_parse", hooked_parse)  # noqa: B010
    setattr(parse_plan, "partial_source", hooked_partial_source)  # noqa: B010

    def in_process(self: Any, tasks: Any, progress: Any = None) -> list[Any]:
        return [self.function(task) for task in tasks]

    isolation.IsolatedRunner.run = in_process  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument(
        "--list", action="store_true", help="also print every parsed file, largest parse first"
    )
    arguments = parser.parse_args()
    records: list[dict[str, Any]] = []
    _hooks(records)
    from migrator.cli import cli

    for tree in arguments.trees:
        records.clear()
        with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
            cli.main(
                ["scan", "--no-cache", "--jobs", "1", "--format", "json", str(tree)],
                standalone_mode=False,
            )
        unread = [r for r in records if r["unread"]]
        records[:] = [r for r in records if not r["unread"]]
        whole = [r for r in records if r["whole"]]
        forced = [r for r in whole if r["forcing"]]
        kept = sum(r["kept"] for r in records if not r["whole"] and r["kept"] is not None)
        by_rule = collections.Counter(code for r in forced for code in r["forcing"])
        whole_lines = sum(r["lines"] for r in whole)
        print(
            f"{tree.name}: {len(records)} parsed, {len(whole)} whole ({whole_lines} lines); "
            f"{len(unread)} not parsed (nothing the rules read)"
        )
        print(f"  forced whole by a module-scope rule: {len(forced)}")
        for code, count in sorted(by_rule.items()):
            print(f"    {code}: {count}")
        print(f"  lines libcst parses: {whole_lines} whole + {kept} kept = {whole_lines + kept}")
        if arguments.list:
            for r in sorted(records, key=lambda r: -(r["lines"] if r["whole"] else r["kept"] or 0)):
                parsed = r["lines"] if r["whole"] else r["kept"]
                how = "whole" if r["whole"] else "partial"
                forcing = ",".join(r["forcing"])
                print(f"    {parsed:6} of {r['lines']:6} {how:7} {r['path']}  {forcing}")


if __name__ == "__main__":
    main()
