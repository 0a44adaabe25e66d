"""Runs one parser of untrusted text (``python tests/linear_inputs.py NAME BUDGET``) on a 1 MB
line and on about 10 MB of input, each under an alarm of ``BUDGET`` seconds, and prints a JSON
object: input -> seconds taken, or ``"over budget"``. Run in a subprocess by
``tests/test_linear_parsers.py``; the budget catches quadratic work (a 1 MB line is 10^12 steps
for it), not speed: linear parsers take a few seconds at most."""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable

MB = 1 << 20


class OverBudget(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise OverBudget


def _parsers() -> dict[str, tuple[Callable[[str], object], str, str]]:
    """name -> (parse, a 1 MB line, about 10 MB of lines) for every reader of scanned text."""
    from migrator.rules._dependency_files import requirements_file
    from migrator.rules._toml_scanner import scan_toml
    from migrator.rules.containers._images import image_refs

    from migrator.engine.engine import FailFile, _validate_structure
    from migrator.files.sources import notebook_cells
    from migrator.files.tomlcompat import parse_toml, tomllib
    from migrator.kernels import preproc
    from migrator.kernels.source import parse as parse_cuda
    from migrator.syntax.shell_lex import lex
    from migrator.verify.series import pairs

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
        return preproc.regions(source)

    lines = 10 * MB
    return {
        "requirements": (
            requirements_file,
            "flash-attn" + "[x]" * (MB // 3) + "\n",
            "flash-attn==2.5.8\n    # via torch\n" * (lines // 33),
        ),
        "toml scanner": (
            tolerant(scan_toml),
            'a = "' + "b" * MB + '"\n',
            "".join(f'k{i} = ["torch==2.1", {{x = 1}}]\n' for i in range(lines // 36)),
        ),
        "toml": (
            tolerant(parse_toml),
            "a = [" + "1," * (MB // 2) + "]\n",
            "".join(f'k{i} = "torch==2.1"\n' for i in range(lines // 20)),
        ),
        "shell lexer": (
            lambda text: list(lex(text)),
            "echo " + "'a' \"b\" $(c) " * (MB // 14) + "\n",
            "export CUDA_VISIBLE_DEVICES=0 && pip install 'torch==2.1' \\\n  x\n" * (lines // 64),
        ),
        "dockerfile images": (
            lambda text: list(image_refs(text, "dockerfile")),
            "FROM " + "a" * MB + "\n",
            "FROM \\\n  nvidia/cuda:12.1.1-devel AS b\nRUN pip install x\n" * (lines // 52),
        ),
        "yaml": (
            tolerant(lambda text: _validate_structure(text, "ci-yaml")),
            "a: " + "[b, " * (MB // 4) + "\n",
            "- run: pip install torch\n  env: {A: 1}\n" * (lines // 38),
        ),
        "notebook": (
            tolerant(notebook_cells),
            '{"cells": [{"cell_type": "code", "source": "' + "x" * MB + '"}]}',
            '{"cells": ['
            + ",".join(['{"cell_type": "code", "source": ["import torch\\n"]}'] * (lines // 52))
            + "]}",
        ),
        "cuda": (
            cuda,
            "int x = " + "(" * 100 + "a + " * (MB // 4) + ")" * 100 + ";\n",
            "#if defined(USE_ROCM)\n__global__ void k(float* x) { x[0] = 1; }\n#endif\n"
            * (lines // 70),
        ),
        "verify output": (
            lambda text: list(pairs(text)),
            "loss " + "1.0 " * (MB // 4) + "\n",
            "step 1 loss 2.345 lr 0.001\n" * (lines // 27),
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
    "verify output",
)


def main(name: str, budget: int) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    parse, line, large = _parsers()[name]
    results: dict[str, object] = {}
    for label, text in (("1 MB line", line), ("10 MB", large)):
        started = time.perf_counter()
        signal.alarm(budget)
        try:
            parse(text)
            results[label] = round(time.perf_counter() - started, 2)
        except OverBudget:
            results[label] = "over budget"
        finally:
            signal.alarm(0)
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
