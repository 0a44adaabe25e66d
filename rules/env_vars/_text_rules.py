"""The shared bases of the ROC71x rules (the text forms of ROC70x)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.api import Parsing, Rewrite, TextRule

from ._settings import _SIMPLE_VALUE, TextSetting, environment_block, find_settings
from ._table import _table

_TEXT_KINDS = frozenset({"shell", "dockerfile", "compose", "ci-yaml"})


class _TextPaired(TextRule, abstract=True):
    """Shared matcher of ROC710/ROC711 (the text forms of ROC700/ROC701)."""

    cuda_name: ClassVar[str]
    parsing = Parsing(file_kinds=_TEXT_KINDS)

    def check(self) -> None:
        entry = _table()["paired"][self.cuda_name]
        rocm = entry["add"]
        handled = entry["handled"]
        lines = self.ctx.text.splitlines()
        # a ROCm variable set in the same script or environment block handles it (when the two
        # disagree, ROC714 says what happens)
        rocm_settings = [
            found.start for name in handled for found in find_settings(self.ctx.text, name)
        ]
        for setting in find_settings(self.ctx.text, self.cuda_name):
            line_number, _ = self.ctx.position(setting.start)
            nearby = " ".join(lines[line_number - 1 : line_number + 1])
            if any(re.search(rf"(?<![\w$]){name}(?!\w)", nearby) for name in handled):
                continue
            if rocm_settings:
                start, end = environment_block(self.ctx.text, self.ctx.kind, setting.start)
                if any(start <= offset < end for offset in rocm_settings):
                    continue
            if setting.value.strip("\"'") in entry["off"] and setting.form != "docker-e":
                continue
            replacement, end = self._fix(setting, rocm)
            message = (
                f"`{self.cuda_name}` is set but `{rocm}` is not: {entry['why']}; set `{rocm}` "
                "to the same value"
            )
            self.report(
                (
                    setting.start,
                    end if replacement is not None else setting.start + len(self.cuda_name),
                ),
                message=message,
                fix=Rewrite(replacement),
            )

    def _fix(self, setting: TextSetting, rocm: str) -> tuple[str | None, int]:
        if self.ctx.path.endswith(".ipynb"):
            return None, 0  # notebook `!` lines are never rewritten by the engine
        value = setting.value
        original = self.ctx.text[setting.start : setting.value_end]
        if setting.form == "docker-e":
            suffix = f"={value}" if value else ""
            return f"{original} {setting.flag} {rocm}{suffix}", setting.value_end
        if not _SIMPLE_VALUE.match(value) and not re.fullmatch(
            r"\$\w+|\$\{\w+(?::?[-=+?][\w.,:/@%+-]*)?\}", value
        ):
            return None, 0
        if setting.form == "assign":
            return f"{original} {rocm}={value}", setting.value_end
        original_line = self.ctx.text[setting.start : setting.line_end]
        if setting.form == "yaml-list":
            dash = setting.line[: setting.line.index("-") + 1]
            spacing = setting.line[len(dash) :][
                : len(setting.line[len(dash) :]) - len(setting.line[len(dash) :].lstrip())
            ]
            return f"{original_line}\n{dash}{spacing}{rocm}={value}", setting.line_end
        if setting.form == "yaml-map":
            if setting.line.lstrip().startswith("-"):
                return None, 0
            colon = re.search(r":\s*", self.ctx.text[setting.start :])
            if colon is None:
                return None, 0
            separator = colon.group(0)
            return f"{original_line}\n{setting.indent}{rocm}{separator}{value}", setting.line_end
        if setting.form == "env-space":
            return f"{original_line}\n{setting.indent}ENV {rocm} {value}", setting.line_end
        return None, 0


class _TextVariables(TextRule, abstract=True):
    parsing = Parsing(file_kinds=_TEXT_KINDS)
