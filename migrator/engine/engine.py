"""Analyse one file: prefilter, parse once, run every selected rule in one traversal, resolve
positions, apply suppressions and, when asked, apply fixes and prove the result is stable.

Everything that can go wrong with one file ends as a ``FileResult`` with a one-line reason; the
engine never raises for a single bad file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import libcst as cst

from migrator.engine.context import ALONE, FileInputs, RawPythonFinding, RawTextFinding, TextContext
from migrator.engine.embedded import with_doc_commands, with_recipes
from migrator.engine.fix_policy import check_line_length, police_text
from migrator.engine.fixer import (
    FixError,
    apply_python_fixes,
    apply_text_edits,
    eligible,
    incomplete_groups,
)
from migrator.engine.image_folding import fold_image_parts
from migrator.engine.parse_plan import active_rules
from migrator.engine.python_reports import (
    _finding,
    _parse,
    _Parsed,
    _python_findings,
    _reports,
    _Unread,
)
from migrator.engine.rule import Rule, TextRule
from migrator.engine.suppress import SUPPRESSION_MARK, Suppressions
from migrator.engine.visual_indent import keep_visual_indent
from migrator.files.sources import FailFile, SkipFile, notebook_cells
from migrator.model import Applicability, Finding, Status
from migrator.reach.ci_guards import ci_line_guards
from migrator.reach.release_tooling import release_tooling
from migrator.reach.text_guards import TextGuards
from migrator.syntax.imports import ImportTable

if TYPE_CHECKING:
    from migrator.engine.formatter import Formatter

MAX_FIX_PASSES = 6


@dataclass(slots=True)
class Analysis:
    """Findings of one text (or notebook), and the fixed text when fixing was asked for."""

    findings: list[Finding] = field(default_factory=list)
    new_text: str | None = None
    fixed: list[Finding] = field(default_factory=list)
    fix_error: str | None = None
    unused_suppressions: list[tuple[int, str]] = field(default_factory=list)


def _fixable(
    raw: RawPythonFinding | RawTextFinding,
    finding: Finding,
    level: Applicability,
    inputs: FileInputs = ALONE,
) -> bool:
    """Fixes never touch code that does not run on ROCm (an NVIDIA-only branch stays as is),
    nor findings whose fix the run's selection does not apply (``FileInputs.chosen_fixes``)."""
    chosen = inputs.chosen_fixes
    return not finding.guard and eligible(raw, level) and (chosen is None or chosen(finding))


def _suppress(
    pairs: list[tuple[Any, Finding]], suppressions: Suppressions
) -> list[tuple[Any, Finding]]:
    return [
        (raw, finding)
        for raw, finding in pairs
        if not suppressions.suppresses(finding.line, finding.rule)
    ]


def analyze_python(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    imports: ImportTable | None = None,
    cell: int | None = None,
    whole_file: Sequence[str] = (),
    inputs: FileInputs = ALONE,
) -> Analysis:
    """Findings of a Python text; with ``fix`` (SAFE or UNSAFE) also the fixed text. A scan
    parses only the statements its rules can see (``migrator.engine.partial``); a fix the whole file.
    ``whole_file``: the other texts of the same file (a notebook's cells), whose
    ``ignore-file`` comments apply too."""
    suppressions = Suppressions.parse(text, whole_file)
    parsed = _reports(
        text,
        path,
        rules,
        prefilter=prefilter,
        imports=imports,
        partial=fix is None and cell is None,
        inputs=inputs,
    )
    if parsed is None:  # no rule can fire: every suppression comment is unused
        return Analysis(unused_suppressions=suppressions.unused())
    if isinstance(parsed, _Unread):
        return Analysis(unused_suppressions=suppressions.unused())
    pairs = _suppress(_python_findings(parsed, path, text, cell), suppressions)
    analysis = Analysis(
        findings=[finding for _, finding in pairs],
        unused_suppressions=suppressions.unused(),
    )
    if fix is None or not any(_fixable(raw, finding, fix, inputs) for raw, finding in pairs):
        parsed.context.release()
        return analysis
    try:
        new_text, fixed = _fix_python_loop(
            text, path, rules, fix, prefilter, imports, cell, whole_file, inputs
        )
        new_text = keep_visual_indent(text, keep_final_newline(text, new_text))
        new_text, limit = _formatted(text, new_text, path, cell, inputs.formatter)
        check_line_length(text, new_text, limit, inputs.facts)
    except FixError as error:
        analysis.fix_error = str(error)
        return analysis
    if new_text != text:
        analysis.new_text = new_text
        analysis.fixed = fixed
        after = analyze_python(
            new_text,
            path,
            rules,
            fix=None,
            prefilter=prefilter,
            imports=imports,
            cell=cell,
            whole_file=whole_file,
            inputs=inputs,
        )
        analysis.findings = after.findings
    return analysis


