"""Every parser of untrusted text takes time linear in its input, on a long line and on many
lines (``tests/linear_inputs.py`` says what each reads): 8 times the input (128 KB to 1 MB) may
take at most ``RATIO_BOUND`` (about 23) times as long; a quadratic parser takes about 64 times.
The check compares the parser with itself at two sizes, so it holds on a slow or busy machine and
needs no absolute time. It found the requirements reader copying the rest of the file once per
line (pip-compile annotations) and PyYAML's composer overflowing the stack on deeply nested flow
sequences. The CPU times it measures are printed for a person to read, never compared with a
fixed number."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.linear_inputs import BUDGET, PARSERS, RATIO_BOUND

#: One worker runs every parser in one subprocess (the fixture below), not one each.
pytestmark = pytest.mark.xdist_group("test_linear_parsers")


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, dict[str, object]]]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "linear_inputs.py"), *PARSERS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=4 * len(PARSERS) * BUDGET,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results: dict[str, dict[str, dict[str, object]]] = json.loads(done.stdout)
    return results


@pytest.mark.parametrize("name", PARSERS)
def test_parser_is_linear_on_a_long_line_and_on_many_lines(name: str, measured) -> None:
    results = measured[name]
    print(name, results)
    assert set(results) == {"line", "lines"}
    for shape, result in results.items():
        assert result["large"] != "over budget", (shape, result)
        ratio = result["ratio"]
        assert isinstance(ratio, float) and ratio <= RATIO_BOUND, (shape, result)
