"""The engine's entry point: scan, fix and plan one root (or one file or buffer under it) the
same way for the CLI, verify, report, pr, the language server and the fleet. It reads the
project once (``project_model``), runs each file's analysis as a task (``work``) through the
cache, and settles what the user sees (``settle``); for ``fix``, it writes (``fix_outputs``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from migrator.engine.fix_outputs import _variants, write_outcomes
from migrator.engine.moot import MootFiles, _silenced
from migrator.engine.outcomes import FileOutcome, RootRun
from migrator.engine.project_model import (
    _declares_a_project,
    _project_model,
    _sources,
    _unread_context,
    _with_kernel_macros,
    kernel_texts,
    project_index,
)
from migrator.engine.selection import Selection
from migrator.engine.settle import mask_rule_codes, settle
from migrator.engine.work import _execute, _execute_released, _Task, _work_on_bytes
from migrator.files.cache import ResultCache
from migrator.files.config import Config, ConfigChoice, load_config
from migrator.files.discovery import SourceFile, file_kind, is_excluded
from migrator.files.sources import FailFile, SkipFile, content_key, read_regular, size_limit
from migrator.knowledge.supported_versions import project_facts
from migrator.model import Applicability, FileResult, Finding, ScanResult, Severity, Status


def scan(
    root: Path,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    use_cache: bool = True,
    prefilter: bool = True,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    only: Sequence[Path | SourceFile] | None = None,
    within: Path | None = None,
    show_guarded: bool = False,
    config_choice: ConfigChoice | None = None,
) -> RootRun:
    """Scan one root (or ``only`` the given files under it). The cache holds every rule's
    findings; selection, guards and aggregation apply afterwards (``show_guarded`` keeps
    findings in code that never runs on ROCm). ``jobs=0`` analyses in this process, for a caller
    that is a worker already; there, the files beyond ``only`` come from the cache or not at
    all (a file that crashes the parser would take the caller down with it).
    ``config_choice``: the configuration the command line chose (``--config``, ``--isolated``;
    None: the root's own)."""
    config = load_config(root, config_choice)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    sources, problems = _sources(root, selection, config, only, within)
    # The project is analysed whole (facts, import graph, guards, builds, folding of sites
    # across files; the other files mostly from the cache) whichever part of it is asked for,
    # so a file gives the same findings named alone, in its folder, from stdin or from an
    # editor's buffer as in a scan of the project.
    whole = (only or within) and _declares_a_project(root)
    model = _project_model(root, selection, config, sources) if whole else sources
    # the fix policy applies to scan too: a finding never advertises a fix `fix` would withhold
    texts = kernel_texts(model)
    facts = _with_kernel_macros(
        project_facts(root if root.is_dir() else root.parent), texts, root, model
    )
    facts_key = repr(facts).encode()
    cache = ResultCache(root) if use_cache else None
    # The cache holds every rule's findings so that a later scan with another selection can
    # reuse it; without the cache only the selected rules need to run.
    task_codes = None if use_cache else selection.codes(use_cache=False)
    # Rules whose every finding a project-level fact guards (a dependency the project is, or
    # declares at a ROCm-capable version) cannot change what a scan that hides guarded findings
    # shows: they are not run, and the cache keys say so.
    silenced = frozenset() if show_guarded else _silenced(model, facts, use_cache)
    silenced_key = f"~{','.join(sorted(silenced))}" if silenced else ""
    results: dict[str, FileResult] = {}
    tasks: list[_Task] = []
    keys: dict[str, str] = {}
    index = project_index(model)
    relatives = [source.relative for source in model]
    # files whose every finding settling guards (by path, or written on a CUDA-only toolkit)
    moot_files = MootFiles.find(relatives, index, root, texts)
    scope = {source.relative for source in sources}
    # a buffer (a file standing in for the project's own) is analysed but never cached
    buffers = {s.relative for s in sources if root.is_dir() and not s.path.is_relative_to(root)}
    for source in model:
        exports = index.slice_for(source.relative)
        moot = "" if show_guarded else moot_files.moot(source.relative)
        if cache is not None:
            try:
                data = read_regular(str(source.path), size_limit(source.kind))
            except (SkipFile, FailFile):
                data = None
            if data is not None:
                key = content_key(data + facts_key)  # findings depend on the declared versions
                if exports is not None:  # the file's findings depend on the modules it imports
                    key = f"{key}+{exports.fingerprint()}"
                key += silenced_key + (f"~moot:{moot}" if moot else "")
                keys[source.relative] = key
                cached = cache.get(source.relative, key, source.kind)
                if cached is not None:
                    results[source.relative] = cached
                    continue
        if jobs == 0 and source.relative not in scope:
            continue  # in this process: the rest of the project only as far as it is cached
        tasks.append(
            _Task(
                str(source.path),
                source.relative,
                source.kind,
                None,
                task_codes,
                prefilter,
                facts,
                exports=exports,
                silenced=silenced,
                moot=moot,
            )
        )
    if on_total:
        on_total(len(tasks))
    kinds = {task.relative: task.kind for task in tasks}
    for outcome in _execute_released(tasks, jobs, progress, config.file_timeout, index, model):
        results[outcome.relative] = outcome.result
        cacheable = outcome.relative not in buffers and outcome.result.status is not Status.FAILED
        if cache is not None and outcome.key and cacheable:
            key = keys.get(outcome.relative, outcome.key)
            cache.put(outcome.relative, key, kinds[outcome.relative], outcome.result)
    if cache is not None:
        cache.save(set(keys))
    ordered = [results[source.relative] for source in model if source.relative in results]
    files = settle(ordered, selection, relatives, show_guarded, facts, use_cache, index, moot_files)
    if model is not sources:  # part of the project analysed: its files are the answer
        files = [file for file in files if file.path in scope]
    files.extend(problems)
    files.extend(_unread_context(facts, files))
    return RootRun(root, ScanResult(str(root), files), config=config)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a scan of one root would use, found without analysing anything (``--show-files``,
    ``--show-settings``)."""

    config: Config
    selection: Selection
    sources: list[SourceFile]


def plan(
    root: Path,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    only: Sequence[Path] | None = None,
    within: Path | None = None,
    config_choice: ConfigChoice | None = None,
) -> Plan:
    """The configuration, the merged selection and the files ``scan`` would analyse for
    ``root`` with the same arguments (discovery and exclusions as a scan applies them)."""
    config = load_config(root, config_choice)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    sources, _ = _sources(root, selection, config, only, within)
    return Plan(config, selection, sources)


def scan_text(
    root: Path,
    relative: str,
    data: bytes,
    *,
    show_guarded: bool = False,
    use_cache: bool = True,
    isolated: bool = True,
    **chosen: Any,
) -> RootRun:
    """Scan ``data`` (stdin, an editor's buffer) as if it were the file ``relative`` under
    ``root``, through ``scan`` itself: the root's configuration, exclusions, project facts,
    guards and folding apply exactly as to that file in a scan of the project, so the editor,
    ``--stdin-filename`` and ``scan PATH`` give one answer. The bytes are written to a private
    temporary file that a worker reads like any other; the buffer's findings are never cached
    (they are not the file's). ``isolated=False``: analysed in this process, for a caller that
    is a worker already (the language server's), the rest of the project from the cache."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="migrate-buffer-") as directory:
        path = Path(directory) / "buffer"
        path.write_bytes(data)
        kind = file_kind(relative)
        only = [SourceFile(path, relative, kind)] if kind is not None else []
        return scan(
            root,
            **chosen,
            use_cache=use_cache,
            only=only,
            show_guarded=show_guarded,
            jobs=None if isolated else 0,
        )


def fix_tree(
    root: Path,
    *,
    level: Applicability = Applicability.SAFE,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    write: bool = True,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    family: str | None = None,
    with_variants: bool = True,
    config_choice: ConfigChoice | None = None,
) -> RootRun:
    """Compute (and with ``write``, apply atomically under the write policy of
    ``migrator.files.writer``) the fixes for one root; a file that may not be written keeps its text
    and its outcome says why. ``family``: only the rules of that category among those the
    selection chooses, the others' fixes as the selection has them (``pr``'s commit of one
    family: the category restricts, it does not name a hygiene rule). ``with_variants``: plan
    (and write) the ROCm siblings ``--unsafe-fixes`` adds (``pr`` commits them on their own)."""
    config = load_config(root, config_choice)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    codes = selection.codes()
    if family is not None:
        from migrator.engine.registry import catalog_entries

        codes &= frozenset(code for code, _, category in catalog_entries() if category == family)
    sources, problems = _sources(root, selection, config)
    texts = kernel_texts(sources)
    facts = _with_kernel_macros(
        project_facts(root if root.is_dir() else root.parent), texts, root, sources
    )
    from migrator.engine.registry import all_rules

    # the uses of a dependency the project is, or declares at a ROCm-capable version, are left
    # as they are
    codes = codes - _silenced(sources, facts, use_cache=True)
    index = project_index(sources)
    relatives = [source.relative for source in sources]
    # nor are files that never run on ROCm (an NVIDIA variant next to its AMD twin, a module
    # written on a CUDA-only toolkit); settling reads the same answers
    moot_files = MootFiles.find(relatives, index, root, texts)
    guarded_files = moot_files.guarded
    from migrator.files.paths import is_test_path
    from migrator.reach.project import resolves_device_masks

    # a test's CUDA_VISIBLE_DEVICES is input of the project's own mask resolver: no HIP copy
    mask_rules = mask_rule_codes() if resolves_device_masks(index.sources) else frozenset()
    from migrator.engine.formatter import detect_formatter

    formatter = detect_formatter(root if root.is_dir() else root.parent)
    tasks = [
        _Task(
            str(s.path),
            s.relative,
            s.kind,
            None if moot_files.moot(s.relative) else level,
            codes - mask_rules if codes is not None and is_test_path(s.relative) else codes,
            True,
            facts,
            index.slice_for(s.relative),
            formatter=formatter,
            selection=selection,
        )
        for s in sources
    ]
    if on_total:
        on_total(len(tasks))
    outcomes = _execute(tasks, jobs, progress, config.file_timeout)
    files = settle(
        [outcome.result for outcome in outcomes],
        selection,
        relatives,
        facts=facts,
        index=index,
        moot_files=moot_files,
    )
    variants = []
    if level is Applicability.UNSAFE and with_variants:
        rules = tuple(rule for rule in all_rules() if rule.code in codes)
        variants = _variants(root, sources, outcomes, guarded_files, rules, facts)
        from migrator.engine.variant_scope import runs_nothing_on_rocm, withhold_all

        withhold_all(variants, runs_nothing_on_rocm(root, index, moot_files.cuda_only))
    if write:
        write_outcomes(root, outcomes)
        from migrator.engine.variants import write_variants

        write_variants(root, variants)
    files.extend(problems)
    files.extend(_unread_context(facts, files))
    run = RootRun(
        root,
        ScanResult(str(root), files),
        outcomes=outcomes,
        config=config,
        variants=variants,
        formatter=formatter,
    )
    return run


def fix_text(
    root: Path,
    relative: str,
    data: bytes,
    level: Applicability,
    config_choice: ConfigChoice | None = None,
) -> tuple[str | None, tuple[Finding, ...]]:
    """The fixed text of ``data`` as the file ``relative`` under ``root`` (an editor's unsaved
    buffer), and the findings the fixes resolve; None when nothing changes. The root's
    configuration and project facts apply as in ``fix``; which files never run on ROCm (a
    project-wide question) is not asked here."""

    config = load_config(root, config_choice)
    selection = Selection.merge(config, root=root)
    kind = file_kind(relative)
    if kind is None or is_excluded(relative, selection.exclude):
        return None, ()
    facts = project_facts(root if root.is_dir() else root.parent)
    from migrator.engine.formatter import detect_formatter

    formatter = detect_formatter(root if root.is_dir() else root.parent)
    outcome = _work_on_bytes(
        data, relative, kind, level, selection.codes(), facts, formatter, selection
    )
    if outcome.new_text is None or not outcome.fixed:
        return None, ()
    return outcome.new_text, tuple(outcome.fixed)


__all__ = [
    "FileOutcome",
    "Plan",
    "RootRun",
    "Selection",
    "fix_text",
    "fix_tree",
    "plan",
    "scan",
    "scan_text",
    "settle",
    "write_outcomes",
]
