"""The parts of a rule's declaration that most rules leave at their defaults, each one object:
what the engine reads for the rule (``Parsing``), what a finding means for readiness
(``Impact``) and how its fix is offered (``Fixing``). A subclass declares only the fields it
changes; ``Rule.__init_subclass__`` takes the rest from its base (``over``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from migrator.model import Applicability


@dataclass(frozen=True, slots=True)
class CallShape:
    """A call that a finding's statement holds (``Rule.statement_calls``): its callee, resolved
    through the file's imports, ends in one of ``names``, starts with one of ``prefixes``, or
    is an attribute named in ``attributes``; and, when ``keywords`` is given, it passes one of
    them."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    attributes: frozenset[str] = frozenset()
    keywords: frozenset[str] = frozenset()


_Part = TypeVar("_Part", "Parsing", "Impact", "Fixing")


def _over(own: _Part, base: _Part) -> _Part:
    """``own`` with every field it leaves at the default taken from ``base``: a subclass
    declares what it changes and inherits the rest."""
    inherited: dict[str, Any] = {}
    for part in fields(own):
        default = part.default_factory() if callable(part.default_factory) else part.default
        if getattr(own, part.name) == default:
            inherited[part.name] = getattr(base, part.name)
    return replace(own, **inherited)


@dataclass(frozen=True)
class Parsing:
    """What the engine reads for a rule, and when it runs it at all.

    - ``triggers``: strings of which at least one must occur in a file for the rule to run (the
      prefilter); ``kind_triggers`` overrides them per file kind (a dependency rule needs a
      package name in requirements files but ``setuptools`` in a Python file).
    - ``file_kinds``: the kinds of file the rule reads.
    - ``scope``: what of a Python file the rule must see (``migrator.engine.partial`` parses only
      that on a scan): ``statement`` (the statements holding its triggers and the uses of the
      names they import), ``definition`` (their whole top-level statements), ``names`` (also
      every use of any name they bind, transitively) or ``module`` (the whole file: for rules
      whose answer depends on what a file lacks).
    - ``function_words``: short names of functions whose whole enclosing top-level statement
      the rule reads on top of its scope (the function around a call).
    - ``scope_triggers``: strings whose statements the rule also reads without being triggers
      (``version.hip`` for a rule that stays silent where a file checks for a ROCm build).
    - ``requires`` (``kind_requires`` per kind): strings of which a text must also hold one.
    - ``requires_imports``: qualified names of which every finding resolves one through the
      file's imports; the rule does not run where the imports can resolve none.
    - ``silenced_by``: a pattern whose match anywhere in a text means the rule reports nothing.
    - ``statement_requires``: for a ``statement`` rule, strings of which the statement holding
      a finding also holds one, where a token starts, next to a trigger;
      ``unpaired_triggers``: triggers read as a plain ``statement`` rule's.
    - ``statement_calls``: for a ``statement`` rule that reports calls, the calls of which the
      statement holding a finding holds one.
    - ``sees_guarded``: the rule is about guards themselves; the engine does not hide its
      findings in guarded code.
    """

    triggers: tuple[str, ...] = ()
    file_kinds: frozenset[str] = frozenset({"python"})
    kind_triggers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    scope: str = "module"
    function_words: tuple[str, ...] = ()
    scope_triggers: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    kind_requires: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    requires_imports: tuple[str, ...] = ()
    silenced_by: re.Pattern[str] | None = None
    statement_requires: tuple[str, ...] = ()
    unpaired_triggers: tuple[str, ...] = ()
    statement_calls: tuple[CallShape, ...] = ()
    sees_guarded: bool = False

    def over(self, base: Parsing) -> Parsing:
        return _over(self, base)


@dataclass(frozen=True)
class Impact:
    """What a finding of the rule means for the readiness report.

    - ``consequence``: what a finding does on a ROCm build, one of ``model.CONSEQUENCES``
      (required; a finding below warning counts as ``hygiene`` whatever the rule declares).
    - ``effort_hours``: rough hours of manual work per finding when no automatic fix applies.
    - ``blocker``: the project cannot run on ROCm until someone acts by hand.
    - ``port``: the problem needs a port, not an edit (inline PTX, CUTLASS, a package with no
      ROCm build); in code every run loads it blocks the project.
    - ``unknown``: a finding says what the scan could not read; listed with the unknowns.
    - ``aggregate``: how many findings one problem yields (``none``, ``scope``, ``file``,
      ``project``); ``problem``: cross-rule key of a project-level problem (None: the code).
    - ``container_image``: a container rule's part in a Dockerfile's image (``base`` or
      ``part``), folded into the base image's finding.
    - ``dependency``: import name of the package whose CUDA-only build the rule reports (inside
      that package its own build provides it); ``rocm_release``: its first release with ROCm
      support (uses are no problem where the project's range admits it).
    - ``targets``: which GPU targets a finding matters on (``all`` or gfx ids).
    """

    consequence: str = ""
    effort_hours: float = 0.5
    blocker: bool = False
    port: bool = False
    unknown: bool = False
    aggregate: str = "none"
    problem: str | None = None
    container_image: str = ""
    dependency: str | None = None
    rocm_release: str | None = None
    targets: tuple[str, ...] = ("all",)

    def over(self, base: Impact) -> Impact:
        return _over(self, base)


@dataclass(frozen=True)
class Fixing:
    """How the rule's fixes are offered.

    - ``title``: what the fix does, in the fix list; ``applicability``: whether it applies
      with ``fix`` (safe), only with ``--unsafe-fixes``, or never.
    - ``requires``: minimum versions of the APIs the fix emits (package → version); a fix is
      withheld where the project supports an older version.
    - ``replaces_vendor``: the fix swaps an NVIDIA artefact for the AMD one (image, wheel
      index): never applied in place; the examples' ``fixed`` text is the ROCm variant's.
    """

    title: str | None = None
    applicability: Applicability = Applicability.NONE
    requires: Mapping[str, str] = field(default_factory=dict)
    replaces_vendor: bool = False

    def over(self, base: Fixing) -> Fixing:
        return _over(self, base)
