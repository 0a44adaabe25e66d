"""The requirements declared by each file format: requirements files, ``pyproject.toml``,
``setup.cfg``, conda environment files and ``setup()`` calls in ``setup.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from migrator.api import PythonContext

from ._lines import comment_start, line_bounds
from ._requirements import ParsedRequirement, Req, normalize, parse_requirement
from ._toml_scanner import TomlValue, element_removal, scan_toml, walk_toml


@dataclass(frozen=True, slots=True)
class OptionValue:
    """A ``--index-url URL`` style option value found in a file, with its absolute span."""

    option: str
    value: str
    start: int
    end: int


def _logical_lines(text: str) -> Iterator[tuple[int, int, list[tuple[int, int]]]]:
    """(start, end, physical line spans without comments) for each ``\\``-continued line."""
    position = 0
    pieces: list[tuple[int, int]] = []
    first = 0
    while position < len(text):
        newline = text.find("\n", position)
        end = len(text) if newline == -1 else newline
        line = text[position:end]
        cut = comment_start(line)
        content_end = position + cut
        stripped = text[position:content_end].rstrip()
        if not pieces:
            first = position
        if stripped.endswith("\\") and cut == len(line):
            pieces.append((position, position + len(stripped) - 1))
            position = end + 1
            continue
        pieces.append((position, content_end))
        yield first, min(len(text), end + 1), pieces
        pieces = []
        position = end + 1
    if pieces:
        yield first, len(text), pieces


#: A pip-compile annotation line ("    # via torch").
_ANNOTATION = re.compile(r"[ \t]+#")
_REQ_OPTION = re.compile(r"^(-i|--index-url|--extra-index-url|-f|--find-links)(?:\s*=\s*|\s+)(\S+)")


def requirements_file(text: str) -> tuple[list[Req], list[OptionValue]]:
    """Requirements and index options of a requirements/constraints file."""
    reqs: list[Req] = []
    options: list[OptionValue] = []
    logical = list(_logical_lines(text))
    for number, (start, end, pieces) in enumerate(logical):
        # A continued line (``pkg \\`` + ``--hash=...``) is edited within its first line only.
        first_start, first_end = pieces[0]
        content = text[first_start:first_end]
        lead = len(content) - len(content.lstrip())
        body_start = first_start + lead
        body = content.strip()
        if not body:
            continue
        if body.startswith("-"):
            match = _REQ_OPTION.match(body)
            if match is not None:
                options.append(
                    OptionValue(
                        match.group(1),
                        match.group(2),
                        body_start + match.start(2),
                        body_start + match.end(2),
                    )
                )
            continue
        cut = re.search(r"\s--?[a-zA-Z]", body)
        requirement = body[: cut.start()] if cut else body
        parsed = parse_requirement(requirement.rstrip())
        if parsed is None:
            continue
        remove_end = end
        # pip-compile annotations ("    # via torch") that follow belong to this line.
        later = number + 1  # by index: a slice of the rest per line would be quadratic
        while later < len(logical) and _ANNOTATION.match(text, logical[later][0]):
            remove_end = logical[later][1]
            later += 1
        reqs.append(Req(parsed, "requirements", body_start, remove=(start, remove_end)))
    return reqs, options


_REQ_ARRAYS = (
    ("project", "dependencies"),
    ("project", "optional-dependencies", "*"),
    ("dependency-groups", "*"),
    ("build-system", "requires"),
    ("tool", "uv", "dev-dependencies"),
    ("tool", "uv", "constraint-dependencies"),
    ("tool", "uv", "override-dependencies"),
    ("tool", "pdm", "dev-dependencies", "*"),
)


def _path_matches(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(
        p == "*" or p == q for p, q in zip(pattern, path, strict=True)
    )


def _poetry_table(path: tuple[str, ...]) -> bool:
    return (
        _path_matches(path, ("tool", "poetry", "dependencies", "*"))
        or _path_matches(path, ("tool", "poetry", "dev-dependencies", "*"))
        or _path_matches(path, ("tool", "poetry", "group", "*", "dependencies", "*"))
    )


def pyproject_file(text: str) -> tuple[list[Req], list[TomlValue]]:
    """Requirements of a pyproject.toml and every string value (for index URLs)."""
    values = scan_toml(text)
    if values is None:
        return [], []
    reqs: list[Req] = []
    for value in values:
        if value.kind == "array" and any(_path_matches(value.path, p) for p in _REQ_ARRAYS):
            for index, element in enumerate(value.elements):
                if element.kind != "string" or element.string is None:
                    continue
                parsed = parse_requirement(element.string)
                if parsed is None:
                    continue
                offset = element.start + 1 if element.editable else None
                reqs.append(
                    Req(
                        parsed,
                        "pyproject",
                        offset,
                        remove=element_removal(text, value, index),
                        report_span=(element.start + 1, element.end - 1),
                    )
                )
        elif _poetry_table(value.path) and value.key_span is not None:
            name = value.path[-1]
            if normalize(name) == "python":
                continue
            spec_span = None
            spec = ""
            if value.kind == "string" and value.string is not None:
                spec = value.string
                if value.editable:
                    spec_span = (value.start + 1, value.end - 1)
            elif value.kind == "table":
                for entry in value.entries:
                    if entry.path[-1] == "version" and entry.kind == "string":
                        spec = entry.string or ""
                        if entry.editable:
                            spec_span = (entry.start + 1, entry.end - 1)
            key_text = text[value.key_span[0] : value.key_span[1]].rstrip()
            name_span = (
                (value.key_span[0], value.key_span[0] + len(key_text))
                if re.fullmatch(r"[A-Za-z0-9_.-]+", key_text)
                else None
            )
            parsed = ParsedRequirement(
                text=name,
                name=normalize(name),
                raw_name=name,
                name_span=(0, len(name)),
                extras=(),
                extras_span=(len(name), len(name)),
                spec=spec,
                spec_span=(0, 0),
                marker="",
                url=None,
            )
            line_start, line_end = line_bounds(text, value.key_span[0])
            single_line = text.find("\n", value.key_span[0], value.end) == -1
            reqs.append(
                Req(
                    parsed,
                    "poetry",
                    None,
                    remove=(line_start, line_end) if single_line else None,
                    poetry_spans=(name_span, spec_span),
                    report_span=(value.key_span[0], value.key_span[0] + len(key_text)),
                )
            )
    strings = [v for v in walk_toml(values) if v.kind == "string"]
    return reqs, strings


_CFG_KEYS = {"install_requires", "setup_requires", "tests_require"}


def setupcfg_file(text: str) -> list[Req]:
    reqs: list[Req] = []
    section = ""
    active = False
    position = 0
    for line in text.splitlines(keepends=True):
        start = position
        position += len(line)
        bare = line.rstrip("\r\n")
        stripped = bare.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip().lower()
            active = False
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        value_offset = None
        if not bare[:1].isspace():
            key, sep, value = bare.partition("=")
            if not sep:
                key, sep, value = bare.partition(":")
            key = key.strip().lower()
            active = (section == "options" and key in _CFG_KEYS) or (
                section == "options.extras_require" and bool(sep)
            )
            if not active or not value.strip():
                continue
            value_offset = start + len(bare) - len(value) + (len(value) - len(value.lstrip()))
            content = value.strip()
            own_line = False
        else:
            if not active:
                continue
            value_offset = start + len(bare) - len(bare.lstrip())
            content = stripped
            own_line = True
        cut = comment_start(content)
        content = content[:cut].rstrip()
        parsed = parse_requirement(content)
        if parsed is None:
            continue
        remove = (start, position) if own_line else (value_offset, value_offset + len(content))
        reqs.append(Req(parsed, "setupcfg", value_offset, remove=remove))
    return reqs


@dataclass(frozen=True, slots=True)
class CondaEntry:
    value: str
    start: int
    end: int
    editable: bool
    section: str  # dependencies | pip | channels


def conda_entries(text: str) -> list[CondaEntry]:
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    out: list[CondaEntry] = []

    def scalar(node: yaml.Node, section: str) -> None:
        if not isinstance(node, yaml.ScalarNode):
            return
        start, end = node.start_mark.index, node.end_mark.index
        raw = text[start:end]
        editable = node.style in (None, "") and raw == node.value
        if node.style in ("'", '"') and raw[1:-1] == node.value:
            start, end, editable = start + 1, end - 1, True
        out.append(CondaEntry(node.value, start, end, editable, section))

    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or not isinstance(value, yaml.SequenceNode):
            continue
        if key.value == "channels":
            for item in value.value:
                scalar(item, "channels")
        if key.value != "dependencies":
            continue
        for item in value.value:
            if isinstance(item, yaml.MappingNode):
                for sub_key, sub_value in item.value:
                    if (
                        isinstance(sub_key, yaml.ScalarNode)
                        and sub_key.value == "pip"
                        and isinstance(sub_value, yaml.SequenceNode)
                    ):
                        for pip_item in sub_value.value:
                            scalar(pip_item, "pip")
            else:
                scalar(item, "dependencies")
    return out


def _yaml_item_removal(text: str, start: int, end: int) -> tuple[int, int] | None:
    line_start, line_end = line_bounds(text, start)
    before = text[line_start:start]
    after = text[end:line_end]
    rest = after[: comment_start(after)].strip(" \t\r\n'\"")
    if re.fullmatch(r"\s*-\s*['\"]?", before) and not rest:
        return line_start, line_end
    return None


def cog_file(text: str) -> list[Req]:
    """The ``build.python_packages`` of a Cog ``cog.yaml`` (pip requirement strings)."""
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return []
    build = _mapping_value(root, "build")
    packages = _mapping_value(build, "python_packages")
    if not isinstance(packages, yaml.SequenceNode):
        return []
    reqs: list[Req] = []
    for item in packages.value:
        if not isinstance(item, yaml.ScalarNode):
            continue
        parsed = parse_requirement(item.value)
        if parsed is None:
            continue
        start, end = item.start_mark.index, item.end_mark.index
        raw = text[start:end]
        offset: int | None = start if raw == item.value else None
        if item.style in ("'", '"') and raw[1:-1] == item.value:
            offset = start + 1
        reqs.append(Req(parsed, "cog", offset, report_span=(start, end)))
    return reqs


def _mapping_value(node: object, key: str) -> object:
    """The value node of ``key`` in a YAML mapping node (None when absent)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            return value
    return None


