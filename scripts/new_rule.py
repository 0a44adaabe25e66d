"""Start a rule: write its module, a stub of the fact it rests on and its first examples.

    python scripts/new_rule.py ROC123 env_vars --name cuda-thing-lookup --section 6
    python scripts/new_rule.py ROC345 cuda_kernels --name my-kernel-rule --kind kernel --section 7

The code must be free and inside a category's range of ``rules/codes.toml`` (the category comes
from the range); the family is a package under ``rules/``. The module it writes holds a rule
with every required attribute, a docstring with the sections ``migrate explain`` prints, and
one ``Valid`` and one ``Invalid`` example; the fact stub goes at the end of section ``§N`` of
``docs/rocm-facts.md``. Everything the contributor must still write says ``TODO``, and the
tests fail until it is written: the examples are the rule's tests (``tests/test_rule_examples.py
-k ROC123``), the citation is checked against the facts (``tests/test_catalog.py``). The steps
that follow are ``docs/contributing/adding-a-rule.md``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrator.engine.registry import parse_code_table  # noqa: E402

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CODE = re.compile(r"^ROC(\d{3})$")
_USED = re.compile(r'^\s+code = "(ROC\d{3})"', re.MULTILINE)
_SECTION = re.compile(r"^## §(\d+[a-z]?) ", re.MULTILINE)

#: Per kind: the base class, the parsing declaration, an example file and its two examples.
_KINDS = {
    "python": (
        "PythonRule",
        'Parsing(triggers=("TODO_trigger",), scope="statement")',
        "example.py",
        'Valid("import TODO_portable\\n")',
        'Invalid("import TODO_cuda_only\\n", line=1)',
        "    def visit_Call(self, node: cst.Call) -> None:\n"
        "        name = self.ctx.qualname(node.func)\n"
        '        if name is not None and name.startswith("TODO_cuda_only."):\n'
        "            self.report(node)\n",
    ),
    "text": (
        "TextRule",
        'Parsing(triggers=("TODO_trigger",), file_kinds=frozenset({"shell"}))',
        "setup.sh",
        'Valid("TODO portable line\\n", path="setup.sh")',
        'Invalid("TODO CUDA-only line\\n", path="setup.sh", line=1)',
        "    def check(self) -> None:\n"
        '        for match in re.finditer(r"TODO CUDA-only", self.ctx.text):\n'
        "            self.report((match.start(), match.end()))\n",
    ),
    "kernel": (
        "KernelRule",
        'Parsing(triggers=("TODO_trigger",))',
        "k.cu",
        'Valid("__global__ void k() {}\\n", path="k.cu")',
        'Invalid("__global__ void k() { TODO_cuda_only(); }\\n", path="k.cu", line=1)',
        "    def check(self) -> None:\n"
        "        for call in self.view.source.calls():\n"
        '            if call.callee == "TODO_cuda_only":\n'
        "                self.report_bytes((call.start, call.end))\n",
    ),
}


class ScaffoldError(Exception):
    """A reason not to write the rule, for the contributor."""


def _category(root: Path, code: str) -> str:
    match = _CODE.match(code)
    if match is None:
        raise ScaffoldError(f"{code}: a code is ROC and three digits")
    table = parse_code_table((root / "rules" / "codes.toml").read_text(encoding="utf-8"))
    if code in table.retired:
        raise ScaffoldError(f"{code} is retired ({table.retired[code]}); codes are never reused")
    number = int(match.group(1))
    for span in table.ranges:
        if span.first <= number <= span.last:
            return span.name
    raise ScaffoldError(f"{code} lies in no category's range of rules/codes.toml: add one first")


def _used_codes(root: Path) -> set[str]:
    used: set[str] = set()
    for path in (root / "rules").rglob("*.py"):
        used.update(_USED.findall(path.read_text(encoding="utf-8")))
    return used


def _module_text(code: str, name: str, category: str, kind: str, anchor: str, section: str) -> str:
    base, parsing, _, valid, invalid, matcher = _KINDS[kind]
    class_name = "".join(part.capitalize() for part in name.split("-"))
    imports = ["Impact", "Invalid", "Parsing", base, "Severity", "Valid"]
    head = "import re\n\n" if kind == "text" else ""
    if kind == "python":
        head = "import libcst as cst\n\n"
    return f'''"""{code} ({name}): TODO one sentence: what breaks on ROCm."""

from __future__ import annotations

{head}from migrator.api import {", ".join(sorted(imports, key=str.lower))}


class {class_name}({base}):
    """
    ## What it does
    TODO what the rule flags.

    ## Why it breaks on ROCm
    TODO what happens on a ROCm build, with the fact it rests on (§{section}).

    ## Example
    TODO the construct, as a user writes it.

    ## Manual migration
    TODO what to write instead, so that NVIDIA keeps working.

    ## References
    - TODO the primary source
    """

    code = "{code}"
    name = "{name}"
    category = "{category}"
    severity = Severity.WARNING
    message = "TODO the catalog line: what breaks, in plain text"
    fact = "§{section} TODO words of the fact's bold text; [TODO]"  # docs/rocm-facts.md#{anchor}
    parsing = {parsing}
    impact = Impact(consequence="crash-path")
    valid = [{valid}]
    invalid = [{invalid}]

{matcher}'''


def _fact_stub(anchor: str, code: str) -> str:
    return (
        f'- <a id="{anchor}"></a>**TODO the fact, in bold: what breaks on ROCm** ({code}): TODO\n'
        "  what happens, since which release, and the way out. Fix: manual. Sources: [TODO]\n"
    )


def _with_fact(facts: str, section: str, stub: str) -> str:
    """``facts`` with ``stub`` at the end of section ``§section``'s list of facts."""
    headings = list(_SECTION.finditer(facts))
    for index, heading in enumerate(headings):
        if heading.group(1) != section:
            continue
        end = headings[index + 1].start() if index + 1 < len(headings) else len(facts)
        body = facts[heading.end() : end].rstrip("\n")
        return facts[: heading.end()] + body + "\n" + stub + "\n" + facts[end:]
    raise ScaffoldError(f"docs/rocm-facts.md has no section §{section}")


