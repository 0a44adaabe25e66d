"""Partial parsing is an optimisation: findings (every field, positions exact) are identical to
whole-file parsing on the fixtures, on every rule example and on a corpus-shaped sample."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import libcst as cst
import pytest

from migrator.engine.engine import analyze
from migrator.engine.parse_plan import PARSE_MODE_VARIABLE, active_rules, partial_for
from migrator.engine.registry import all_rules
from migrator.engine.rule import PythonRule
from migrator.knowledge.tables import load_table
from migrator.syntax.imports import ImportTable, imports_from_ast
from migrator.syntax.reexports import ProjectIndex
from migrator.testing import kind_for
from tests.conftest import FIXTURES, ROOT, write
from tests.project_sources import GROUP, libcst_tree, text_of

SAMPLE = ROOT / "tests" / "data" / "partial_parse"
PROJECTS = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.endswith("_fixed")
)
#: Unrelated code added to each rule example so that partial parsing has something to leave out.
PADDING = (
    "\n\ndef _padding(value):\n    total = 0\n    for item in value:\n"
    "        if item:\n            total += item\n    return total\n"
)


def _scan(scan_json, mode: str, *args: str) -> dict:
    """A JSON scan with every file parsed whole, or partially wherever possible."""
    flags = ["--whole-parse"] if mode == "whole" else []
    return scan_json("--no-cache", "--show-guarded", *flags, *args)


def _findings(analysis) -> list[tuple]:
    return [dataclasses.astuple(finding) for finding in analysis.findings]


def _both(monkeypatch, text: str, path: str, rules) -> tuple[list[tuple], list[tuple]]:
    kind = kind_for(path)
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "whole")
    whole = _findings(analyze(text, path, kind, rules))
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "partial")
    partial = _findings(analyze(text, path, kind, rules))
    return whole, partial


@pytest.mark.parametrize("project", PROJECTS)
def test_partial_parse_does_not_change_findings_on_fixtures(project, scan_json, monkeypatch):
    root = str(FIXTURES / project)
    whole = _scan(scan_json, "whole", root)
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "partial")
    partial = _scan(scan_json, "partial", root)
    assert whole["findings"], "fixture has no findings"
    assert partial["findings"] == whole["findings"]
    assert partial["files"] == whole["files"]


def test_partial_parse_does_not_change_findings_on_the_sample(scan_json, monkeypatch):
    whole = _scan(scan_json, "whole", str(SAMPLE))
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "partial")
    partial = _scan(scan_json, "partial", str(SAMPLE))
    assert len(whole["findings"]) >= 12
    assert partial["findings"] == whole["findings"]
    assert partial["files"] == whole["files"]
    assert not whole["files"]["failed"]


def test_the_sample_is_parsed_partially():
    """The sample exercises the partial path: most of each file is left out, the kept lines are
    byte-identical and every line keeps its number."""
    rules = all_rules()
    for path in sorted(SAMPLE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        chosen = [r for r in active_rules(rules, text, True) if issubclass(r, PythonRule)]
        source = partial_for(chosen, text, worthwhile=1.0)
        assert source is not None, path.name
        assert source.kept_lines < source.total_lines, path.name
        original = text.splitlines()
        blanked = source.text.splitlines()
        assert len(blanked) == len(original)
        assert all(line in ("", original[i]) for i, line in enumerate(blanked))
        cst.parse_module(source.text)  # what is left parses
        assert ast.dump(source.tree) == ast.dump(ast.parse(text))  # left whole for the rules
        assert ast.dump(ast.parse(source.text)) == ast.dump(source.blanked_tree())
    train = (SAMPLE / "train_lora.py").read_text(encoding="utf-8")
    chosen = [r for r in active_rules(rules, train, True) if issubclass(r, PythonRule)]
    source = partial_for(chosen, train)
    assert source is not None  # worth it at the default threshold, though dense in triggers


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_endings_and_tabs_are_kept(tmp_path, monkeypatch, newline):
    text = (
        "import torch\n\ndef first(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n\n"
        "def second():\n\ty = 3\n\ttorch.backends.cuda.matmul.allow_tf32 = True\n\treturn y\n"
    ).replace("\n", newline)
    whole, partial = _both(monkeypatch, text, "t.py", all_rules())
    assert whole and partial == whole
    assert [finding[5] for finding in whole] == [10]  # the line, counted as Python counts


def _examples():
    for rule in all_rules():
        if not issubclass(rule, PythonRule):
            continue
        for index, example in enumerate([*rule.valid, *rule.invalid], start=1):
            if kind_for(example.path) == "python":
                yield pytest.param(rule, example, id=f"{rule.code}-{index}")


@pytest.mark.parametrize(("rule", "example"), list(_examples()))
def test_partial_parse_does_not_change_rule_examples(rule, example, monkeypatch):
    """Every Python example, alone and with unrelated code after it (and before it, where the
    example's first statement may come second), under the rule alone and under the whole
    catalog (other rules' triggers keep other statements)."""
    texts = [example.code, example.code.rstrip("\n") + "\n" + PADDING]
    if "__future__" not in example.code:
        texts.append(PADDING.lstrip("\n") + "\n\n" + example.code)
    for text in texts:
        for rules in ((rule,), all_rules()):
            whole, partial = _both(monkeypatch, text, example.path, rules)
            assert partial == whole


def _sources() -> list[Path]:
    files = [*sorted((ROOT / "migrator").rglob("*.py")), *sorted((ROOT / "rules").rglob("*.py"))]
    files += sorted(FIXTURES.rglob("*.py")) + sorted(SAMPLE.rglob("*.py"))
    return files


@GROUP
def test_imports_from_ast_equal_the_concrete_tree_reader():
    """The whole-file import table read from ``ast`` is the one libcst's tree gives, with and
    without the project's re-exports (this repository's own modules re-export libcst & co)."""
    files = {path.relative_to(ROOT).as_posix(): path for path in _sources()}
    index = ProjectIndex.build((relative, text_of(path)) for relative, path in files.items())
    compared = rewritten = 0
    for relative, path in files.items():
        text = text_of(path)
        try:
            module = libcst_tree(path)
        except cst.ParserSyntaxError:
            continue
        for exports in (None, index.slice_for(relative)):
            expected = ImportTable.from_module(module, exports, text)
            got = imports_from_ast(ast.parse(text), exports, text)
            assert list(got.bindings.items()) == list(expected.bindings.items()), relative
            assert got.modules == expected.modules, relative
            assert got.attribute_flags == expected.attribute_flags, relative
            compared += 1
        if expected.bindings != ImportTable.from_module(module).bindings:
            rewritten += 1
    assert compared > 200 and rewritten > 5


def test_a_match_statement_no_longer_fails_the_file(tmp_path, scan_json):
    write(
        tmp_path,
        "m.py",
        "import torch\n\ndef f(kind):\n    match kind:\n        case 1:\n"
        "            torch.backends.cudnn.allow_tf32 = True\n",
    )
    report = scan_json("--no-cache", str(tmp_path))
    assert not report["files"]["failed"]
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("ROC131", 6)]


def _partial(text: str, worthwhile: float = 1.0):
    chosen = [r for r in active_rules(all_rules(), text, True) if issubclass(r, PythonRule)]
    return partial_for(chosen, text, worthwhile=worthwhile)


def test_function_words_keep_the_function_around_a_call_and_comments_keep_no_block():
    """ROC410 reads the function around an xformers call (the 4-D reshape of its inputs): that
    function stays whole; a call in module-level code needs the whole file. A trigger in a
    comment line ("tf32") keeps the statements around it, not the whole function body."""
    text = (SAMPLE / "processors.py").read_text(encoding="utf-8")
    source = _partial(text)
    assert source is not None
    original = text.splitlines()
    kept = {i for i, line in enumerate(source.text.splitlines()) if line and line.strip()}

    def number(fragment: str) -> int:
        return next(i for i, line in enumerate(original) if fragment in line)

    assert number("query = hidden.view(") in kept  # the rewrite's evidence, no trigger on it
    assert number("hidden = hidden * 1.0") in kept  # the whole function
    assert number("loss.backward()") not in kept  # main's body is not kept for the comment
    assert number("matmul.allow_tf32 = True") in kept
    module_level = text + "\nout = xops.memory_efficient_attention(q, q, q)\n"
    assert _partial(module_level) is None


def test_a_re_exported_decorator_no_longer_needs_the_whole_file():
    """A name bound through the package's own module (``from .compat import ...``) is kept
    where used; only one binding an xformers function counts with the function words (the
    function around its call is kept whole), so a module-level decorator from the same module
    does not make the whole file needed."""
    files = {
        path.relative_to(SAMPLE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SAMPLE.rglob("*.py"))
    }
    relative = "blocks/attention.py"
    text = files[relative]
    chosen = [r for r in active_rules(all_rules(), text, True) if issubclass(r, PythonRule)]
    source = partial_for(
        chosen, text, ProjectIndex.build(files.items()).slice_for(relative), worthwhile=1.0
    )
    assert source is not None
    lines = text.splitlines()
    kept = {lines[i].strip() for i, line in enumerate(source.text.splitlines()) if line.strip()}
    assert "@maybe_allow_in_graph" in kept
    assert "query = hidden.view(batch, length, self.heads, head_dim)" in kept
    assert "total += row.sum()" not in kept


KERNEL = """\
import cutlass
import cutlass.cute as cute

WARP_SIZE = 32


class Kernel:
    def __init__(self):
        self.num_warps = 4

    @cute.jit
    def __call__(self, x):
        warp_idx = cutlass.Int32(cute.arch.warp_idx())
        if warp_idx == 0:
            total = cute.make_tensor(x)
            for i in range(4):
                total = total + i
        return cute.arch.sync_warp()


def launch(
    x,
    warp_size=0x20,
):
    return x


def width(x):
    threads = (32 *
               x.num_warps); other = 1
    return threads + other


def pad(
    warp_lanes=(
        32
    ),
):
    return warp_lanes
"""


def test_statement_requires_keeps_only_statements_holding_both(monkeypatch):
    """ROC301 (a warp-size name with the literal 32) and ROC902 (an import of the toolkit) say
    what else the statement of a finding holds: a CuTe kernel's many ``warp`` and ``cute``
    lines are left out (not the uses of ``cute``, not an ``if warp_idx`` block), while a 32 in
    a multi-line header or on a line shared with the next statement still keeps its finding."""
    rules = [r for r in all_rules() if r.code in {"ROC301", "ROC902"}]
    whole, partial = _both(monkeypatch, KERNEL, "kernel.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [
        ("ROC902", 1),
        ("ROC301", 4),
        ("ROC301", 23),
        ("ROC301", 29),
        ("ROC301", 36),
    ]
    source = _partial(KERNEL)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "warp_size=0x20," in kept and "x.num_warps); other = 1" in kept
    assert "total = cute.make_tensor(x)" not in kept
    assert "total = total + i" not in kept
    assert "class Kernel:" not in kept
    assert not any("Int32" in line for line in kept)  # 32 ends a name there: no literal


STAR_NVML = """\
from pynvml import *
import torch
{definition}

def helper():
    return torch.cuda.device_count()


if torch.cuda.is_available():
    nvmlInit()
COUNT = helper()
"""


@pytest.mark.parametrize(
    ("definition", "fails_at_import"),
    [("", True), ("\n\ndef nvmlInit():\n    return None\n", False)],
)
def test_an_nvml_init_at_import_is_read_through_a_star_import(
    monkeypatch, definition, fails_at_import
):
    """ROC200 reads the module-level ``nvmlInit()`` call (a scope trigger: with ``from pynvml
    import *`` no trigger is on its line) and a module-level definition of that name, which
    makes the call the module's own."""
    text = STAR_NVML.format(definition=definition)
    rules = [r for r in all_rules() if r.code == "ROC200"]
    # every init function of the NVML table holds a scope trigger
    assert all(
        any(trigger in name for trigger in rules[0].parsing.scope_triggers)
        for name in load_table("nvml")["init"]
    )
    whole, partial = _both(monkeypatch, text, "probe.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC200", 1)]
    assert ("initialised when this code is imported" in whole[0][9]) is fails_at_import
    source = _partial(text)
    assert source is not None and "return torch.cuda.device_count()" not in source.text


