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


YAML_PIECES = [
    "jobs:",
    "  build:",
    "    runs-on: [self-hosted, gpu]",
    "    container: nvidia/cuda:12.1.1-devel-ubuntu22.04",
    "    steps:",
    "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu121",
    "        env: {CUDA_VISIBLE_DEVICES: '0'}",
    "services:",
    "  app:",
    "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all}]}}}",
    "dependencies:",
    "  - pytorch-cuda=12.1",
    "  - pip: [flash-attn==2.5.8]",
    "anchor: &a [x, y]",
    "alias: *a",
    "<<: *a",
    "text: |",
    "  multi",
    "\tindented: tab",
    "[[[[",
    "{a: [b, {c: d}",
    "---",
    "...",
    "? complex key",
    ": value",
    "!!python/object:os.system 'x'",
]


@SETTINGS
@given(
    st.lists(st.sampled_from(YAML_PIECES), max_size=30).map("\n".join),
    st.sampled_from(
        [
            (".github/workflows/ci.yml", "ci-yaml"),
            ("docker-compose.yml", "compose"),
            ("environment.yml", "conda"),
            ("cog.yaml", "cog"),
        ]
    ),
)
def test_yaml_files_end_with_findings_or_one_reason(text, file):
    """Every YAML reader (structure check, CI, compose, conda and Cog rules) ends on any mix of
    YAML pieces; a fix, when one applies, settles (fixing twice changes nothing)."""
    path, kind = file
    try:
        analysis = analyze(text, path, kind, all_rules(), fix=Applicability.SAFE)
    except (SkipFile, FailFile) as error:
        assert "\n" not in str(error)
        return
    if analysis.new_text is not None:
        again = analyze(analysis.new_text, path, kind, all_rules(), fix=Applicability.SAFE)
        assert again.new_text is None


DOCKERFILE_PIECES = [
    "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04 AS build",
    "FROM \\",
    "  pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime",
    "ARG BASE=nvidia/cuda:12.1.1-runtime-ubuntu22.04",
    "FROM ${BASE}",
    "RUN pip install flash-attn==2.5.8 \\",
    "    xformers --index-url https://download.pytorch.org/whl/cu121",
    "RUN <<EOF",
    "pip install bitsandbytes",
    "EOF",
    "ENV CUDA_VISIBLE_DEVICES=0 TORCH_CUDA_ARCH_LIST='8.0;9.0'",
    "COPY --from=build /app /app",
    "# syntax=docker/dockerfile:1",
    "RUN apt-get install -y cuda-toolkit-12-1 libcudnn8",
    "\\",
    "'",
    '"',
]


@SETTINGS
@given(st.lists(st.sampled_from(DOCKERFILE_PIECES), max_size=30).map("\n".join))
def test_dockerfile_reader_and_rules_end_and_fixes_settle(text):
    from migrator.rules.containers._images import image_refs

    list(image_refs(text, "dockerfile"))
    try:
        analysis = analyze(text, "Dockerfile", "dockerfile", all_rules(), fix=Applicability.SAFE)
    except (SkipFile, FailFile) as error:
        assert "\n" not in str(error)
        return
    if analysis.new_text is not None:
        again = analyze(
            analysis.new_text, "Dockerfile", "dockerfile", all_rules(), fix=Applicability.SAFE
        )
        assert again.new_text is None
