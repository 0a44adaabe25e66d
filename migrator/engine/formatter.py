"""The project's Python formatter: which one its checks run (CI workflow commands, pre-commit
hooks, Makefile and tox recipes, ruff/black configuration) with the settings they give, and
running it on the lines a fix rewrote only, so that the fixed file passes the project's
formatter check without any other line changing."""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from migrator.files.sources import read_project_text
from migrator.files.tomlcompat import parse_toml, tomllib
from migrator.process.helper import HelperError, run, tool_command
from migrator.syntax.shell_lex import lex

#: Formatters `fix` can run on a range of lines (ruff ``--range``, black ``--line-ranges``).
RUNNABLE = ("ruff", "black")
#: Formatters recognised but never run (no range formatting wired in): `fix` names them.
KNOWN = (*RUNNABLE, "yapf", "autopep8")
#: Seconds one formatter run may take.
TIMEOUT = 20

#: Options that change a formatter's output (a value follows those in the second set).
_FLAGS = {
    "ruff": frozenset({"--preview", "--no-preview", "--isolated"}),
    "black": frozenset(
        {"-S", "--skip-string-normalization", "-C", "--skip-magic-trailing-comma", "--preview"}
        | {"--unstable", "--skip-source-first-line"}
    ),
    "yapf": frozenset(),
    "autopep8": frozenset({"-a", "--aggressive"}),
}
_VALUED = {
    "ruff": frozenset({"--line-length", "--config", "--target-version"}),
    "black": frozenset({"-l", "--line-length", "-t", "--target-version", "--config"}),
    "yapf": frozenset({"--style"}),
    "autopep8": frozenset({"--max-line-length"}),
}
#: Options whose value says which files are read, not how they are laid out.
_SKIPPED_VALUED = frozenset(
    {"--exclude", "--extend-exclude", "--force-exclude", "--include", "--extend-include"}
    | {"--stdin-filename", "--cache-dir", "--required-version", "-W", "--workers", "--range"}
    | {"--output-format", "--python-cell-magics", "-c", "--code", "--line-ranges"}
)
_LENGTH_OPTIONS = frozenset({"-l", "--line-length", "--max-line-length"})
#: Words that may stand before the formatter's name in a command (YAML keys, runners).
_PREFIXES = frozenset(
    {"run:", "-", "python", "python3", "-m", "uv", "uvx", "run", "poetry", "pipx", "pdm"}
    | {"hatch", "exec", "env", "sudo", "pre-commit", "script:", "commands", "="}
)
#: The program names of each formatter.
_TOOLS = {"ruff": "ruff", "black": "black", "yapf": "yapf", "autopep8": "autopep8"}
#: pre-commit hook ids of each formatter.
_HOOKS = {
    "ruff-format": "ruff",
    "ruff-format-with-kwargs": "ruff",
    "black": "black",
    "black-jupyter": "black",
    "yapf": "yapf",
    "autopep8": "autopep8",
}


@dataclass(frozen=True, slots=True)
class Formatter:
    """A project's formatter: the tool, where the project runs it (``source``), the
    output-changing options it passes, its line length, and the files it covers (``paths``: the
    command's path arguments, empty for all; ``files``/``exclude``: a pre-commit hook's regexes)."""

    tool: str
    source: str
    options: tuple[str, ...] = ()
    line_length: int | None = None
    paths: tuple[str, ...] = ()
    files: str = ""
    exclude: str = ""
    #: paths an ``--exclude`` option leaves out (fnmatch patterns or path prefixes)
    excluded: tuple[str, ...] = ()
    root: str = ""

    def covers(self, relative: str) -> bool:
        """Whether the project's formatter check reads the file ``relative``."""
        relative = relative.replace(os.sep, "/")
        if self.paths and not any(
            path in ("", ".") or relative == path or relative.startswith(path.rstrip("/") + "/")
            for path in self.paths
        ):
            return False
        for pattern in self.excluded:
            if pattern and (
                fnmatch.fnmatch(relative, pattern)
                or relative.startswith(pattern.rstrip("/") + "/")
                or fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern)
            ):
                return False
        try:
            if self.files and not re.search(self.files, relative):
                return False
            return not (self.exclude and re.search(self.exclude, relative))
        except re.error:
            return True

    @property
    def command(self) -> str:
        """The command that formats files as the project does (FILES standing for them)."""
        name = "ruff format" if self.tool == "ruff" else self.tool
        return " ".join([name, *self.options, "FILES"])


