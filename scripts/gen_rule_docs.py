"""Regenerate docs/rules/ from the rule catalog and copy docs/rocm-facts.md into the package
(``--check`` exits 1 when either is stale)."""

from __future__ import annotations

import sys
from pathlib import Path

from migrator.engine.registry import all_rules
from migrator.output.rule_docs import render_code_table, render_index, render_rule_page

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "rules"
#: The facts document is written in docs/ and shipped, byte for byte, as package data.
FACTS_DOC = ROOT / "docs" / "rocm-facts.md"
FACTS_DATA = ROOT / "migrator" / "data" / "rocm-facts.md"


def expected() -> dict[str, str]:
    rules = all_rules()
    pages = {f"{rule.code}.md": render_rule_page(rule) for rule in rules}
    pages["index.md"] = render_index(rules)
    pages["codes.md"] = render_code_table(rules)
    return pages


def main(argv: list[str]) -> int:
    if "--check" not in argv:
        FACTS_DATA.parent.mkdir(parents=True, exist_ok=True)
        FACTS_DATA.write_bytes(FACTS_DOC.read_bytes())
    pages = expected()
    if "--check" in argv:
        stale = [
            name
            for name, text in pages.items()
            if not (DOCS / name).is_file() or (DOCS / name).read_text() != text
        ]
        extra = [p.name for p in DOCS.glob("*.md") if p.name not in pages] if DOCS.is_dir() else []
        for name in stale + extra:
            print(f"stale: docs/rules/{name}")
        facts_stale = not FACTS_DATA.is_file() or FACTS_DATA.read_bytes() != FACTS_DOC.read_bytes()
        if facts_stale:
            print("stale: migrator/data/rocm-facts.md (a copy of docs/rocm-facts.md)")
        return 1 if stale or extra or facts_stale else 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for path in DOCS.glob("*.md"):
        if path.name not in pages:
            path.unlink()
    for name, text in pages.items():
        (DOCS / name).write_text(text)
    print(f"wrote {len(pages)} pages to {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