INNER_IMPORTS = """\
import subprocess


def smi():
    import json

    return subprocess.run(["nvidia-smi", "-L"], capture_output=True), json


def unrelated():
    return json.dumps({})


def caller():
    return smi()


def probe():
    from torch.cuda import get_device_capability as capability

    return capability


def gate():
    return capability()[0] >= 9
"""


def test_names_follow_an_inner_import_only_when_it_holds_a_trigger(monkeypatch):
    """The names a definition's own imports bind resolve anywhere (one import table per file),
    but only an import holding a trigger binds something the trigger reaches: ``json``'s other
    uses are left out, ``capability``'s (the capability query, aliased) are kept."""
    rules = [r for r in all_rules() if r.code in {"ROC110", "ROC210"}]
    whole, partial = _both(monkeypatch, INNER_IMPORTS, "probe.py", rules)
    assert partial == whole
    assert sorted((finding[0], finding[5]) for finding in whole) == [("ROC110", 25), ("ROC210", 7)]
    source = _partial(INNER_IMPORTS)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "return smi()" in kept and "return capability()[0] >= 9" in kept
    assert "return json.dumps({})" not in kept


BINDINGS = """\
import cuda.bindings.driver as cuda
import numba as nb
import torch


def stream():
    handle = cuda.CUstream(0)
    return handle


@nb.cuda.jit
def kernel(x):
    x[0] = 1


def launch():
    return torch.zeros(4)
"""