_CONDA_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")


def conda_file(text: str) -> tuple[list[Req], list[CondaEntry]]:
    reqs: list[Req] = []
    entries = conda_entries(text)
    for entry in entries:
        if entry.section == "pip":
            if entry.value.lstrip().startswith("-"):
                continue
            parsed = parse_requirement(entry.value)
            if parsed is None:
                continue
            reqs.append(
                Req(
                    parsed,
                    "conda-pip",
                    entry.start if entry.editable else None,
                    remove=_yaml_item_removal(text, entry.start, entry.end),
                    report_span=(entry.start, entry.end),
                )
            )
        elif entry.section == "dependencies":
            value = entry.value.split("::")[-1]
            match = _CONDA_SPEC.match(value)
            if match is None:
                continue
            name = match.group(1)
            parsed = ParsedRequirement(
                text=name,
                name=normalize(name),
                raw_name=name,
                name_span=(0, len(name)),
                extras=(),
                extras_span=(len(name), len(name)),
                spec=value[len(name) :].strip(),
                spec_span=(0, 0),
                marker="",
                url=None,
            )
            reqs.append(
                Req(
                    parsed,
                    "conda",
                    None,
                    remove=_yaml_item_removal(text, entry.start, entry.end),
                    report_span=(entry.start, entry.end),
                )
            )
    return reqs, entries