def _options(
    tool: str, words: Sequence[str]
) -> tuple[tuple[str, ...], int | None, list[str], list[str]]:
    """The output-changing options among a formatter's arguments, its line length, the path
    arguments, and the paths its ``--exclude`` options leave out."""
    excluded: list[str] = []
    options: list[str] = []
    paths: list[str] = []
    length: int | None = None
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, value = word.partition("=")
        if word in _FLAGS[tool]:
            options.append(word)
        elif name in _VALUED[tool] and equals:
            options.append(word)
            length = _length(name, value, length)
        elif word in _VALUED[tool] and index + 1 < len(words):
            index += 1
            options.extend((word, words[index]))
            length = _length(word, words[index], length)
        elif word in _SKIPPED_VALUED and index + 1 < len(words):
            index += 1
            if word in ("--exclude", "--extend-exclude"):
                excluded.extend(part.strip() for part in words[index].split(","))
        elif name in _SKIPPED_VALUED and equals:
            if name in ("--exclude", "--extend-exclude"):
                excluded.extend(part.strip() for part in value.split(","))
        elif tool == "black" and re.fullmatch(r"-l\d+", word):
            options.append(word)
            length = _length("-l", word[2:], length)
        elif not word.startswith("-"):
            paths.append(word)
        index += 1
    return tuple(options), length, paths, excluded


def _length(option: str, value: str, current: int | None) -> int | None:
    if option in _LENGTH_OPTIONS and value.isdigit():
        return int(value)
    if option == "--style":  # yapf's inline style: --style "{column_limit: 100}"
        found = re.search(r"column_limit\s*[:=]\s*(\d+)", value)
        if found:
            return int(found.group(1))
    if option == "--config":  # ruff's inline setting: --config "line-length=100"
        found = re.fullmatch(r"\s*line-length\s*=\s*(\d+)\s*", value)
        if found:
            return int(found.group(1))
    return current


def _commands(text: str) -> Iterator[list[str]]:
    """The words of each command of shell-like text (a workflow, Makefile, tox.ini), lexed a
    logical line at a time: a quote in a YAML name or a comment never spans lines."""
    for line in re.sub(r"\\\r?\n", " ", text).splitlines():
        words: list[str] = []
        for lexeme in lex(line):
            if lexeme.kind == "word":
                words.append(lexeme.value)
            elif lexeme.kind in ("operator", "newline") and words:
                yield words
                words = []
        if words:
            yield words


def _from_command(words: list[str], source: str) -> Formatter | None:
    """The formatter a command runs (``black -l 119 .``, ``python -m ruff format --check src``)."""
    position = next(
        (
            index
            for index, word in enumerate(words)
            if word.lstrip("@-").rsplit("/", 1)[-1] in _TOOLS
        ),
        None,
    )
    if position is None or not all(
        word in _PREFIXES
        or word.lstrip("@-") in _PREFIXES
        or re.fullmatch(r"[@-]*python3?(\.\d+)?", word)
        for word in words[:position]
    ):
        return None
    name = _TOOLS[words[position].lstrip("@-").rsplit("/", 1)[-1]]
    index = position
    rest = words[index + 1 :]
    if name == "ruff":
        if not rest or rest[0] != "format":
            return None
        rest = rest[1:]
    options, length, paths, excluded = _options(name, rest)
    return Formatter(name, source, options, length, tuple(paths), excluded=tuple(excluded))


def _workflow_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder in (".github/workflows", ".gitlab-ci.yml", ".circleci"):
        path = root / folder
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.suffix in (".yml", ".yaml")))
        elif path.is_file():
            found.append(path)
    return found


def _scripted(root: Path, paths: Sequence[Path]) -> Formatter | None:
    for path in paths:
        text = read_project_text(path)
        if not text:
            continue
        relative = path.relative_to(root).as_posix()
        for words in _commands(text):
            found = _from_command(words, relative)
            if found is not None:
                return found
    return None