def test_unpaired_triggers_keep_their_uses_and_paired_ones_only_the_imports(monkeypatch):
    """ROC900 reports imports (``import`` is required with its triggers) and the first
    ``numba.cuda`` use through ``import numba`` (an unpaired trigger, read with the uses of the
    names its import binds): ``cuda.CUstream`` is left out, ``@nb.cuda.jit`` is kept."""
    rules = [r for r in all_rules() if r.code in {"ROC900", "ROC901"}]
    whole, partial = _both(monkeypatch, BINDINGS, "probe.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC900", 1), ("ROC900", 11)]
    source = _partial(BINDINGS)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "@nb.cuda.jit" in kept
    assert "handle = cuda.CUstream(0)" not in kept


BACKEND = """\
import subprocess

SMI = "nvidia-smi"


class Backend:
    kind = "llama"

    def __init__(self):
        self.ready = False

    def gpus(self):
        return subprocess.run([SMI, "-L"], capture_output=True)

    def unrelated(self):
        total = 0
        for i in range(10):
            total += i
        return total


def main():
    return Backend().gpus()
"""


def test_names_keep_the_members_of_a_class_that_use_a_followed_name(monkeypatch):
    """A class is split for the ``names`` closure: its shell (header and class attributes) and
    each method. The method using ``SMI`` is kept whole, with the shell that holds it; the
    others are left out, and so is ``main``: a shell kept only to hold a member binds nothing
    a trigger reaches, so the uses of the class name are not followed."""
    rules = [r for r in all_rules() if r.code == "ROC210"]
    whole, partial = _both(monkeypatch, BACKEND, "backend.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC210", 13)]
    source = _partial(BACKEND)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert 'return subprocess.run([SMI, "-L"], capture_output=True)' in kept
    assert 'kind = "llama"' in kept and "return Backend().gpus()" not in kept
    assert "total += i" not in kept and "self.ready = False" not in kept
    # a trigger in the class header keeps the whole class
    headed = BACKEND.replace("class Backend:", "class Backend:  # nvidia-smi")
    source = _partial(headed)
    assert source is not None and "total += i" in source.text