def _formatted(
    text: str, new_text: str, path: str, cell: int | None, formatter: Formatter | None
) -> tuple[str, int | None]:
    """The rewrite with the project's formatter (``migrator.engine.formatter``) applied to its
    changed lines where that formatter checks the file and is installed here (as it is
    otherwise), and the line length the formatter is run with, if any."""
    from migrator.engine.formatter import (
        RUNNABLE,
        FormatterFailed,
        executable,
        format_rewrite,
    )

    formatter = formatter if cell is None else None
    if formatter is None or not formatter.covers(path):
        return new_text, None
    if formatter.tool not in RUNNABLE or executable(formatter.tool) is None:
        return new_text, formatter.line_length
    try:
        return format_rewrite(text, new_text, path, formatter), formatter.line_length
    except FormatterFailed:
        return new_text, formatter.line_length


def _fix_python_loop(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    fix: Applicability,
    prefilter: bool,
    imports: ImportTable | None,
    cell: int | None,
    whole_file: Sequence[str] = (),
    inputs: FileInputs = ALONE,
) -> tuple[str, list[Finding]]:
    current = text
    fixed: list[Finding] = []
    for _ in range(MAX_FIX_PASSES):
        parsed = _reports(current, path, rules, prefilter=prefilter, imports=imports, inputs=inputs)
        if not isinstance(parsed, _Parsed):  # a fix parses whole files: never unread
            return current, fixed
        pairs = _suppress(
            _python_findings(parsed, path, current, cell),
            Suppressions.parse(current, whole_file),
        )
        chosen = [(raw, finding) for raw, finding in pairs if _fixable(raw, finding, fix, inputs)]
        partial = incomplete_groups(raw for raw, _ in chosen)
        chosen = [(raw, finding) for raw, finding in chosen if raw.together not in partial]
        if not chosen:
            return current, fixed
        new_text = apply_python_fixes(parsed.module, [raw for raw, _ in chosen], path)
        if new_text == current:
            return current, fixed
        fixed.extend(finding for _, finding in chosen)
        current = new_text
    raise FixError(f"fixes did not settle after {MAX_FIX_PASSES} passes; file left unchanged")


def keep_final_newline(original: str, new_text: str) -> str:
    """The fixed text with the original's own line ending at its end: libcst drops a final
    carriage return of a CR-only file, which is outside any edit."""
    if original.endswith("\r") and not new_text.endswith(("\r", "\n")):
        return new_text + "\r"
    return new_text


