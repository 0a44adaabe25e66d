"""Discovers every concrete Rule under ``migrator.rules`` (its modules and the modules of its
family packages; modules named ``_*`` hold shared code, never rules) and checks that codes are
unique and lie in the range of the rule's category in the code table (``rules/codes.toml``)."""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from migrator.engine.rule import Rule
from migrator.errors import ConfigError, RuleLoadError
from migrator.files.tomlcompat import tomllib


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code."""
    package = importlib.import_module("migrator.rules")
    found: dict[str, type[Rule]] = {}
    for info in sorted(
        pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."),
        key=lambda item: item.name,
    ):
        if any(part.startswith("_") for part in info.name.split(".")[2:]):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and not value.__dict__.get("_abstract", True)
                and value.__module__ == module.__name__
            ):
                other = found.get(value.code)
                if other is not None and other is not value:
                    raise RuleLoadError(
                        f"rule code {value.code} is used by {other.__name__} and {value.__name__}"
                    )
                found[value.code] = value
    problems = code_table_problems(
        [(rule.code, rule.category) for rule in found.values()], code_table()
    )
    if problems:
        raise RuleLoadError(f"{problems[0]} (rules/codes.toml)")
    return tuple(found[code] for code in sorted(found))


@dataclass(frozen=True, slots=True)
class CodeRange:
    """A span of rule codes, ``first``..``last`` inclusive, given to one family or category."""

    name: str
    first: int
    last: int
    title: str = ""

    def __contains__(self, code: str) -> bool:
        number = _code_number(code)
        return number is not None and self.first <= number <= self.last

    @property
    def codes(self) -> str:
        return f"ROC{self.first:03d}-ROC{self.last:03d}"


@dataclass(frozen=True, slots=True)
class CodeTable:
    """The code table: families (blocks of codes), category ranges, retired codes."""

    families: tuple[CodeRange, ...]
    ranges: tuple[CodeRange, ...]
    retired: dict[str, str]

    def family_of(self, code: str) -> CodeRange | None:
        return next((family for family in self.families if code in family), None)

    def range_of(self, code: str) -> CodeRange | None:
        return next((span for span in self.ranges if code in span), None)


_CODE = re.compile(r"^ROC(\d{3})$")
_SPAN = re.compile(r"^ROC(\d{3})-ROC(\d{3})$")


def _code_number(code: str) -> int | None:
    match = _CODE.match(code)
    return int(match.group(1)) if match else None


def _span(entry: dict[str, Any], key: str) -> CodeRange:
    match = _SPAN.match(str(entry.get("codes", "")))
    if not match:
        raise RuleLoadError(f'code table: {entry!r} needs codes = "ROCnnn-ROCnnn"')
    first, last = int(match.group(1)), int(match.group(2))
    return CodeRange(str(entry.get(key, "")), first, last, str(entry.get("title", "")))


def parse_code_table(text: str) -> CodeTable:
    """The code table in ``text`` (the format of ``rules/codes.toml``)."""
    return _code_table(tomllib.loads(text))


def _code_table(data: dict[str, Any]) -> CodeTable:
    return CodeTable(
        families=tuple(_span(entry, "name") for entry in data.get("family", [])),
        ranges=tuple(_span(entry, "category") for entry in data.get("range", [])),
        retired={str(code): str(reason) for code, reason in data.get("retired", {}).items()},
    )


@functools.cache
def code_table() -> CodeTable:
    """The product's code table, ``rules/codes.toml``."""
    from migrator.knowledge.tables import load_catalog_toml

    return _code_table(load_catalog_toml("codes.toml"))


def code_table_problems(rules: Iterable[tuple[str, str]], table: CodeTable) -> list[str]:
    """What is wrong with (code, category) pairs and the table itself: overlapping ranges, a
    range outside every family, a code outside every range or in another category's range, a
    retired code in use."""
    problems: list[str] = []
    spans = sorted(table.ranges, key=lambda span: span.first)
    for before, after in zip(spans, spans[1:], strict=False):
        if after.first <= before.last:
            problems.append(f"ranges {before.codes} and {after.codes} overlap")
    for span in spans:
        family = table.family_of(span.codes[:6])
        if family is None or span.last > family.last or span.first > span.last:
            problems.append(f"range {span.codes} ({span.name}) is not inside one family")
    for code, category in sorted(rules):
        if code in table.retired:
            problems.append(f"rule code {code} is retired ({table.retired[code]}); take a new one")
            continue
        found = table.range_of(code)
        if found is None:
            problems.append(f"rule code {code} ({category}) is in no range of the code table")
        elif found.name != category:
            problems.append(
                f"rule code {code} is in the {found.name} range {found.codes}, "
                f"but the rule's category is {category}"
            )
    return problems


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


def catalog_entries(use_cache: bool = True) -> list[CatalogEntry]:
    """(code, name, category) of every rule, from a small file cached per catalog version so
    that a warm scan never imports the rules (and libcst). A cached list that does not check out
    is rebuilt; without ``use_cache`` nothing is read from (or written to) the cache."""

    def build() -> list[CatalogEntry]:
        return [(rule.code, rule.name, rule.category) for rule in all_rules()]

    return _cached("catalog", build, _valid_catalog, use_cache)


_CACHED_CODE = re.compile(r"ROC\d{3}")

#: code -> (the dependency a rule's findings are about, its first release with ROCm support).
DependencyEntries = dict[str, tuple[str, str | None]]


def dependency_entries(use_cache: bool = True) -> DependencyEntries:
    """The rules whose findings are about one dependency (``Rule.dependency``), cached per
    catalog version like :func:`catalog_entries`, so that settling a warm scan's findings never
    imports the rules (and libcst)."""

    def build() -> DependencyEntries:
        return {
            rule.code: (rule.impact.dependency, rule.impact.rocm_release)
            for rule in all_rules()
            if rule.impact.dependency
        }

    return _cached("dependencies", build, _valid_dependencies, use_cache)


