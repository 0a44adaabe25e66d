"""`migrate fix` on a notebook changes the rewritten cells' lines and nothing else of the file:
a layout the editor wrote (``"cells": [{`` on one line, four-space indents, a string source,
escaped non-ASCII) is kept, so the diff holds the fix only (found on coqui-ai/TTS's notebooks)."""

from __future__ import annotations

import json
import subprocess
import sys

from migrator.files.notebook_text import splice_sources

NOTEBOOK = """{
    "cells": [{
            "cell_type": "markdown",
            "metadata": {"Collapsed": "false"},
            "source": ["caf\\u00e9 notes\\n", "more"]
        }, {
            "cell_type": "code",
            "execution_count": null,
            "metadata": {},
            "outputs": [],
            "source": [
                "import os\\n",
                "os.environ['CUDA_VISIBLE_DEVICES']='1'\\n",
                "print('d\\u00e9j\\u00e0')"
            ]
        }, {
            "cell_type": "code", "metadata": {}, "outputs": [],
            "source": "import os\\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\\n"
        }],
    "metadata": {"kernelspec": {"name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 4
}
"""


def _fix(tmp_path, text):
    path = tmp_path / "nb.ipynb"
    path.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "migrator", "fix", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return path.read_text(encoding="utf-8")


def test_fix_keeps_the_notebook_layout_outside_the_rewritten_lines(tmp_path):
    after = _fix(tmp_path, NOTEBOOK)
    added = [line for line in after.splitlines() if line not in NOTEBOOK.splitlines()]
    assert added == [
        "                \"os.environ['HIP_VISIBLE_DEVICES'] = os.environ['CUDA_VISIBLE_DEVICES']\\n\",",
        "            \"source\": \"import os\\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\\n"
        "os.environ['HIP_VISIBLE_DEVICES'] = os.environ['CUDA_VISIBLE_DEVICES']\\n\"",
    ]
    removed = [line for line in NOTEBOOK.splitlines() if line not in after.splitlines()]
    assert removed == [
        "            \"source\": \"import os\\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\\n\""
    ]
    document = json.loads(after)
    assert document["cells"][0] == json.loads(NOTEBOOK)["cells"][0]
    assert "d\\u00e9j\\u00e0" in after  # the escapes the editor wrote


def test_a_text_that_cannot_be_spliced_is_left_to_the_whole_document_writer():
    assert splice_sources('{"cells": 3}', {0: "x"}) is None
    assert splice_sources("not json", {0: "x"}) is None
    assert splice_sources('{"cells": [{"source": []}]}', {0: "a\nb"}) == (
        '{"cells": [{"source": ["a\\n","b"]}]}'
    )