def analyze_text(
    text: str,
    path: str,
    kind: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    cell: int | None = None,
    line_map: Callable[[int], int] | None = None,
    whole_file: Sequence[str] = (),
    inputs: FileInputs = ALONE,
) -> Analysis:
    """Findings of a non-Python text file of ``kind``; with ``fix`` also the fixed text.
    ``whole_file``: as for ``analyze_python``."""
    chosen = [
        rule
        for rule in active_rules(rules, text, prefilter, kind)
        if issubclass(rule, TextRule) and kind in rule.parsing.file_kinds
    ]
    suppressions = Suppressions.parse(text, whole_file)
    if not chosen:  # no rule can fire: every suppression comment is unused
        return Analysis(unused_suppressions=suppressions.unused())
    context = TextContext(path=path, kind=kind, text=text, inputs=inputs)
    for rule in chosen:
        rule(context).check()
    police_text(context)
    lines = text.splitlines()
    line_guards = ci_line_guards(text) if kind == "ci-yaml" else {}
    pairs: list[tuple[RawTextFinding, Finding]] = []
    guards = TextGuards(text, kind, inputs.facts, path)
    release = release_tooling(path, text, kind)
    for raw in sorted(context.reports, key=lambda item: (item.start, item.rule.code)):
        start = context.position(raw.start)
        end = context.position(raw.end)
        guard = release or line_guards.get(start[0], "") or guards.guard_at(raw.start)
        finding = _finding(raw, path, start, end, lines, cell, guard)
        if line_map is not None:
            finding = _remap(finding, line_map)
        if not suppressions.suppresses(start[0], finding.rule):
            pairs.append((raw, finding))
    if kind == "dockerfile":  # a CUDA image's own lines are that image's problem
        pairs = fold_image_parts(pairs, text)
    analysis = Analysis(
        findings=[finding for _, finding in pairs], unused_suppressions=suppressions.unused()
    )
    if fix is None:
        context.release()
        return analysis
    chosen_raw = [raw for raw, finding in pairs if _fixable(raw, finding, fix, inputs)]
    if not chosen_raw:
        return analysis
    new_text = apply_text_edits(text, chosen_raw)
    if new_text == text:
        return analysis
    again = analyze_text(new_text, path, kind, rules, fix=fix, prefilter=prefilter, inputs=inputs)
    if again.new_text is not None and again.new_text != new_text:
        analysis.fix_error = "a second fix pass would change the file again; file left unchanged"
        return analysis
    analysis.new_text = new_text
    analysis.fixed = [finding for raw, finding in pairs if _fixable(raw, finding, fix, inputs)]
    analysis.findings = analyze_text(
        new_text, path, kind, rules, prefilter=prefilter, inputs=inputs
    ).findings
    return analysis


def _remap(finding: Finding, line_map: Callable[[int], int]) -> Finding:
    from dataclasses import replace

    return replace(finding, line=line_map(finding.line), end_line=line_map(finding.end_line))


def analyze_notebook(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    inputs: FileInputs = ALONE,
) -> Analysis:
    """Scan (and fix) each code cell; findings carry the cell index and the line in the cell."""
    document, cells = notebook_cells(text)
    tables: list[ImportTable] = []
    parsed: dict[int, cst.Module] = {}
    errors: list[str] = []
    for cell in cells:
        if not cell.source.strip():
            continue
        try:
            parsed[cell.index] = _parse(cell.source)
        except FailFile as error:
            errors.append(f"cell {cell.index}: {error}")
            continue
        tables.append(ImportTable.from_module(parsed[cell.index], inputs.exports))
    shared = ImportTable(inputs.exports)
    for table in tables:
        shared.bindings.update(table.bindings)
        shared.modules.update(table.modules)
    result = Analysis()
    new_sources: dict[int, str] = {}
    # an ``ignore-file`` comment in any cell holds for the whole notebook
    marked = [(cell.index, cell.source) for cell in cells if SUPPRESSION_MARK in cell.source]
    for cell in cells:
        others = [source for index, source in marked if index != cell.index]
        if cell.index in parsed:
            part = analyze_python(
                cell.source,
                path,
                rules,
                fix=fix,
                prefilter=prefilter,
                imports=shared,
                cell=cell.index,
                whole_file=others,
                inputs=inputs,
            )
            result.findings.extend(part.findings)
            result.fixed.extend(part.fixed)
            if part.fix_error:
                result.fix_error = f"cell {cell.index}: {part.fix_error}"
            if part.new_text is not None:
                new_sources[cell.index] = _restore_magics(part.new_text, cell.shell_lines)
        if cell.shell_lines:
            numbers = [number for number, _ in cell.shell_lines]
            shell_text = "\n".join(_strip_magic(line) for _, line in cell.shell_lines) + "\n"
            part = analyze_text(
                shell_text,
                path,
                "shell",
                rules,
                prefilter=prefilter,
                cell=cell.index,
                line_map=_line_mapper(numbers),
                whole_file=[cell.source, *others],
                inputs=inputs,
            )
            result.findings.extend(part.findings)
    if (
        errors
        and not result.findings
        and len(errors) == len([c for c in cells if c.source.strip()])
    ):
        raise FailFile("; ".join(errors))
    if new_sources and result.fix_error is None:
        result.new_text = _write_cells(text, document, new_sources)
    return result


