"""Runs every parser of untrusted text (``python tests/linear_inputs.py [NAME ...]``) on a long
line and on many lines, each at two sizes, 128 KB and 1 MB, and prints a JSON object: parser ->
input -> the CPU seconds of each size and their ratio. Run in a subprocess by
``tests/test_linear_parsers.py``, which bounds the ratio: a linear parser takes about 8 times as
long on 8 times the input, a quadratic one about 64 times. An alarm of ``BUDGET`` seconds per run
stops a parser that hangs (``"over budget"``)."""

from __future__ import annotations

import gc
import json
import signal
import sys
import time
from collections.abc import Callable

KB = 1 << 10
MB = 1 << 20

#: The two sizes of every input, in bytes.
SMALL = 128 * KB
LARGE = 1 * MB

#: Seconds one parse may take before the alarm stops it (linear parsers take under 2 at 1 MB).
BUDGET = 60

#: Times a measurement is repeated, at most, while its ratio is over ``RATIO_BOUND``: a run
#: that the machine slowed down is not a parser's fault, a quadratic parser is slow every time.
ATTEMPTS = 3

#: The ratio of the times at ``LARGE`` and ``SMALL`` that a linear parser stays under (8 ideally,
#: a quadratic parser's is about 64: exponent 1.5 at this bound).
RATIO_BOUND = 8**1.5

#: Below this many CPU seconds, a small input's time is timer and scheduling noise: the ratio is
#: taken over this floor instead (a quadratic parser takes far longer on 128 KB).
FLOOR = 0.005

Inputs = Callable[[int], str]