PROBE = """\
import torch


class Probe:
    major = torch.cuda.get_device_capability()[0]
    label = "probe"

    def describe(self):
        return self.label


def unrelated():
    return label


hopper = major == 9
"""


def test_names_follow_what_class_level_statements_bind(monkeypatch):
    """Rules read a class body as the module's scope, so a class attribute assigned from a
    trigger (``major``) binds where a module-level assignment does: its module-level use is
    kept and reported as with whole parsing. Only the bindings whose value holds a trigger or a
    followed name are followed: ``label`` is not, so ``unrelated`` is left out."""
    rules = [r for r in all_rules() if r.code == "ROC110"]
    whole, partial = _both(monkeypatch, PROBE, "probe.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC110", 16)]
    source = _partial(PROBE)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "hopper = major == 9" in kept
    assert "return label" not in kept


QUANTIZED = """\
import transformers
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from transformers import BitsAndBytesConfig as Bnb

model = dict(
    type=AutoModelForCausalLM.from_pretrained,
    quantization_config=dict(
        type=BitsAndBytesConfig,
        load_in_4bit=True,
    ),
)
config = Bnb(bnb_4bit_quant_type="nf4")
if flag:
    loaded = transformers.AutoModel.from_pretrained(
        name, load_in_4bit=four_bit
    )
with open(path) as handle:
    print(BitsAndBytesConfig(load_in_4bit=True), handle)
"""


def test_a_call_shaped_rule_keeps_only_statements_holding_its_calls(monkeypatch):
    """ROC511 reports a config class's call or a loader's with a load keyword
    (``statement_calls``): a config that names the class and the keyword as values of
    ``dict(...)`` is left out however long, while the calls, through an alias too, stay."""
    rules = [r for r in all_rules() if r.code == "ROC511"]
    whole, partial = _both(monkeypatch, QUANTIZED, "config.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [
        ("ROC511", 12),
        ("ROC511", 15),
        ("ROC511", 18),
    ]
    source = _partial(QUANTIZED)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "type=BitsAndBytesConfig," not in kept and "model = dict(" not in kept
    assert (
        'config = Bnb(bnb_4bit_quant_type="nf4")' in kept and "name, load_in_4bit=four_bit" in kept
    )


