"""Place an import a fix adds where isort would: in the block of top-level imports that already
imports from the same top-level package, in that block's sort order (libcst's AddImportsVisitor
appends after the last import, which lands third-party imports among first-party ones)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from migrator.syntax.imports import dotted_name


def _import_module(statement: cst.BaseStatement) -> tuple[bool, str] | None:
    """(is a from-import, module) of a top-level single import statement, else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.ImportFrom):
        if small.relative or small.module is None:
            return None
        module = dotted_name(small.module)
        return (True, module) if module else None
    if isinstance(small, cst.Import) and len(small.names) == 1:
        module = dotted_name(small.names[0].name)
        return (False, module) if module else None
    return None


def _blocks(body: Sequence[cst.BaseStatement]) -> list[list[int]]:
    """Runs of consecutive top-level import statements not separated by a blank line."""
    blocks: list[list[int]] = []
    previous = -2
    for index, statement in enumerate(body):
        if _import_module(statement) is None:
            continue
        assert isinstance(statement, cst.SimpleStatementLine)
        blank = any(line.comment is None for line in statement.leading_lines)
        if index == previous + 1 and not blank and blocks:
            blocks[-1].append(index)
        else:
            blocks.append([index])
        previous = index
    return blocks


def _key(entry: tuple[bool, str], by_type: bool) -> tuple[int, str]:
    is_from, module = entry
    return (int(is_from) if by_type else 0, module.lower())


def _position(
    body: Sequence[cst.BaseStatement], entry: tuple[bool, str]
) -> tuple[int, bool] | None:
    """Index in ``body`` to insert the import ``entry`` at and whether it opens its block, or None
    (no block imports its package)."""
    package = entry[1].split(".")[0]
    for block in _blocks(body):
        entries = [_import_module(body[index]) for index in block]
        known = [item for item in entries if item is not None]
        if not any(module.split(".")[0] == package for _, module in known):
            continue
        # isort's default puts `import x` before `from x import y`; force_sort_within_sections not
        by_type = [_key(item, True) for item in known] == sorted(_key(item, True) for item in known)
        key = _key(entry, by_type)
        after = [
            index for index, item in zip(block, known, strict=True) if _key(item, by_type) <= key
        ]
        return (after[-1] + 1, False) if after else (block[0], True)
    return None


def _name_key(name: str) -> tuple[int, str]:
    """isort's order within one ``from`` import: CONSTANTS, then Classes, then functions."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _already_imported(body: Sequence[cst.BaseStatement], module: str, name: str | None) -> bool:
    for statement in body:
        entry = _import_module(statement)
        if entry is not None and entry[1] == module and entry[0] == (name is not None):
            return True
    return False


def place_imports(module: cst.Module, adds: Iterable[tuple[str, str | None]]) -> cst.Module:
    """``module`` with each ``from module import name`` (or ``import module``) that no top-level
    statement provides yet inserted next to the imports of its package; the rest is left to
    libcst's AddImportsVisitor (which then finds these already present)."""
    body = list(module.body)
    names: dict[str, list[str]] = {}
    straight: set[str] = set()
    for module_name, name in adds:
        if name is None:
            straight.add(module_name)
        else:
            names.setdefault(module_name, []).append(name)
    wanted: list[tuple[str, str | None]] = [(module_name, None) for module_name in sorted(straight)]
    wanted += [
        (module_name, ", ".join(sorted(set(found), key=_name_key)))
        for module_name, found in sorted(names.items())
    ]
    for module_name, name in wanted:
        if _already_imported(body, module_name, name):
            continue
        found = _position(body, (name is not None, module_name))
        if found is None:
            continue
        position, opens_block = found
        code = f"from {module_name} import {name}\n" if name else f"import {module_name}\n"
        new = cst.parse_statement(code)
        if opens_block:  # it takes over the block's leading lines (blank line, comments)
            following = body[position]
            assert isinstance(following, cst.SimpleStatementLine)
            new = new.with_changes(leading_lines=following.leading_lines)
            body[position] = following.with_changes(leading_lines=[])
        elif position < len(body) and _import_module(body[position]) is None:
            # last of the import section: code follows after a blank line, as AddImportsVisitor
            # leaves it
            following = body[position]
            leading = getattr(following, "leading_lines", ())
            if not any(line.comment is None for line in leading):
                body[position] = following.with_changes(leading_lines=[cst.EmptyLine(), *leading])
        body.insert(position, new)
    return module.with_changes(body=body)