def scaffold(root: Path, code: str, family: str, name: str, kind: str, section: str) -> list[Path]:
    """Write the rule module and the fact stub under ``root``; the paths written."""
    if not _NAME.match(name):
        raise ScaffoldError(f"{name}: a rule name is kebab-case (cuda-home-lookup)")
    category = _category(root, code)
    if code in _used_codes(root):
        raise ScaffoldError(f"{code} is already a rule's code: take the next free one")
    package = root / "rules" / family
    if not (package / "__init__.py").is_file():
        raise ScaffoldError(f"rules/{family} is no rule family (a package under rules/)")
    module = package / f"{name.replace('-', '_')}.py"
    if module.exists():
        raise ScaffoldError(f"{module.relative_to(root)} exists")
    facts_path = root / "docs" / "rocm-facts.md"
    anchor = f"s{section}-{name}"
    facts = facts_path.read_text(encoding="utf-8")
    if f'id="{anchor}"' in facts:
        raise ScaffoldError(f"docs/rocm-facts.md already has a fact #{anchor}")
    updated = _with_fact(facts, section, _fact_stub(anchor, code))
    module.write_text(_module_text(code, name, category, kind, anchor, section), encoding="utf-8")
    facts_path.write_text(updated, encoding="utf-8")
    return [module, facts_path]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("code", help="the rule's code, free and in a category's range: ROC123")
    parser.add_argument("family", help="the package under rules/: env_vars, cuda_kernels, ...")
    parser.add_argument("--name", required=True, help="kebab-case name of the pattern")
    parser.add_argument("--kind", choices=sorted(_KINDS), default="python")
    parser.add_argument("--section", required=True, help="the §N of docs/rocm-facts.md: 6, 3a")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    try:
        written = scaffold(
            arguments.root,
            arguments.code,
            arguments.family,
            arguments.name,
            arguments.kind,
            arguments.section,
        )
    except ScaffoldError as error:
        print(f"new_rule: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(arguments.root)}")
    print(
        f"next: replace every TODO, then pytest tests/test_rule_examples.py -k {arguments.code} "
        "tests/test_catalog.py and python scripts/gen_rule_docs.py "
        "(docs/contributing/adding-a-rule.md)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
