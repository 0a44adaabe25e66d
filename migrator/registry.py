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
    codes = select_codes(catalog_entries(), select, ignore)
    return tuple(rule for rule in all_rules() if rule.code in codes)


CatalogEntry = tuple[str, str, str]  # code, name, category


def catalog_entries() -> list[CatalogEntry]:
    """(code, name, category) of every rule, from a small file cached per catalog version so
    that a warm scan never imports the rules (and libcst)."""
    import json

    from migrator.cache import cache_dir, catalog_fingerprint

    path = cache_dir() / f"catalog-{catalog_fingerprint()}.json"
    try:
        return [(str(a), str(b), str(c)) for a, b, c in json.loads(path.read_text())]
    except (OSError, ValueError):
        pass
    entries = [(rule.code, rule.name, rule.category) for rule in all_rules()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{id(entries)}.tmp")
        temporary.write_text(json.dumps(entries))
        temporary.replace(path)
    except OSError:
        pass
    return entries


def select_codes(
    entries: list[CatalogEntry], select: list[str] | None, ignore: list[str] | None
) -> frozenset[str]:
    """Codes chosen by codes, code prefixes, names, categories or ``ALL``; unknown selectors
    are a ConfigError so that a typo never silently selects nothing."""
    known_categories = {category for _, _, category in entries}

    def matches(entry: CatalogEntry, selector: str) -> bool:
        code, name, category = entry
        selector = selector.strip()
        if selector.upper() == "ALL":
            return True
        if selector in known_categories:
            return category == selector
        if selector.upper().startswith("ROC"):
            return code.startswith(selector.upper())
        return name == selector

    for selector in [*(select or []), *(ignore or [])]:
        if not any(matches(entry, selector) for entry in entries):
            raise ConfigError(f"unknown rule, prefix or category {selector!r} in select/ignore")
    chosen = [entry for entry in entries if not select or any(matches(entry, s) for s in select)]
    if ignore:
        chosen = [entry for entry in chosen if not any(matches(entry, s) for s in ignore)]
    return frozenset(code for code, _, _ in chosen)
