"""Generated Python sources never crash the engine (hypothesmith), with every rule enabled."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from migrator.engine.engine import analyze
from migrator.engine.registry import all_rules
from migrator.files.sources import FailFile
from migrator.model import Applicability
from tests.strategies import python_sources

PREFIX = "import torch\nimport pynvml\nfrom flash_attn import flash_attn_func\n"


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=st.deferred(python_sources))
@example(source="\n\\\r\n")  # Python compiles it, libcst cannot read it (found on 3.10)
def test_engine_never_crashes_on_generated_python(source):
    for text in (source, PREFIX + source):
        try:
            compile(text, "gen.py", "exec")
        except (SyntaxError, ValueError):
            continue
        try:
            analysis = analyze(
                text, "gen.py", "python", all_rules(), fix=Applicability.UNSAFE, prefilter=False
            )
        except FailFile:
            # a file libcst itself cannot read (Python accepts a few such texts, e.g. a line
            # continuation right before the end of the file) is reported as not scanned, with
            # its reason: not a crash. Anything else the engine raises is.
            with pytest.raises(cst.ParserSyntaxError):
                cst.parse_module(text)
            continue
        if analysis.new_text is not None:
            compile(analysis.new_text, "gen.py", "exec")


CALLS = st.sampled_from(
    [
        "torch.cuda.amp.autocast()",
        "torch.version.cuda",
        "pynvml.nvmlInit()",
        "flash_attn_func(q, k, v, causal=True)",
        "torch.backends.cuda.sdp_kernel(enable_math=False)",
        "torch.cuda.get_device_capability() >= (8, 0)",
        "subprocess.run(['nvidia-smi'])",
        "os.environ['CUDA_VISIBLE_DEVICES']",
    ]
)


@settings(max_examples=80, deadline=None)
@given(st.lists(CALLS, min_size=1, max_size=6))
def test_fixes_of_mixed_cuda_code_compile_and_settle(calls):
    body = (
        "import os, subprocess\n"
        + PREFIX
        + "def f(q, k, v):\n"
        + "".join(f"    x = {c}\n" for c in calls)
    )
    first = analyze(body, "m.py", "python", all_rules(), fix=Applicability.UNSAFE)
    assert first.fix_error is None, first.fix_error
    if first.new_text is None:
        return
    compile(first.new_text, "m.py", "exec")
    second = analyze(first.new_text, "m.py", "python", all_rules(), fix=Applicability.UNSAFE)
    assert second.new_text is None, f"not idempotent:\n{first.new_text}\n---\n{second.new_text}"