class OverBudget(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise OverBudget


def _parsers() -> dict[str, tuple[Callable[[str], object], Inputs, Inputs]]:
    """name -> (parse, a line of about n bytes, about n bytes of lines) for every reader of
    scanned text."""
    from migrator.rules._dependency_files import requirements_file
    from migrator.rules._toml_scanner import scan_toml
    from migrator.rules.containers._images import image_refs

    from migrator.engine.engine import FailFile, _validate_structure
    from migrator.files.sources import notebook_cells
    from migrator.files.tomlcompat import parse_toml, tomllib
    from migrator.kernels import preproc
    from migrator.kernels.dead import dead_definitions
    from migrator.kernels.differential import empty_on_amd
    from migrator.kernels.source import parse as parse_cuda
    from migrator.kernels.stubs import holds_code
    from migrator.syntax.shell_lex import lex
    from migrator.verify.series import extract_default, pairs

    def tolerant(function: Callable[[str], object]) -> Callable[[str], object]:
        def run(text: str) -> object:
            try:
                return function(text)
            except (FailFile, tomllib.TOMLDecodeError, ValueError):
                return None  # bad input is fine; only the time it took matters

        return run

    def cuda(text: str) -> object:
        source = parse_cuda(text.encode())
        source.asm_blocks()
        source.calls()
        empty_on_amd(source)  # every kernel body read for nvcc's architectures and for hipcc
        return preproc.regions(source)

    return {
        "requirements": (
            requirements_file,
            lambda n: "flash-attn" + "[x]" * (n // 3) + "\n",
            lambda n: "flash-attn==2.5.8\n    # via torch\n" * (n // 33),
        ),
        "toml scanner": (
            tolerant(scan_toml),
            lambda n: 'a = "' + "b" * n + '"\n',
            lambda n: "".join(f'k{i} = ["torch==2.1", {{x = 1}}]\n' for i in range(n // 36)),
        ),
        "toml": (
            tolerant(parse_toml),
            lambda n: "a = [" + "1," * (n // 2) + "]\n",
            lambda n: "".join(f'k{i} = "torch==2.1"\n' for i in range(n // 20)),
        ),
        "shell lexer": (
            lambda text: list(lex(text)),
            lambda n: "echo " + "'a' \"b\" $(c) " * (n // 14) + "\n",
            lambda n: (
                "export CUDA_VISIBLE_DEVICES=0 && pip install 'torch==2.1' \\\n  x\n" * (n // 64)
            ),
        ),
        "dockerfile images": (
            lambda text: list(image_refs(text, "dockerfile")),
            lambda n: "FROM " + "a" * n + "\n",
            lambda n: "FROM \\\n  nvidia/cuda:12.1.1-devel AS b\nRUN pip install x\n" * (n // 52),
        ),
        "yaml": (
            tolerant(lambda text: _validate_structure(text, "ci-yaml")),
            # nested n/4 deep: PyYAML's composer overflowed the stack on it (RecursionError)
            lambda n: "a: " + "[b, " * (n // 4) + "\n",
            lambda n: "- run: pip install torch\n  env: {A: 1}\n" * (n // 38),
        ),
        "notebook": (
            tolerant(notebook_cells),
            lambda n: '{"cells": [{"cell_type": "code", "source": "' + "x" * n + '"}]}',
            lambda n: (
                '{"cells": ['
                + ",".join(['{"cell_type": "code", "source": ["import torch\\n"]}'] * (n // 52))
                + "]}"
            ),
        ),
        "cuda": (
            cuda,
            lambda n: "int x = " + "(" * 100 + "a + " * (n // 4) + ")" * 100 + ";\n",
            lambda n: (
                "#if defined(USE_ROCM)\n__global__ void k(float* x) { x[0] = 1; }\n#endif\n"
                * (n // 70)
            ),
        ),
        "kernel definitions": (
            # the unused-definition reader (``kernels.dead``): a lazy comment pattern stretched
            # over every later ``*/`` of a header of documented declarations
            lambda text: dead_definitions({"k.h": text.encode()}),
            lambda n: "f(int a) /* x */ ;" * (n // 18),
            lambda n: "/** Returns the thing. */\nint get_thing(int a);\n" * (n // 48),
        ),
        "kernel stubs": (
            # whether a branch or a function body computes anything (``kernels.stubs``): an
            # unclosed literal or call, a long run of spaces after ``return``, were quadratic
            lambda text: holds_code(text.encode()),
            lambda n: 'return "\\' + '"\\' * (n // 4) + " printf(" * (n // 16) + " " * (n // 4),
            lambda n: '#pragma message("x")\n(void)a; printf("y");\nreturn   0.f ;\n' * (n // 48),
        ),
        "verify series": (
            extract_default,
            # a line of n/16 bytes (128 KB: 8 KB, 1 MB: 64 KB, the longest line it reads): 2,048
            # lines of 1 KB took over 100 s once (a label tried from every position of a line)
            lambda n: "a b c " * (n // 96) + "x: 1\n",
            lambda n: "step 1/10 loss: 0.5 lr=3e-4 tokens/s: 1234\n" * (n // 44),
        ),
        "verify output": (
            lambda text: list(pairs(text)),
            lambda n: "loss " + "1.0 " * (n // 4) + "\n",
            lambda n: "step 1 loss 2.345 lr 0.001\n" * (n // 27),
        ),
    }


PARSERS = (
    "requirements",
    "toml scanner",
    "toml",
    "shell lexer",
    "dockerfile images",
    "yaml",
    "notebook",
    "cuda",
    "kernel definitions",
    "kernel stubs",
    "verify series",
    "verify output",
)


def _forget_texts() -> None:
    """Empty the caches that keep the last few texts' lexemes (a repeated text would be
    looked up, not lexed)."""
    from migrator.rules import _shell

    from migrator.syntax import shell_lex

    shell_lex._lexemes.cache_clear()
    _shell._segments.cache_clear()
    _shell._pip_requirements.cache_clear()


def _seconds(parse: Callable[[str], object], text: str) -> float:
    """CPU seconds of one parse (the process's own: a busy machine delays it, it does not add
    to it), with the cyclic garbage collector paused: its passes over whatever else the process
    holds are not the parser's work. Raises OverBudget after ``BUDGET`` seconds."""
    _forget_texts()
    gc.collect()
    gc.disable()
    signal.alarm(BUDGET)
    try:
        started = time.process_time()
        parse(text)
        return time.process_time() - started
    finally:
        signal.alarm(0)
        gc.enable()


def measure(parse: Callable[[str], object], inputs: Inputs) -> dict[str, object]:
    """The least time of each size over the attempts made, and their ratio."""
    small, large = inputs(SMALL), inputs(LARGE)
    best_small = best_large = float("inf")
    try:
        for _ in range(ATTEMPTS):
            # the small input twice: a first run can pay for warming caches
            best_small = min(best_small, _seconds(parse, small), _seconds(parse, small))
            best_large = min(best_large, _seconds(parse, large))
            if best_large / max(best_small, FLOOR) <= RATIO_BOUND:
                break
    except OverBudget:
        return {"small": best_small, "large": "over budget", "ratio": "over budget"}
    ratio = best_large / max(best_small, FLOOR)
    return {"small": round(best_small, 4), "large": round(best_large, 4), "ratio": round(ratio, 2)}


def main(names: list[str]) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    parsers = _parsers()
    results: dict[str, dict[str, object]] = {}
    for name in names or PARSERS:
        parse, line, lines = parsers[name]
        results[name] = {"line": measure(parse, line), "lines": measure(parse, lines)}
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
