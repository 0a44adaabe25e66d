"""Discovers every concrete Rule under ``migrator.rules`` and checks that codes are unique."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from migrator.errors import ConfigError, RuleLoadError
from migrator.rule import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code."""
    package = importlib.import_module("migrator.rules")
    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda item: item.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"migrator.rules.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and not value.__dict__.get("abstract", False)
                and value.__module__ == module.__name__
            ):
                other = found.get(value.code)
                if other is not None and other is not value:
                    raise RuleLoadError(
                        f"rule code {value.code} is used by {other.__name__} and {value.__name__}"
                    )
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def categories() -> list[str]:
    return sorted({rule.category for rule in all_rules()})


def rule_by_code(code: str) -> type[Rule]:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    raise ConfigError(f"unknown rule {code!r}; `migrate rules` lists them")


def select_rules(select: list[str] | None, ignore: list[str] | None) -> tuple[type[Rule], ...]:
    """Rules chosen by codes, code prefixes (``ROC1``), names or category slugs."""
    rules = all_rules()
    known_categories = {rule.category for rule in rules}

    def matches(rule: type[Rule], selector: str) -> bool:
        selector = selector.strip()
        if selector.upper() == "ALL":
            return True
        if selector in known_categories:
            return rule.category == selector
        if selector.upper().startswith("ROC"):
            return rule.code.startswith(selector.upper())
        return rule.name == selector

    for selector in [*(select or []), *(ignore or [])]:
        if selector.strip().upper() == "ALL" or selector.strip() in known_categories:
            continue
        if not any(matches(rule, selector) for rule in rules):
            raise ConfigError(f"unknown rule, prefix or category {selector!r} in select/ignore")
    chosen = [rule for rule in rules if not select or any(matches(rule, s) for s in select)]
    if ignore:
        chosen = [rule for rule in chosen if not any(matches(rule, s) for s in ignore)]
    return tuple(chosen)
