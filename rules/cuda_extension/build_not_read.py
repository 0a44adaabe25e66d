"""ROC610 (build-not-read): a part of an extension build that a static reading cannot see: a
source list computed by code it does not follow, kernel sources the build writes when it runs."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import GENERATED, UNREAD

from ._build_notes import BuildNoteRule


class BuildNotRead(BuildNoteRule):
    """
    ## What it does
    Flags an extension build whose sources `migrate` could not read: `sources=` computed by code
    the static reading does not follow (a function from outside the project, a generator it
    does not know), and kernel sources the build writes when it runs (`open("kernel.cu", "w")`
    in `setup.py`). Their kernels are not tied to the extension, so nothing said about the
    extension covers them.

    ## Why it breaks on ROCm
    It may not: the point is that nobody checked. What the reading cannot see keeps the verdict
    from "ready" until someone looks.

    ## Example
    ```python
    from torch.utils.cpp_extension import CUDAExtension
    from buildtools import discover_sources

    ext = CUDAExtension("ops", sources=discover_sources("csrc"))
    ```

    ## Manual migration
    List the sources (or check the kernels they name with `migrate kernels`), and read the
    generated kernel sources once they exist (run `migrate` on the build tree).

    ## Known problems
    The reading follows literals, joins from `__file__`, `glob`/`os.listdir`/`os.walk` with
    suffix filters, comprehensions, lists grown in branches and the project's own helper and
    wrapper functions; anything else is reported here.

    ## References
    - `docs/kernels.md` (what the build model reads)
    """

    code = "ROC610"
    name = "build-not-read"
    category = "cuda-extension"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", unknown=True, effort_hours=1.0)
    message = "a part of this extension build was not read: its kernels were not checked"
    fact = "§7 CUDAExtension row; [P9]"
    parsing = Parsing(triggers=("cpp_extension", "Extension"))
    note_kinds = frozenset({UNREAD, GENERATED})
    valid = [
        Valid(
            "import glob\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', sources=sorted(glob.glob('csrc/*.cu')))\n",
            path="setup.py",
        ),
        Valid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "def sources():\n    return ['csrc/a.cu', 'csrc/b.cpp']\n"
            "ext = CUDAExtension('ops', sources=sources())\n",
            path="setup.py",
        ),
    ]
    invalid = [
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "from buildtools import discover_sources\n"
            "ext = CUDAExtension('ops', sources=discover_sources('csrc'))\n",
            path="setup.py",
            line=3,
        ),
        Invalid(
            "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "with open('csrc/generated_kernel.cu', 'w') as out:\n    out.write(TEMPLATE)\n"
            "setup(ext_modules=[CUDAExtension('ops', ['csrc/generated_kernel.cu'])])\n",
            path="setup.py",
            line=3,
        ),
    ]
