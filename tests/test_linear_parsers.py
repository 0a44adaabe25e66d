"""Every parser of untrusted text handles a 1 MB line and about 10 MB of input within a fixed
budget (``tests/linear_inputs.py`` says what each reads). The budget is a hang detector, not a
speed measurement: a linear parser takes a few seconds, a quadratic one hours. It found the
requirements reader copying the rest of the file once per line (pip-compile annotations) and
PyYAML's composer overflowing the stack on deeply nested flow sequences."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.linear_inputs import PARSERS

#: Seconds for one input; linear parsers take under 20 on this machine type.
BUDGET = 90


@pytest.mark.parametrize("name", PARSERS)
def test_parser_is_linear_on_long_lines_and_large_inputs(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "linear_inputs.py"), name, str(BUDGET)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=4 * BUDGET,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert set(results) == {"1 MB line", "10 MB"}
    assert all(isinstance(seconds, float) for seconds in results.values()), results