SMI_CALLERS = """\
import subprocess


def _smi_binary():
    return "nvidia-smi"


def _query(flag):
    subprocess.run([_smi_binary(), flag])
    return flag


def _list_nvidia():
    subprocess.run(["nvidia-smi", "-L"])


def show(vendor):
    if vendor == "nvidia":
        _list_nvidia()
    return _query("-L")


def main(vendor):
    show(vendor)
    total = 0
    for step in range(3):
        total += step
    return total
"""


def test_names_follow_a_function_as_a_value_only_through_its_returns(monkeypatch):
    """A helper whose ``return`` gives the program (``_smi_binary``) carries it: its callers are
    kept, and so on through what they return. One that only runs the program
    (``_list_nvidia``) is followed as a site: its callers are kept (ROC210 asks whether every
    call sits in an NVIDIA-only branch) but carry nothing, so ``main``, which calls ``show``, is
    left out."""
    rules = [r for r in all_rules() if r.code == "ROC210"]
    whole, partial = _both(monkeypatch, SMI_CALLERS, "gpus.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC210", 9)]
    source = _partial(SMI_CALLERS)
    assert source is not None
    kept = {line.strip() for line in source.text.splitlines() if line.strip()}
    assert "_list_nvidia()" in kept and 'return _query("-L")' in kept
    assert "show(vendor)" not in kept and "total += step" not in kept
    # while a helper returning what runs the program carries it to its callers' callers
    carried = SMI_CALLERS.replace("    return _query(", "    return _smi_binary() or _query(")
    whole, partial = _both(monkeypatch, carried, "gpus.py", rules)
    assert partial == whole
    source = _partial(carried)
    assert source is not None and "show(vendor)" in source.text


CONFIG_ONLY = """\
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

model = dict(  # migrate: ignore[ROC511]
    type=AutoModelForCausalLM.from_pretrained,
    quantization_config=dict(type=BitsAndBytesConfig, load_in_4bit=True),
)
"""


def test_a_file_holding_nothing_the_rules_read_is_not_parsed(monkeypatch):
    """When partial parsing keeps no statement an active rule reports in (a config naming the
    class only as a value), the file is not parsed at all: no findings, and its suppressions
    are all unused, exactly as when it is parsed whole."""
    rules = [r for r in all_rules() if r.code == "ROC511"]
    source = _partial(CONFIG_ONLY)
    assert source is not None and not source.marked
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "whole")
    whole = analyze(CONFIG_ONLY, "config.py", "python", rules)
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "partial")
    partial = analyze(CONFIG_ONLY, "config.py", "python", rules)
    assert whole.findings == partial.findings == []
    assert partial.unused_suppressions == whole.unused_suppressions == [(3, "ROC511")]
    # a statement the rule reads keeps the file parsed
    source = _partial(CONFIG_ONLY + "config = BitsAndBytesConfig(load_in_4bit=True)\n")
    assert source is not None and source.marked


COMPACTED = """\
import torch
from transformers import BitsAndBytesConfig


def unrelated(values):
    total = 0
    for value in values:
        total += value

    return total


class Loader:
    def load(self):
        return BitsAndBytesConfig(
            load_in_4bit=True,
        )

    def size(self):
        return 3
"""


def test_libcst_parses_the_kept_lines_only_and_positions_map_back(monkeypatch):
    """The text libcst parses has no line of a dropped statement (an empty line costs it a
    node); the positions found in it are the file's, ends of multi-line findings included."""
    from migrator.syntax.positions import map_range

    rules = [r for r in all_rules() if r.code == "ROC511"]
    whole, partial = _both(monkeypatch, COMPACTED, "loader.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC511", 15)]
    source = _partial(COMPACTED)
    assert source is not None
    text, lines = source.compacted()
    assert "total += value" not in text and "return BitsAndBytesConfig(" in text
    assert len(lines) == text.count("\n") + 1 < COMPACTED.count("\n") + 1
    numbered = zip(lines, text.splitlines(), strict=False)  # the last entry: the line after
    assert [line for line, kept in numbered if "load_in_4bit" in kept] == [16]
    # an end at the start of a line ends the line before it, wherever the lines came from
    start, end = cst.metadata.CodePosition(2, 4), cst.metadata.CodePosition(3, 0)
    mapped = map_range(cst.metadata.CodeRange(start, end), [1, 7, 20])
    assert (mapped.start.line, mapped.end.line, mapped.end.column) == (7, 8, 0)