def _pre_commit(root: Path) -> Formatter | None:
    import yaml

    text = read_project_text(root / ".pre-commit-config.yaml")
    if not text:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else ():
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else ():
            if not isinstance(hook, dict) or hook.get("id") not in _HOOKS:
                continue
            tool = _HOOKS[str(hook["id"])]
            args = hook.get("args")
            words = [str(arg) for arg in args] if isinstance(args, list) else []
            options, length, _, excluded = _options(tool, words)
            return Formatter(
                tool,
                ".pre-commit-config.yaml",
                options,
                length,
                files=_text(hook.get("files")),
                exclude=_text(hook.get("exclude")),
                excluded=tuple(excluded),
            )
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _configured(root: Path) -> tuple[Formatter | None, dict[str, int]]:
    """The formatter the configuration files declare (``[tool.black]``, ``[tool.ruff.format]``,
    ``ruff.toml``), and the line length each tool's configuration sets."""
    from migrator.files.tomlcompat import parse_toml, tomllib

    def load(name: str) -> dict[str, Any] | None:
        text = read_project_text(root / name, strict=True)
        try:
            data = parse_toml(text) if text is not None else None
        except tomllib.TOMLDecodeError:
            data = None
        return data if isinstance(data, dict) else None

    tool = (load("pyproject.toml") or {}).get("tool")
    tool = tool if isinstance(tool, dict) else {}
    black, ruff = tool.get("black"), tool.get("ruff")
    source = "pyproject.toml"
    if not isinstance(ruff, dict):
        for name in ("ruff.toml", ".ruff.toml"):
            if (loaded := load(name)) is not None:
                ruff, source = loaded, name
                break
    lengths: dict[str, int] = {}
    for name, table in (("black", black), ("ruff", ruff)):
        value = table.get("line-length") if isinstance(table, dict) else None
        if isinstance(value, int):
            lengths[name] = value
    if isinstance(black, dict):
        return Formatter("black", "pyproject.toml", line_length=lengths.get("black")), lengths
    if isinstance(ruff, dict) and isinstance(ruff.get("format"), dict):
        return Formatter("ruff", source, line_length=lengths.get("ruff")), lengths
    return None, lengths


def detect_formatter(root: Path) -> Formatter | None:
    """The formatter the project at ``root`` checks its code with: first a CI workflow's
    command (what fails a pull request), then a pre-commit hook, a Makefile or tox recipe, and
    last the configuration files alone; options given on a command line or in a hook's
    ``args`` are kept, and the line length falls back to the configured one."""
    if not root.is_dir():
        return None
    configured, lengths = _configured(root)
    found = (
        _scripted(root, _workflow_files(root))
        or _pre_commit(root)
        or _scripted(root, [root / name for name in ("Makefile", "tox.ini", "noxfile.py")])
        or configured
    )
    if found is None:
        return None
    if found.line_length is None:
        found = replace(found, line_length=lengths.get(found.tool))
    return replace(found, root=str(root.resolve()))


def executable(tool: str) -> list[str] | None:
    """How to run ``tool`` from migrate's own environment (``migrator.process``: never a module
    or program of the project); None when it is not installed (nothing is ever installed)."""
    if tool not in RUNNABLE:
        return None
    return tool_command(tool)


class FormatterFailed(Exception):
    """The formatter could not format the rewrite (not installed, refused the text, timed out)."""


def touched_ranges(old: str, new: str) -> list[tuple[int, int]]:
    """The 1-based inclusive line ranges of ``new`` that differ from ``old``, adjacent ranges
    merged; where lines were only removed, the line that now follows them (its blank lines
    before it are the formatter's to settle: an ``import`` removed at the top of a block)."""
    new_lines = new.splitlines()
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new_lines, autojunk=False)
    ranges: list[tuple[int, int]] = []
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag == "equal":
            continue
        if end == start:  # removed lines
            if not new_lines:
                continue
            start = min(start, len(new_lines) - 1)
            end = start + 1
        if ranges and start + 1 <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start + 1, end))
    return ranges


def _run(command: list[str], text: str) -> str:
    """The formatter's output for ``text``; run in a private folder (the project's own config
    is found from the absolute ``--stdin-filename``), never in the project."""
    try:
        done = run(command, input=text.encode("utf-8"), timeout=TIMEOUT)
    except HelperError as error:
        raise FormatterFailed(str(error)) from error
    if done.timed_out:
        raise FormatterFailed(f"{Path(command[0]).name}: did not finish within {TIMEOUT} s")
    if done.returncode != 0:
        message = done.err.strip().splitlines()
        raise FormatterFailed(message[-1] if message else f"exit status {done.returncode}")
    return done.stdout.decode("utf-8")


