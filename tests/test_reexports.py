"""Names re-exported through a project's own modules resolve like direct imports, for every
rule; the index is plain data, and a warm scan sees a change to the re-exporting module."""

from __future__ import annotations

from migrator.syntax.reexports import ProjectIndex, module_name
from tests.conftest import write

NVML = "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n"
UTILS = "from flash_attn import flash_attn_func\nfrom ..nvml import pynvml as nv\n"
MODEL = (
    "from .utils import flash_attn_func\n\n\n"
    "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
)
TELEMETRY = (
    "from mypkg.nvml import pynvml as N\n\n\n"
    "def name(h):\n    N.nvmlInit()\n    return N.nvmlDeviceGetName(h)\n"
)
LOCAL = "from .helpers import flash_attn_func\n\nflash_attn_func(q, k, v)\n"
HELPERS = "def flash_attn_func(q, k, v):\n    return q\n"


def _project(root):
    write(root, "mypkg/__init__.py", "")
    write(root, "mypkg/sub/__init__.py", "")
    write(root, "mypkg/nvml.py", NVML)
    write(root, "mypkg/sub/utils.py", UTILS)
    write(root, "mypkg/sub/model.py", MODEL)
    write(root, "mypkg/telemetry.py", TELEMETRY)
    write(root, "mypkg/sub/local.py", LOCAL)
    write(root, "mypkg/sub/helpers.py", HELPERS)


def _sites(report: dict) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["rule"]) for f in report["findings"]}


def test_reexported_names_resolve_for_every_rule(tmp_path, scan_json):
    _project(tmp_path)
    report = scan_json("--no-cache", str(tmp_path))
    sites = _sites(report)
    assert ("mypkg/sub/model.py", 5, "ROC400") in sites  # flash_attn_func via .utils
    assert ("mypkg/telemetry.py", 5, "ROC201") in sites  # nvmlInit via mypkg.nvml
    # the query after the unguarded init (ROC202) is a related site of the init's finding
    [init] = [f for f in report["findings"] if f["rule"] == "ROC201"]
    assert [site["line"] for site in init["related"]] == [6]
    # a project's own function of the same name stays the project's
    assert not any(path == "mypkg/sub/local.py" for path, _, _ in sites)


def test_warm_scan_follows_a_change_to_the_reexporting_module(tmp_path, scan_json):
    _project(tmp_path)
    assert ("mypkg/telemetry.py", 5, "ROC201") in _sites(scan_json(str(tmp_path)))
    write(tmp_path, "mypkg/nvml.py", "pynvml = None\n")  # telemetry.py itself is unchanged
    assert not any(path == "mypkg/telemetry.py" for path, _, _ in _sites(scan_json(str(tmp_path))))


def test_module_names_and_index():
    packages = {"src/mypkg", "src/mypkg/sub"}
    assert module_name("src/mypkg/sub/model.py", packages) == "mypkg.sub.model"
    assert module_name("src/mypkg/__init__.py", packages) == "mypkg"
    assert module_name("scripts/train.py", packages) == "train"
    index = ProjectIndex.build(
        [
            ("src/mypkg/__init__.py", ""),
            ("src/mypkg/sub/__init__.py", ""),
            ("src/mypkg/nvml.py", NVML),
            ("src/mypkg/sub/utils.py", UTILS),
            ("src/mypkg/sub/model.py", MODEL),
        ]
    )
    assert index.external("mypkg.nvml") == {"pynvml": "pynvml"}
    assert index.external("mypkg.sub.utils") == {
        "flash_attn_func": "flash_attn.flash_attn_func",
        "nv": "pynvml",
    }
    # a re-export of a re-export
    assert index.external("mypkg.sub.model") == {"flash_attn_func": "flash_attn.flash_attn_func"}
    view = index.slice_for("src/mypkg/sub/model.py")
    assert view is not None and view.module == "mypkg.sub.model"
    # only the names the file imports travel with it
    assert dict(view.exports) == {
        "mypkg.sub.utils": {"flash_attn_func": "flash_attn.flash_attn_func"}
    }


def test_released_texts_are_restored_whole():
    """The runner drops the index's texts while its workers run and reads them back: the
    restored index answers as the one built (its texts, and what it computes from them)."""
    files = [
        ("src/mypkg/__init__.py", "from .nvml import pynvml\n"),
        ("src/mypkg/sub/__init__.py", ""),
        ("src/mypkg/nvml.py", NVML),
        ("src/mypkg/sub/utils.py", UTILS),
        ("src/mypkg/sub/model.py", MODEL),
        ("scripts/train.py", "import mypkg.sub.model as m\nm.flash_attn_func()\n"),
    ]
    built = ProjectIndex.build(files)
    index = ProjectIndex.build(files)
    index.release_texts()
    assert set(index.sources) == set(built.sources)
    assert not any(index.sources.values())
    assert not any(text for text, _ in index._files.values())
    index.restore_texts(dict(files))
    assert index.sources == built.sources
    assert index._texts == built._texts
    assert index._files == built._files
    for name in built.modules:
        assert index.external(name) == built.external(name)
    for relative, _ in files:
        assert index.slice_for(relative) == built.slice_for(relative)


def test_import_lines_are_cut_from_the_text_with_their_continuations():
    from migrator.syntax.reexports import _import_lines

    text = (
        "import a\n"
        "x = 1  # import nothing\n"
        "from b import (\n"
        "    c,  # import\n"
        "    d,\n"
        ")\n"
        "import e; import f\n"
        "    from g import h\n"
        "from i import \\\n"
        "    j as k\n"
        'print("import")\n'
        "import last"
    )
    assert list(_import_lines(text)) == [
        (1, True, "import a"),
        (3, True, "from b import ( c, d, )"),
        (7, True, "import e"),
        (7, True, "import f"),
        (8, False, "from g import h"),
        (9, True, "from i import j as k"),
        (12, True, "import last"),
    ]
    assert list(_import_lines("from x import (a,\n")) == [(1, True, "from x import (a,")]
