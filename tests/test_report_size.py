"""The Markdown report fits a pull-request comment on a large generated project: at most 60,000
characters, headline kept, folded details left out first, a note saying where the rest is."""

from __future__ import annotations

from pathlib import Path

from migrator.engine.registry import all_rules
from migrator.reporting import markdown
from migrator.reporting.cli import make_report


def _large_project(root: Path, copies: int) -> None:
    """Every flagged example of every rule, ``copies`` times, each in its own file."""
    examples = [(rule, example) for rule in all_rules() for example in rule.invalid]
    for copy in range(copies):
        for index, (rule, example) in enumerate(examples):
            name = Path(example.path)
            if name.suffix in (".py", ".ipynb", ".sh"):
                target = root / f"pkg{copy}" / f"{rule.code.lower()}_{index}{name.suffix}"
            else:  # Dockerfile, requirements.txt, pyproject.toml …: keep the name, own folder
                target = root / f"pkg{copy}" / f"case{index}" / example.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(example.code, encoding="utf-8")


def test_markdown_report_of_a_large_project_fits_a_comment(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    project = tmp_path / "big"
    _large_project(project, copies=2)
    report = make_report([str(project)])
    full = markdown.render(report, limit=10**9)
    fitted = markdown.render(report)
    assert len(full) > markdown.MAX_CHARACTERS  # the project is large enough to need cutting
    assert len(fitted) <= markdown.MAX_CHARACTERS
    headline = next(line for line in full.splitlines() if line.startswith("**Readiness score"))
    assert headline in fitted
    assert fitted.count("<details>") == fitted.count("</details>")
    assert fitted.count("```") % 2 == 0
    assert "Omitted to fit a comment" in fitted or "Cut to fit a comment" in fitted
    assert markdown.render(report, limit=len(full)) == full  # a report that fits is untouched