#: The ``setup()`` keywords whose values declare requirements: the only ones read.
SETUP_KEYWORDS = ("extras_require", "install_requires", "setup_requires", "tests_require")
_SETUP_CALLS = {"setuptools.setup", "distutils.core.setup", "skbuild.setup"}


def is_setup_call(ctx: PythonContext, node: cst.Call) -> bool:
    return ctx.call_name(node) in _SETUP_CALLS


def _module_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            yield from _module_statements(statement.body.body)
            orelse = getattr(statement, "orelse", None)
            while orelse is not None:
                yield from _module_statements(orelse.body.body)
                orelse = getattr(orelse, "orelse", None)


def _assigned(module: cst.Module, name: str) -> list[cst.BaseExpression]:
    """Expressions assigned or added to ``name`` at module level (``x = [...]``, ``x[k] = [...]``,
    ``x += [...]``, ``x.append(...)``, ``x.extend(...)``)."""
    out: list[cst.BaseExpression] = []
    for small in _module_statements(module.body):
        if isinstance(small, cst.Assign):
            for target in small.targets:
                head: cst.BaseExpression = target.target
                if isinstance(head, cst.Subscript):
                    head = head.value
                if isinstance(head, cst.Name) and head.value == name:
                    out.append(small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == name:
                out.append(small.value)
        elif isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name) and small.target.value == name:
                out.append(small.value)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == name
                and func.attr.value in {"append", "extend"}
            ):
                out.extend(argument.value for argument in small.value.args)
    return out


