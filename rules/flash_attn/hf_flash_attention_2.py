"""ROC403: transformers' ``attn_implementation="flash_attention_2"`` and ``use_flash_attention_2``."""

from __future__ import annotations

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from ._hf_attn_implementation import _HfAttnImplementation


class HfFlashAttention2(_HfAttnImplementation):
    """
    ## What it does
    Flags transformers' `attn_implementation="flash_attention_2"` (as a call keyword, in a config
    dict, in an assignment to an `attn_implementation` variable/attribute/key, as a parameter
    default, in either branch of `"flash_attention_2" if cond else "eager"`) and
    `use_flash_attention_2=True` on `from_pretrained`/`from_config`.

    ## Why it breaks on ROCm
    transformers loads FlashAttention-2 from the `flash_attn` package, which on ROCm exists only
    as a source build of ROCm/flash-attention; without it model loading raises `ImportError`.
    `"sdpa"` uses PyTorch's scaled_dot_product_attention, which runs the AOTriton flash kernels
    on ROCm with no extra package.

    ## Example
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
    ```

    ## Fix
    ```python
    from transformers.utils import is_flash_attn_2_available

    model = AutoModelForCausalLM.from_pretrained(
        name,
        attn_implementation="flash_attention_2" if is_flash_attn_2_available() else "sdpa",
    )
    ```
    `use_flash_attention_2=True` becomes the same `attn_implementation=` dispatch (the old flag
    was deprecated in transformers 4.x and is gone in 5.x).

    ## Fix safety
    Safe: where `flash_attn` is installed (every NVIDIA setup that ran this code before)
    `is_flash_attn_2_available()` is true and the model keeps FlashAttention-2; elsewhere
    transformers uses `"sdpa"`, which computes the same attention and runs AOTriton kernels on
    ROCm. Only the literal string is replaced, so quotes and comments stay. No fix where the
    choice is the user's (the literal sits under `if args.use_flash_attn:` or another test naming
    flash), where the file packs sequences (padding-free batches, multipack: they rely on
    FlashAttention's variable-length path, and SDPA would attend across the packed sequences), or
    where the file compares a value against `"flash_attention_2"` (rewriting one side would
    change which branch runs). Needs transformers ≥ 4.36 (`attn_implementation`).

    ## Known problems
    Older transformers releases handled padding-free packed batches (`position_ids` restarting
    inside a row, `DataCollatorWithFlattening`) only in the FlashAttention-2 path; check such
    training setups after switching. Test files (`tests/`, `test_*.py`, `*_test.py`,
    `conftest.py`) are not checked: a test that asks for FlashAttention-2 exercises the project's
    own FlashAttention path on purpose, and what it needs on ROCm is the `flash_attn` dependency,
    reported where the project declares it.

    ## References
    - https://huggingface.co/docs/transformers/perf_infer_gpu_one
    - https://huggingface.co/docs/optimum/amd/amdgpu/overview
    """

    code = "ROC403"
    name = "hf-flash-attention-2"
    category = "flash-attn"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.1)
    message = "`flash_attention_2` needs ROCm/flash-attention; transformers raises without it"
    fix = Fixing(
        title='Keep FlashAttention-2 where installed, else attn_implementation="sdpa"',
        applicability=Applicability.SAFE,
    )
    fact = "§4c; [X1][X2][V]"
    parsing = Parsing(triggers=("flash_attention_2",))
    values_key = "fa2"
    valid = [
        Valid('model = AutoModel.from_pretrained(name, attn_implementation="sdpa")\n'),
        Valid(
            "from transformers.utils import is_flash_attn_2_available\n"
            'impl = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"\n'
        ),
        Valid('if model.config._attn_implementation == "flash_attention_2":\n    pass\n'),
        Valid(
            '"""Pass attn_implementation="flash_attention_2" for speed."""\n'
            'CHOICES = ["eager", "flash_attention_2"]\n'
        ),
        Valid(
            "from llmfoundry import ComposerHFCausalLM\n"
            "m = ComposerHFCausalLM(use_flash_attention_2=True)\n"
        ),
        Valid(
            "from transformers import AutoModelForCausalLM\n"
            "def test_fa2_matches_eager(name):\n"
            "    cfg._attn_implementation = 'flash_attention_2'\n"
            "    m = AutoModelForCausalLM.from_pretrained(name, attn_implementation='flash_attention_2')\n",
            path="tests/models/test_attention.py",
        ),
        Valid(  # an availability probe chooses it: without flash_attn the eager path runs
            'attn_impl = "flash_attention_2" if HAS_FLASH_ATTN and on_gpu else "eager"  # fast\n'
            "model = AutoModelForCausalLM.from_config(config, attn_implementation=attn_impl)\n"
        ),
        Valid(  # the user's switch, forced off where the guarded import failed
            "try:\n"
            "    import flash_attn\n"
            "    has_flash_attn = True\n"
            "except ImportError:\n"
            "    has_flash_attn = False\n"
            "class Chat:\n"
            "    def __init__(self, config, use_flash_attn=True):\n"
            "        use_flash_attn = use_flash_attn if has_flash_attn else False\n"
            "        config._attn_implementation = (\n"
            "            'flash_attention_2' if use_flash_attn else 'eager'\n"
            "        )\n"
        ),
    ]
    invalid = [
        Invalid(
            "from transformers import AutoModelForCausalLM\n"
            "m = AutoModelForCausalLM.from_pretrained(\n"
            "    name, attn_implementation='flash_attention_2')\n",
            fixed=(
                "from transformers import AutoModelForCausalLM\n"
                "from transformers.utils import is_flash_attn_2_available\n\n"
                "m = AutoModelForCausalLM.from_pretrained(\n"
                "    name, attn_implementation='flash_attention_2' if is_flash_attn_2_available() "
                "else 'sdpa')\n"
            ),
            line=3,
            column=31,
        ),
        Invalid(  # transformers is not imported at module level: importlib asks instead
            'model_kwargs = {"attn_implementation": "flash_attention_2"}\n'
            'model_kwargs["attn_implementation"] = "flash_attention_2"\n',
            fixed=(
                "import importlib.util\n\n"
                'model_kwargs = {"attn_implementation": "flash_attention_2" if '
                'importlib.util.find_spec("flash_attn") is not None else "sdpa"}\n'
                'model_kwargs["attn_implementation"] = "flash_attention_2" if '
                'importlib.util.find_spec("flash_attn") is not None else "sdpa"\n'
            ),
            count=1,
        ),
        Invalid(
            "import transformers as tf\n"
            "m = tf.AutoModel.from_pretrained(\n"
            "    name,\n"
            "    use_flash_attention_2=True,  # speed\n"
            ")\n",
            fixed=(
                "import transformers as tf\n"
                "from transformers.utils import is_flash_attn_2_available\n\n"
                "m = tf.AutoModel.from_pretrained(\n"
                "    name,\n"
                '    attn_implementation="flash_attention_2" if is_flash_attn_2_available() '
                'else "sdpa",  # speed\n'
                ")\n"
            ),
        ),
        Invalid(
            'impl = "flash_attention_2"\n'
            'cfg.attn_implementation = "flash_attention_2"\n'
            'if cfg.attn_implementation == "flash_attention_2":\n'
            "    pass\n",
            fixed=None,
            line=2,
        ),
        Invalid(  # the user asked for FlashAttention: left alone, reported
            "if args.use_flash_attn:\n"
            '    model_kwargs["attn_implementation"] = "flash_attention_2"\n',
            fixed=None,
            line=2,
        ),
        Invalid(  # packed sequences need FlashAttention's varlen path
            "from transformers import DataCollatorWithFlattening\n"
            'model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n',
            fixed=None,
            line=2,
        ),
    ]