def rule_rationales(use_cache: bool = True) -> dict[str, str]:
    """Each rule's long rationale (the first paragraph of its "Why it breaks on ROCm" docs
    section), cached per catalog version so that printing a warm scan never imports the rules."""

    def build() -> dict[str, str]:
        return {rule.code: rationale_from_doc(rule.doc()) for rule in all_rules()}

    return _cached("rationales", build, _valid_rationales, use_cache)


def rationale_from_doc(doc: str) -> str:
    """The first paragraph of the "Why it breaks on ROCm" section of a rule's docs, on one line."""
    marker = "## Why it breaks on ROCm"
    if marker not in doc:
        return ""
    section = doc.split(marker, 1)[1].split("\n## ", 1)[0].strip()
    return " ".join(section.split("\n\n", 1)[0].split())


_T = TypeVar("_T")


def _cached(
    name: str, build: Callable[[], _T], valid: Callable[[object], _T], use_cache: bool
) -> _T:
    """``build()``, kept in the cache directory per catalog version (data only, validated by
    ``valid`` when read back; rebuilt when it does not check out)."""
    from migrator.files.cache import (
        NO_CACHE_VARIABLE,
        CacheInvalid,
        cache_dir,
        catalog_fingerprint,
        load_json,
        save_json,
    )

    if not use_cache or os.environ.get(NO_CACHE_VARIABLE):
        return build()
    path = cache_dir() / f"{name}-{catalog_fingerprint()}.json"
    try:
        return valid(load_json(path))
    except CacheInvalid:
        pass
    value = build()
    save_json(path, value)
    return value


def _valid_rationales(data: object) -> dict[str, str]:
    """The cached rationales when they map rule codes to strings."""
    from migrator.files.cache import CacheInvalid

    if not isinstance(data, dict) or not all(
        isinstance(code, str) and _CACHED_CODE.fullmatch(code) and isinstance(text, str)
        for code, text in data.items()
    ):
        raise CacheInvalid("rationales")
    return dict(data)


def _valid_dependencies(data: object) -> DependencyEntries:
    """The cached dependency map when every entry is a rule code with a package name and an
    optional release."""
    from migrator.files.cache import CacheInvalid

    if not isinstance(data, dict):
        raise CacheInvalid("dependency map is not an object")
    entries: DependencyEntries = {}
    for code, value in data.items():
        if not (
            isinstance(code, str)
            and _CACHED_CODE.fullmatch(code)
            and isinstance(value, (list, tuple))
            and len(value) == 2
            and isinstance(value[0], str)
            and value[0]
            and (value[1] is None or isinstance(value[1], str))
        ):
            raise CacheInvalid("dependency entry")
        entries[code] = (value[0], value[1])
    return entries


def _valid_catalog(data: object) -> list[CatalogEntry]:
    """The cached catalog when it is a non-empty list of distinct (code, name, category) that
    agrees with the code table."""
    from migrator.files.cache import CacheInvalid

    if not isinstance(data, list) or not data:
        raise CacheInvalid("catalog is not a non-empty list")
    entries: list[CatalogEntry] = []
    for item in data:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and all(isinstance(part, str) and part for part in item)
            and _CACHED_CODE.fullmatch(item[0])
        ):
            raise CacheInvalid("catalog entry")
        entries.append((item[0], item[1], item[2]))
    if len({code for code, _, _ in entries}) != len(entries):
        raise CacheInvalid("duplicate codes")
    # Checked against the code table (a small TOML file, no rule imports): every code in its
    # category's range and every category of the table present, so a forged or truncated list
    # cannot silently drop a category from every scan. (If a category ever has no rule yet,
    # the cache is simply rebuilt each time: slower, never wrong.)
    table = code_table()
    if code_table_problems([(code, category) for code, _, category in entries], table) or {
        category for _, _, category in entries
    } != {span.name for span in table.ranges}:
        raise CacheInvalid("catalog does not match the code table")
    return entries


def preview_codes(use_cache: bool = True) -> frozenset[str]:
    """The codes of the rules in preview (``Rule.preview``), cached per catalog version like
    :func:`catalog_entries`."""

    def build() -> list[str]:
        return sorted(rule.code for rule in all_rules() if rule.preview)

    return frozenset(_cached("preview", build, _valid_codes, use_cache))


def _valid_codes(data: object) -> list[str]:
    from migrator.files.cache import CacheInvalid

    if not isinstance(data, list) or not all(
        isinstance(code, str) and _CACHED_CODE.fullmatch(code) for code in data
    ):
        raise CacheInvalid("not a list of rule codes")
    return data


def select_codes(
    entries: list[CatalogEntry],
    select: list[str] | None,
    ignore: list[str] | None,
    preview: frozenset[str] = frozenset(),
) -> frozenset[str]:
    """Codes chosen by codes, code prefixes, names, categories or ``ALL``; unknown selectors
    are a ConfigError so that a typo never silently selects nothing. Rules in ``preview`` are
    never chosen; naming one by its code or name is a ConfigError that says how to opt in."""
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
    for code, name, _ in entries:
        if code in preview and any(s.strip() in {code, name} for s in select or []):
            raise ConfigError(
                f"{code} ({name}) is a preview rule: pass --preview "
                "(or set preview = true in [tool.migrate]) to use it"
            )
    entries = [entry for entry in entries if entry[0] not in preview]
    chosen = [entry for entry in entries if not select or any(matches(entry, s) for s in select)]
    if ignore:
        chosen = [entry for entry in chosen if not any(matches(entry, s) for s in ignore)]
    return frozenset(code for code, _, _ in chosen)
