"""ROC102: ``torch.version.cuda`` treated as a string or number where ROCm can reach it."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from ._cuda_version import _version_analysis


class CudaVersionParsed(PythonRule):
    """
    ## What it does
    Flags code that treats `torch.version.cuda` as a string or number: `float(...)`, `int(...)`,
    `.split('.')`, `version.parse(...)`, indexing, arithmetic and ordering comparisons
    (`torch.version.cuda >= "11.8"`), also of a lookup that returns it as its default
    (`os.environ.get("CUDA_VERSION", torch.version.cuda).split(".")`), that a guard in the same
    file does not keep from running on ROCm, and `assert torch.version.cuda is not None` (reported at the assert, which is what
    fails; the parse after it is never reached).

    ## Why it breaks on ROCm
    `torch.version.cuda` is `None` on ROCm builds, so every one of these raises `TypeError` or
    `AttributeError`, often at import time.

    ## Example
    ```python
    major, minor = torch.version.cuda.split(".")[:2]
    ```

    ## Manual migration
    Branch on the build first and read the HIP version on ROCm:
    ```python
    if torch.version.hip:
        major, minor = torch.version.hip.split(".")[:2]   # ROCm/HIP version, not comparable to CUDA
    else:
        major, minor = torch.version.cuda.split(".")[:2]
    ```
    Or ask whether the feature exists instead of comparing toolkit versions.

    ## Known problems
    Guards are recognised within a file (`if torch.version.cuda:`, `if torch.version.hip: ...
    else:`, `and` chains, early returns, `try/except TypeError`); a caller that guards a helper in
    another function or module is not seen.

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC102"
    name = "cuda-version-parsed"
    category = "cuda-version"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.5)
    message = "`torch.version.cuda` is None on ROCm builds: parsing it raises"
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parsing = Parsing(
        triggers=("version.cuda", "torch.version", "torch import version"), scope="names"
    )
    valid = [
        Valid(
            "import torch\nif torch.version.cuda:\n"
            "    major = int(torch.version.cuda.split('.')[0])\n"
        ),
        Valid(
            "import torch\nif torch.version.hip:\n    v = torch.version.hip\n"
            "else:\n    v = float(torch.version.cuda)\n"
        ),
        Valid(
            "import torch\ndef f():\n    if torch.version.cuda is None:\n        return None\n"
            "    return torch.version.cuda.split('.')\n"
        ),
        Valid("import torch\nprint('CUDA %s' % torch.version.cuda, f'{torch.version.cuda}')\n"),
        Valid("def float(x):\n    return x\nversion = float('12.1')\n"),
        Valid("import torch\nlabel = str(torch.version.cuda).startswith('12')\n"),
        Valid(  # a lookup with the version as its key, or a default that is not the version
            "import os\nimport torch\nv = os.environ.get('CUDA_VERSION', '12.1').split('.')\n"
            "w = {}.get(torch.version.cuda, '').split('.')\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nmajor, minor = torch.version.cuda.split('.')[:2]\n",
            line=2,
            column=16,
        ),
        Invalid(
            "import torch as tt\nif float(tt.version.cuda) >= 11.8:\n    pass\n", line=2, column=4
        ),
        Invalid(
            "from packaging import version\nimport torch\n"
            "NEW = version.parse(torch.version.cuda) >= version.parse('12.0')\n"
        ),
        Invalid("from torch.version import cuda\nok = cuda >= '11.0'\n"),
        Invalid(
            "import torch\ndef f():\n    cv = torch.version.cuda\n    return int(cv[:2])\n",
            line=4,
        ),
        Invalid(  # the assert that guards the parse is what fails on ROCm: one finding, there
            "import torch\ndef test_gen():\n    cv = torch.version.cuda\n"
            "    assert cv is not None\n    major = int(cv.split('.')[0])\n",
            line=4,
            column=5,
        ),
        Invalid(  # the lookup returns its default, the version, where the variable is unset
            "import os\nimport torch\ndefault = torch.version.cuda\n"
            "digits = ''.join(os.environ.get('CUDA_VERSION', default).split('.'))\n",
            line=4,
            column=18,
        ),
        Invalid(  # str() of None is "None": the split works, the int() after it raises
            "import torch\nmajor = int(str(torch.version.cuda).split('.')[0])\n",
            line=2,
            column=13,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        for parse in _version_analysis(self.ctx).parses:
            self.report(
                parse.node,
                message=f"`torch.version.cuda` is None on ROCm builds: {parse.what}",
            )