def _options_here(options: Sequence[str], root: str) -> list[str]:
    """``options`` with a ``--config`` file made absolute under ``root``; a ``--config`` that
    names a file outside the project (or none there) is dropped, so the formatter reads no file
    the project points it at outside itself. Inline settings (``--config 'x=1'``) stay."""
    kept: list[str] = []
    index = 0
    while index < len(options):
        option = options[index]
        name, equals, value = option.partition("=")
        if name == "--config" and (equals or index + 1 < len(options)):
            if not equals:
                index += 1
                value = options[index]
            candidate = Path(root, value)
            base = Path(root).resolve()
            if candidate.is_file() and candidate.resolve().is_relative_to(base):
                kept.append(f"--config={candidate.resolve()}")
            elif "=" in value and not candidate.exists():
                kept.append(f"--config={value}")
        else:
            kept.append(option)
        index += 1
    return kept


def _extends_outside(root: Path, relative: str) -> str | None:
    """The ``extend`` target of a ruff configuration between ``relative``'s folder and ``root``
    that lies outside ``root`` (ruff would read that file and may quote it in its errors), or
    None."""
    base = root.resolve()
    folder = (root / relative).parent
    while True:
        for name, table in (
            ("ruff.toml", ()),
            (".ruff.toml", ()),
            ("pyproject.toml", ("tool", "ruff")),
        ):
            text = read_project_text(folder / name)
            if text is None:
                continue
            try:
                data: Any = parse_toml(text)
            except (tomllib.TOMLDecodeError, ValueError):
                continue
            for key in table:
                data = data.get(key) if isinstance(data, dict) else None
            extend = data.get("extend") if isinstance(data, dict) else None
            if isinstance(extend, str):
                target = (folder / os.path.expanduser(extend)).resolve()
                if not target.is_relative_to(base):
                    return extend
        if folder.resolve() == base or folder.resolve() == folder.resolve().parent:
            return None
        folder = folder.parent


def format_rewrite(old: str, new: str, relative: str, formatter: Formatter) -> str:
    """``new`` with the project's formatter applied to the lines the rewrite changed from
    ``old`` (and the statements they belong to) only; raise FormatterFailed when it cannot run."""
    program = executable(formatter.tool)
    if program is None:
        raise FormatterFailed(f"{formatter.tool} is not installed")
    ranges = touched_ranges(old, new)
    if not ranges:
        return new
    filename = str(Path(formatter.root or ".", relative).absolute())
    options = _options_here(formatter.options, formatter.root or ".")
    outside = (
        _extends_outside(Path(formatter.root or "."), relative)
        if formatter.tool == "ruff"
        else None
    )
    if outside is not None:
        raise FormatterFailed(f"ruff's configuration extends {outside}, outside the project")
    text = new
    if formatter.tool == "black":
        spans = [f"--line-ranges={start}-{end}" for start, end in ranges]
        command = [*program, "-q", *options, *spans, "--stdin-filename", filename, "-"]
        return _within(new, _run(command, text), ranges)
    # ruff formats one range a run; from the last, so earlier line numbers stay valid
    for start, end in reversed(ranges):
        command = [
            *program,
            "format",
            *options,
            f"--range={start}-{end + 1}",
            "--stdin-filename",
            filename,
            "-",
        ]
        text = _run(command, text)
    return _within(new, text, ranges)


def _within(new: str, formatted: str, ranges: Sequence[tuple[int, int]]) -> str:
    """``formatted`` where its changes from ``new`` touch the rewritten ``ranges`` (or border
    them, for a line inserted), ``new`` elsewhere: a range formatter that also settles the blank
    lines of a neighbouring statement (black's ``--line-ranges`` does) changes nothing else."""
    touched = {line - 1 for start, end in ranges for line in range(start, end + 1)}
    before, after = new.splitlines(keepends=True), formatted.splitlines(keepends=True)
    kept: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, start, end, new_start, new_end in matcher.get_opcodes():
        ours = (
            any(line in touched for line in range(start, end))
            if end > start
            else start in touched or start - 1 in touched
        )
        kept.extend(after[new_start:new_end] if tag != "equal" and ours else before[start:end])
    return "".join(kept)
