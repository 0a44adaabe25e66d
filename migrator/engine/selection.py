"""Which rules and findings a run counts: ``[tool.migrate]`` merged with the command line
(select, ignore, exclude, per-file ignores, minimum severity, preview), and which fixes it applies.
One object, so scan, fix, the language server and the fleet choose alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from migrator.files.config import Config
from migrator.files.paths import glob_matches, rebase_glob
from migrator.model import Finding, Severity


def _config_prefix(config: Config, root: Path | None) -> str:
    """Where ``root`` sits below the folder the configuration's globs are written from (its
    file's: ``pkg`` for a scan of ``pkg/`` configured by ``./pyproject.toml``; the current
    directory's for ``--config FILE``), "" when it is that folder."""
    base = config.globs_from or (str(Path(config.source).parent) if config.source else None)
    if root is None or base is None:
        return ""
    folder = root if root.is_dir() else root.parent
    try:
        relative = folder.resolve().relative_to(Path(base).resolve())
    except (OSError, ValueError):
        return ""
    return "" if relative == Path(".") else relative.as_posix()


@dataclass(frozen=True, slots=True)
class Selection:
    """Which rules and findings count: merged from ``[tool.migrate]`` and the command line."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min_severity: Severity = Severity.INFO
    #: Rules in preview are chosen too (``--preview``).
    preview: bool = False
    #: Chosen on top of ``select`` (``--extend-select``): named, so hygiene rules among them show.
    extend_select: tuple[str, ...] = ()

    @classmethod
    def merge(
        cls,
        config: Config,
        *,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        min_severity: Severity | None = None,
        preview: bool | None = None,
        root: Path | None = None,
        extend_select: Sequence[str] = (),
        extend_ignore: Sequence[str] = (),
    ) -> Selection:
        """The command line's choices over the configuration's. The configuration's globs are
        written from its own folder; for a ``root`` below it they are rebased onto ``root``."""
        prefix = _config_prefix(config, root)
        rebased = (rebase_glob(pattern, prefix) for pattern in config.exclude)
        per_file = (
            (rebase_glob(pattern, prefix), codes)
            for pattern, codes in config.per_file_ignores.items()
        )
        return cls(
            select=tuple(select) if select else config.select,
            ignore=(*(tuple(ignore) if ignore else config.ignore), *extend_ignore),
            exclude=(*(pattern for pattern in rebased if pattern is not None), *exclude),
            per_file_ignores=tuple(
                (pattern, codes) for pattern, codes in per_file if pattern is not None
            ),
            min_severity=min_severity if min_severity is not None else config.min_severity,
            preview=preview if preview is not None else config.preview,
            extend_select=tuple(extend_select),
        )

    def _named(self, finding: Finding) -> bool:
        """Hygiene is off by default, but a rule selected by its code, name or category shows,
        and ``--select ALL`` means every rule, hygiene included."""
        return (
            finding.severity is Severity.HYGIENE
            and self.min_severity is Severity.INFO
            and any(
                selector in {finding.rule, finding.name, finding.category, "ALL"}
                for selector in (*self.select, *self.extend_select)
            )
        )

    def fixes(self, finding: Finding) -> bool:
        """Whether ``fix`` applies this finding's fix (and ``pr``, the language server's fix-all
        and the reports count it as fixable): a hygiene rewrite (a deprecated alias, which
        changes nothing on ROCm) is no migration, so it runs only where this selection shows
        hygiene findings (the rule named, ``--select ALL``, ``--min-severity hygiene``); every
        other finding's fix as its rule offers it."""
        return (
            finding.severity is not Severity.HYGIENE
            or self.min_severity is Severity.HYGIENE
            or self._named(finding)
        )

    def offered(self, finding: Finding) -> Finding:
        """``finding`` as shown: without its fix where ``fixes`` says ``fix`` leaves it."""
        return finding if finding.fix is None or self.fixes(finding) else replace(finding, fix=None)

    def codes(self, use_cache: bool = True) -> frozenset[str]:
        from migrator.engine.registry import catalog_entries, preview_codes, select_codes

        entries = catalog_entries(use_cache)
        preview = frozenset() if self.preview else preview_codes(use_cache)
        chosen = select_codes(entries, list(self.select), list(self.ignore), preview=preview)
        if self.extend_select:
            chosen |= select_codes(
                entries, list(self.extend_select), list(self.ignore), preview=preview
            )
        return chosen

    def keep(self, finding: Finding, codes: frozenset[str]) -> bool:
        if finding.rule not in codes:
            return False
        if finding.severity < self.min_severity and not self._named(finding):
            return False
        for pattern, ignored in self.per_file_ignores:
            if glob_matches(finding.path, pattern) and (
                finding.rule in ignored
                or finding.category in ignored
                or any(finding.rule.startswith(code) for code in ignored)
            ):
                return False
        return True
