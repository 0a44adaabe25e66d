"""What ROC210 and ROC211 share: the program name, the fact, the amd-smi suggestion for an
``nvidia-smi`` command line and the message built from it."""

from __future__ import annotations

from migrator.api import load_table

_PROGRAM = "nvidia-smi"

_FACT = "§3c, §10 item 2; [A3][A4][P2]"


def suggest(args: list[str]) -> tuple[str, bool]:
    """How to say ``nvidia-smi <args>`` with amd-smi (a phrase with backticked commands) and
    whether it maps one to one."""
    table = load_table("nvidia_smi")
    for entry in table["exact"]:
        if args == entry["nvidia"]:
            return "`" + " ".join(["amd-smi", *entry["amd"]]) + "`", True
    fields: list[str] = []
    unmapped: list[str] = []
    output = ""
    for index, arg in enumerate(args):
        name, _, value = arg.partition("=")
        if not value and index + 1 < len(args) and name in {"--query-gpu", "--format"}:
            value = args[index + 1]
        if name == "--query-gpu":
            for field in filter(None, (part.strip() for part in value.split(","))):
                option = table["query_fields"].get(field)
                if option is None:
                    unmapped.append(field)
                elif option not in fields:
                    fields.append(option)
        elif name == "--format":
            output = table["formats"].get(value.split(",")[0].strip(), "")
    if any(arg.startswith("--query-gpu") for arg in args):
        phrase = ""
        if fields:
            phrase = (
                "`" + " ".join(["amd-smi metric", *fields, *([output] if output else [])]) + "`"
            )
        if unmapped:
            static = "`amd-smi static" + (f" {output}" if output else "") + "`"
            phrase += (" and " if phrase else "") + f"{static} for {', '.join(unmapped)}"
        return phrase, False
    for arg in args:
        name = arg.partition("=")[0]
        if name in table["options"]:
            return "`" + table["options"][name] + "`", False
    return "`amd-smi` (see `amd-smi --help`)", False


def _message(args: list[str] | None, parsed: bool, shell: bool = False) -> str:
    shown = " ".join([_PROGRAM, *(args or [])]) if args is not None else _PROGRAM
    if len(shown) > 60:
        shown = shown[:57] + "..."
    equivalent = suggest(args)[0] if args is not None else "`amd-smi`"
    failure = "command not found, exit 127" if shell else "FileNotFoundError / exit 127"
    text = f"`{shown}` does not exist on ROCm ({failure}); use {equivalent}"
    if parsed:
        text += "; port the parser: amd-smi output differs (use its --json or --csv)"
    return text