def _line_mapper(numbers: list[int]) -> Callable[[int], int]:
    """Maps a line of the extracted shell text back to its line in the notebook cell."""

    def mapped(line: int) -> int:
        return numbers[min(line, len(numbers)) - 1]

    return mapped


def _strip_magic(line: str) -> str:
    stripped = line.lstrip()
    return stripped[1:] if stripped[:1] in "!%" else stripped


def _restore_magics(source: str, shell_lines: tuple[tuple[int, str], ...]) -> str:
    lines = source.split("\n")
    for number, original in shell_lines:
        if number - 1 < len(lines):
            lines[number - 1] = original
    return "\n".join(lines)


def _write_cells(text: str, document: dict[str, Any], new_sources: dict[int, str]) -> str:
    """The notebook with its cells' new sources, in the file's own layout where it can be read
    (``splice_sources``), else the whole document written again."""
    from migrator.files.notebook_text import splice_sources

    spliced = splice_sources(text, new_sources)
    if spliced is not None:
        return spliced
    for index, source in new_sources.items():
        cell = document["cells"][index]
        original = cell.get("source")
        if isinstance(original, list):
            cell["source"] = source.splitlines(keepends=True)
        else:
            cell["source"] = source
    match = re.search(r"\n( +)\"", text)
    indent = len(match.group(1)) if match else 1
    trailing = "\n" if text.endswith("\n") else ""
    return json.dumps(document, indent=indent, ensure_ascii=False) + trailing


def analyze(
    text: str,
    path: str,
    kind: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    inputs: FileInputs = ALONE,
) -> Analysis:
    """Dispatch on the file kind; raises SkipFile/FailFile with a one-line reason. ``inputs``:
    what the analysis reads of the project and the run (none for a file read on its own)."""
    if kind == "python":
        analysis = analyze_python(text, path, rules, fix=fix, prefilter=prefilter, inputs=inputs)
        return with_recipes(  # Dockerfiles and conda environments the code writes out
            analysis,
            analysis.new_text or text,
            lambda value, kind: analyze_text(
                value, path, kind, rules, prefilter=prefilter, inputs=inputs
            ),
        )
    if kind == "markdown":  # the shell commands documentation tells users to run
        return with_doc_commands(
            Analysis(),
            text,
            lambda value, kind: analyze_text(
                value, path, kind, rules, prefilter=prefilter, inputs=inputs
            ),
        )
    if kind == "notebook":
        return analyze_notebook(text, path, rules, fix=fix, prefilter=prefilter, inputs=inputs)
    if kind in _STRUCTURED:
        _validate_structure(text, kind)
    return analyze_text(text, path, kind, rules, fix=fix, prefilter=prefilter, inputs=inputs)


_STRUCTURED = {"pyproject", "compose", "conda", "ci-yaml", "cog"}


def _validate_structure(text: str, kind: str) -> None:
    """Reject malformed TOML/YAML with a one-line reason before text rules read it."""
    if kind == "pyproject":
        from migrator.files.tomlcompat import parse_toml, tomllib

        try:
            parse_toml(text)
        except tomllib.TOMLDecodeError as error:
            raise FailFile(f"invalid TOML: {error}") from None
        return
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)  # libyaml's loader, where PyYAML was built with it
    if fast is not None:
        try:
            list(yaml.load_all(text, Loader=fast))
            return
        except yaml.YAMLError:
            pass  # the pure-Python loader decides, and words the reason
        except RecursionError:
            raise FailFile("invalid YAML: nested too deep to read") from None
    try:
        list(yaml.safe_load_all(text))
    except RecursionError:  # PyYAML's composer recurses once per nesting level
        raise FailFile("invalid YAML: nested too deep to read") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise FailFile(f"invalid YAML{where}: {problem}") from None


__all__ = ["Analysis", "analyze", "SkipFile", "FailFile", "Status"]
