"""Before a Python file is parsed: which selected rules can report in it (their triggers present,
read from the text and the import table) and which of its statements they can see, so only
those are parsed (``migrator.engine.partial``); ``MIGRATE_PARSE`` forces whole or partial."""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Iterable, Sequence

import libcst as cst

from migrator.engine.partial import WORTHWHILE, PartialSource, partial_source
from migrator.engine.rule import Rule
from migrator.engine.triggers import TriggerSearch
from migrator.files.sources import check_nesting
from migrator.syntax.parse import parse_module
from migrator.syntax.reexports import ExportSlice

#: Set to "whole" (``migrate scan --whole-parse``) to parse every file whole: the reference the
#: partial parse is proven against; "partial" parses partially however little that leaves out.
PARSE_MODE_VARIABLE = "MIGRATE_PARSE"


def active_rules(
    rules: Iterable[type[Rule]], text: str, prefilter: bool, kind: str = "python"
) -> list[type[Rule]]:
    """Rules that can fire on ``text``: those with a trigger string in it (all, without prefilter)."""
    if not prefilter:
        return list(rules)
    rules = tuple(rules)
    present = _trigger_search(rules, kind).present(text)
    return [
        rule
        for rule in rules
        if not present.isdisjoint(table_for(rule, kind))
        and (
            not (required := requires_for(rule, kind)) or any(needed in text for needed in required)
        )
        and (
            not rule.parsing.statement_requires
            or any(needed in text for needed in rule.parsing.statement_requires)
        )
        and (rule.parsing.silenced_by is None or not rule.parsing.silenced_by.search(text))
    ]


@functools.lru_cache(maxsize=64)
def _trigger_search(rules: tuple[type[Rule], ...], kind: str) -> TriggerSearch:
    """Every distinct trigger of ``rules`` for ``kind``, searched for at most once per file."""
    return TriggerSearch.build(trigger for rule in rules for trigger in table_for(rule, kind))


def table_for(rule: type[Rule], kind: str) -> tuple[str, ...]:
    return rule.parsing.kind_triggers.get(kind, rule.parsing.triggers)


def requires_for(rule: type[Rule], kind: str) -> tuple[str, ...]:
    """What a text of ``kind`` must also hold for ``rule`` to be active (``Rule.requires``)."""
    return rule.parsing.kind_requires.get(kind, rule.parsing.requires)


def _partial_allowed(chosen: Sequence[type[Rule]]) -> bool:
    """Partial parsing unless switched off (``--whole-parse``) or a rule reads the whole module."""
    if os.environ.get(PARSE_MODE_VARIABLE) == "whole":
        return False
    return not any(rule.parsing.scope == "module" for rule in chosen)


def partial_for(
    chosen: Sequence[type[Rule]],
    text: str,
    exports: ExportSlice | None = None,
    worthwhile: float = WORTHWHILE,
    tree: ast.Module | None = None,
) -> PartialSource | None:
    """What ``migrator.engine.partial`` keeps of ``text`` for the active rules ``chosen``, by their
    ``parse_scope``, triggers, scope triggers, function words, statement requirements and calls
    (``tree``: ``text``'s ``ast``, see ``partial_source``)."""
    return partial_source(
        text,
        _present_triggers(chosen, text, "statement"),
        _present_triggers(chosen, text, "definition"),
        _present_triggers(chosen, text, "names"),
        exports,
        worthwhile=worthwhile,
        function_words={
            word for rule in chosen for word in rule.parsing.function_words if word in text
        },
        paired=[
            (
                _present(
                    (
                        t
                        for t in table_for(rule, "python")
                        if t not in rule.parsing.unpaired_triggers
                    ),
                    text,
                ),
                rule.parsing.statement_requires,
            )
            for rule in chosen
            if rule.parsing.scope == "statement" and rule.parsing.statement_requires
        ],
        tree=tree,
        shaped=[
            (_present(table_for(rule, "python"), text), rule.parsing.statement_calls)
            for rule in chosen
            if rule.parsing.scope == "statement" and rule.parsing.statement_calls
        ],
    )


def _present_triggers(chosen: Sequence[type[Rule]], text: str, scope: str) -> set[str]:
    """Triggers (and scope triggers) in ``text`` that the rules whose ``parse_scope`` is
    ``scope`` read by that scope alone (``_plain_triggers``)."""
    return {
        trigger
        for rule in chosen
        if rule.parsing.scope == scope
        for trigger in (*_plain_triggers(rule), *rule.parsing.scope_triggers)
        if trigger in text
    }


def _plain_triggers(rule: type[Rule]) -> tuple[str, ...]:
    """The triggers read by ``parse_scope`` alone: all of them but for a rule with
    ``statement_requires`` (its unpaired ones: ``paired`` reads the others) or
    ``statement_calls`` (none: ``shaped`` reads them)."""
    if rule.parsing.statement_requires:
        return rule.parsing.unpaired_triggers
    if rule.parsing.statement_calls:
        return ()
    return table_for(rule, "python")


def _present(strings: Iterable[str], text: str) -> list[str]:
    return [string for string in strings if string in text]


def _parse_partial(text: str, blanked: str) -> cst.Module | None:
    """The blanked text's module (None when libcst rejects it: the whole file is parsed then,
    so its own error, if any, is the one reported)."""
    check_nesting(text)
    try:
        return parse_module(blanked)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
