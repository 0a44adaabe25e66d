"""A fuzzing harness over the parsers that read untrusted project text (issue #33): property
tests with hypothesis, sized for CI (a few hundred examples each). Each parser must end on any
input without an exception other than its documented one, in time linear enough for the input
sizes drawn; the engine's text-file path must keep bytes outside its edits and settle (fixing
twice changes nothing). Seeds of failures found are kept below as explicit examples."""

from __future__ import annotations

import string

from hypothesis import example, given, settings
from hypothesis import strategies as st
from migrator.rules._dependency_files import requirements_file
from migrator.rules._toml_scanner import scan_toml

from migrator.engine.engine import FailFile, SkipFile, analyze
from migrator.engine.registry import all_rules
from migrator.files.sources import notebook_cells
from migrator.files.tomlcompat import parse_toml, tomllib
from migrator.kernels import preproc
from migrator.kernels.source import parse
from migrator.model import Applicability
from migrator.syntax.shell_lex import lex

PRINTABLE = st.text(alphabet=string.printable + "\u00e9\u2028\ufeff\x00\x1b", max_size=400)
REQUIREMENT_LINES = st.lists(
    st.sampled_from(
        [
            "torch==2.3.0+cu121",
            "flash-attn>=2.5",
            "-r other.txt",
            "--extra-index-url https://download.pytorch.org/whl/cu121",
            "bitsandbytes ; sys_platform == 'linux'",
            "# comment",
            "\\",
            "xformers[all]==0.0.26",
            "git+https://github.com/NVIDIA/apex@master#egg=apex",
            "",
            "nvidia-cublas-cu12",
            "  pynvml  # trailing",
        ]
    ),
    max_size=30,
).map("\n".join)
SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(PRINTABLE)
@example("echo \"$(cat <<'EOF'\nx\nEOF\n)\"")
@example("'" * 1000)
def test_shell_lexer_ends_on_any_text(text):
    list(lex(text))


@SETTINGS
@given(st.one_of(PRINTABLE, REQUIREMENT_LINES))
def test_requirements_reader_ends_on_any_text(text):
    requirements_file(text)


@SETTINGS
@given(st.one_of(PRINTABLE, st.text(alphabet="[]{}=\"'a.,\n ", max_size=600)))
@example("a = " + "[" * 5000 + "]" * 5000)
def test_toml_readers_fail_only_with_a_decode_error(text):
    try:
        parse_toml(text)
    except tomllib.TOMLDecodeError:
        pass
    scan_toml(text)


@SETTINGS
@given(PRINTABLE)
def test_notebook_reader_fails_only_with_a_reason(text):
    try:
        notebook_cells(text)
    except (SkipFile, FailFile, ValueError):
        pass


@SETTINGS
@given(
    st.lists(
        st.sampled_from(
            [
                "#if defined(USE_ROCM)",
                "#ifdef __CUDA_ARCH__",
                "#if __CUDA_ARCH__ >= 800",
                "#elif CUDA_VERSION < 11000",
                "#else",
                "#endif",
                '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));',
                "  v += __shfl_xor_sync(0xffffffff, v, 1);",
                "#define WARP_SIZE 32",
                "__global__ void k(float* x) {",
                "}",
                "#include <cute/tensor.hpp>",
                "int lane = threadIdx.x & 31;",
                "/* unterminated",
                '"',
            ]
        ),
        max_size=40,
    ).map("\n".join)
)
def test_cuda_reader_and_branches_end_on_unbalanced_sources(text):
    source = parse(text.encode())
    source.asm_blocks()
    source.calls()
    preproc.regions(source)
    preproc.dead_on_amd(source)
    analysis = analyze(text, "k.cu", "cuda", all_rules(), fix=Applicability.SAFE)
    if analysis.new_text is not None:
        again = analyze(analysis.new_text, "k.cu", "cuda", all_rules(), fix=Applicability.SAFE)
        assert again.new_text is None  # fixing twice changes nothing


@settings(max_examples=150, deadline=None)
@given(REQUIREMENT_LINES)
def test_requirement_fixes_keep_bytes_outside_their_edits_and_settle(text):
    analysis = analyze(
        text, "requirements.txt", "requirements", all_rules(), fix=Applicability.UNSAFE
    )
    if analysis.new_text is None:
        return
    old_lines = set(text.splitlines())
    # every line of the fixed file is either an original line, byte for byte, or a fix's
    # ROCm replacement (an index URL, a ROCm wheel, a comment saying why)
    for line in analysis.new_text.splitlines():
        assert line in old_lines or "rocm" in line.lower() or line.lstrip().startswith("#"), line
    again = analyze(
        analysis.new_text, "requirements.txt", "requirements", all_rules(), fix=Applicability.UNSAFE
    )
    assert again.new_text is None
