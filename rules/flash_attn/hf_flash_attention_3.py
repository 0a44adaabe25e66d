"""ROC404: transformers' ``attn_implementation="flash_attention_3"``."""

from __future__ import annotations

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from ._hf_attn_implementation import _HfAttnImplementation


class HfFlashAttention3(_HfAttnImplementation):
    """
    ## What it does
    Flags transformers' `attn_implementation="flash_attention_3"` wherever ROC403 looks for
    `"flash_attention_2"`.

    ## Why it breaks on ROCm
    FlashAttention-3 targets Hopper GPUs (H100/H800, CUDA ≥ 12.3); there is no ROCm build, so
    model loading fails on AMD GPUs.

    ## Example
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_3")
    ```

    ## Fix
    ```python
    from transformers.utils import is_flash_attn_3_available

    model = AutoModelForCausalLM.from_pretrained(
        name,
        attn_implementation="flash_attention_3" if is_flash_attn_3_available() else "sdpa",
    )
    ```

    ## Fix safety
    Unsafe: Hopper machines with FlashAttention-3 installed keep it, but the probe
    `is_flash_attn_3_available` is only in recent transformers (assumed ≥ 4.53, the release
    that added FlashAttention-3; not verified), so check the project's transformers floor. Not
    offered for user-selected backends or packed sequences (see ROC403).

    ## Known problems
    Test files are not checked (see ROC403): a test that asks for FlashAttention-3 exercises that
    path on purpose.

    ## References
    - Dao-AILab/flash-attention README (FlashAttention-3 requirements)
    """

    code = "ROC404"
    name = "hf-flash-attention-3"
    category = "flash-attn"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.1)
    message = "`flash_attention_3` is Hopper-only (no ROCm build); transformers raises on AMD GPUs"
    fix = Fixing(
        title='Keep FlashAttention-3 where installed, else attn_implementation="sdpa"',
        applicability=Applicability.UNSAFE,
    )
    fact = "§4c; [F2]"
    parsing = Parsing(triggers=("flash_attention_3",))
    values_key = "fa3"
    valid = [
        Valid('model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_2")\n'),
        Valid('assert config._attn_implementation != "flash_attention_3"\n'),
        Valid('# attn_implementation="flash_attention_3"\nx = 1\n'),
        Valid(
            "def test_canonical_value(cfg):\n"
            '    cfg = cfg | dict(attn_implementation="flash_attention_3")\n',
            path="tests/test_attn_implementation.py",
        ),
    ]
    invalid = [
        Invalid(
            "from transformers import AutoModel\n"
            'model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_3")\n',
            fixed=(
                "from transformers import AutoModel\n"
                "from transformers.utils import is_flash_attn_3_available\n\n"
                'model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_3" '
                'if is_flash_attn_3_available() else "sdpa")\n'
            ),
        ),
        Invalid(
            "def load(name, attn_implementation='flash_attention_3'):\n    pass\n",
            fixed=(
                "import importlib.util\n\n"
                "def load(name, attn_implementation='flash_attention_3' if "
                "importlib.util.find_spec(\"flash_attn_3\") is not None else 'sdpa'):\n    pass\n"
            ),
        ),
    ]