PTX = """\
from torch.utils.cpp_extension import load_inline


def build():
    flags = ["-O3"]
    "__global__ void f() { asm(\\"trap;\\"); }"
    return load_inline("m", cpp_sources="", cuda_sources=['__device__ int g() { asm("trap;"); }'])
"""


def test_a_kept_string_statement_does_not_become_a_docstring(monkeypatch):
    """ROC601 reads statements: a string statement holding inline PTX stays a string statement
    when the statement before it is left out (the first statement of its block stays), so it
    is not skipped as the function's docstring."""
    rules = [r for r in all_rules() if r.code == "ROC601"]
    whole, partial = _both(monkeypatch, PTX, "kernels.py", rules)
    assert partial == whole
    assert [(finding[0], finding[5]) for finding in whole] == [("ROC601", 6), ("ROC601", 7)]


def test_file_wide_facts_come_from_the_whole_file(tmp_path, scan_json, monkeypatch):
    """The FP8 rules parse only their statements; what they read beyond them (an FNUZ dtype a
    project module re-exports under another name, a GPU named in another test function, a
    table's uses further down, 448 far from the dtype) is read from the whole file, in both
    modes alike."""
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/dtypes.py", "from torch import float8_e4m3fnuz as ROCM_FP8\n")
    kernel_use = (
        "import torch\n"
        "def quantize(w, s):\n"
        "    q = (w / s).to(torch.float8_e4m3fn)\n"
        "    return torch._scaled_mm(q, q.t(), scale_a=s, scale_b=s)\n"
    )
    chooser = "\ndef rocm_dtype():\n    return ROCM_FP8\n"
    write(tmp_path, "chooses.py", "from pkg.dtypes import ROCM_FP8\n" + kernel_use + chooser)
    write(tmp_path, "lacks.py", kernel_use + "\nFP8_MAX = 448.0\n")
    write(
        tmp_path,
        "tests/test_q.py",
        "import torch\n"
        "def make(w):\n    return w.to(torch.float8_e4m3fn)\n"
        + "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(30))
        + "\ndef test_make():\n    assert make(torch.ones(4, device='cuda')).shape\n",
    )
    whole = _scan(scan_json, "whole", str(tmp_path))
    monkeypatch.setenv(PARSE_MODE_VARIABLE, "partial")
    partial = _scan(scan_json, "partial", str(tmp_path))
    assert partial["findings"] == whole["findings"]
    assert sorted((f["path"], f["rule"], f["line"]) for f in whole["findings"]) == [
        ("lacks.py", "ROC120", 3),
        ("lacks.py", "ROC121", 6),
        ("tests/test_q.py", "ROC120", 3),
    ]


@pytest.mark.parametrize(
    ("source", "bindings"),
    [
        # a handler defining the name again: either object, so the name resolves to neither
        (
            "try:\n    from apex.normalization import FusedRMSNorm as RMSNorm\n"
            "except ImportError:\n    class RMSNorm:\n        pass\n",
            {},
        ),
        ("try:\n    from x import f\nexcept ImportError:\n    def f(): pass\n", {}),
        ("try:\n    from x import f\nexcept ImportError: f = len\n", {}),
        # None or False is no fallback (rules read those uses as the import's), nor a raise
        ("try:\n    from x import f\nexcept ImportError:\n    f = None\n", {"f": "x.f"}),
        (
            "try:\n    from x import f\nexcept ImportError:\n    def f(): pass\n    raise\n",
            {"f": "x.f"},
        ),
        # another import in the handler is the later binding, as before
        ("try:\n    from x import f\nexcept ImportError:\n    from y import f\n", {"f": "y.f"}),
        # a name bound before the try and not by its body keeps its binding
        (
            "from x import f\ntry:\n    import y\nexcept ImportError:\n    def f(): pass\n",
            {"f": "x.f", "y": "y"},
        ),
    ],
)
def test_an_import_with_a_fallback_definition_resolves_to_neither(source, bindings):
    """Both import readers (libcst's tree and the whole file's ``ast``) answer alike."""
    assert ImportTable.from_module(cst.parse_module(source)).bindings == bindings
    assert imports_from_ast(ast.parse(source)).bindings == bindings