Found = tuple[cst.SimpleString, "cst.Element | None", "cst.List | None"]


def setup_strings(module: cst.Module, call: cst.Call) -> list[Found]:
    """Requirement string literals reaching a ``setup()`` call, with their list element and list."""
    found: list[Found] = []
    seen: set[int] = set()
    names_seen: set[str] = set()

    def visit(
        expression: cst.BaseExpression,
        element: cst.Element | None,
        container: cst.List | None,
        depth: int,
    ) -> None:
        if depth > 6 or id(expression) in seen:
            return
        seen.add(id(expression))
        if isinstance(expression, cst.SimpleString):
            found.append((expression, element, container))
        elif isinstance(expression, (cst.List, cst.Tuple, cst.Set)):
            is_list = isinstance(expression, cst.List)
            for item in expression.elements:
                if isinstance(item, cst.Element):
                    visit(
                        item.value,
                        item if is_list else None,
                        expression if isinstance(expression, cst.List) else None,
                        depth + 1,
                    )
        elif isinstance(expression, cst.Dict):
            for entry in expression.elements:
                if isinstance(entry, cst.DictElement):
                    visit(entry.value, None, None, depth + 1)
        elif isinstance(expression, cst.BinaryOperation) and isinstance(
            expression.operator, cst.Add
        ):
            visit(expression.left, None, None, depth + 1)
            visit(expression.right, None, None, depth + 1)
        elif isinstance(expression, cst.Name) and expression.value not in names_seen:
            names_seen.add(expression.value)
            for value in _assigned(module, expression.value):
                visit(value, None, None, depth + 1)

    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value in SETUP_KEYWORDS:
            visit(argument.value, None, None, 0)
    return found


def python_string_req(node: cst.SimpleString) -> ParsedRequirement | None:
    value = node.evaluated_value
    if not isinstance(value, str):
        return None
    return parse_requirement(value)


def python_string_editable(node: cst.SimpleString) -> bool:
    """Whether the literal's text between the quotes is exactly its value (no escapes)."""
    quote = node.quote
    raw = node.value[len(node.prefix) + len(quote) : -len(quote)]
    return raw == node.evaluated_value and "b" not in node.prefix.lower()


def replace_string(node: cst.SimpleString, new_value: str) -> cst.SimpleString:
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{new_value}{quote}")
