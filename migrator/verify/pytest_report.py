"""Per-test outcomes from the JUnit XML report that ``--pytest`` runs write.

Outcomes: ``passed``, ``failed``, ``error``, ``skipped`` (pytest writes xfail as skipped with a
message starting ``xfail``: reported as ``xfailed``). Ids read ``tests/test_x.py::test_name``
when the class name is a dotted module path, else ``classname::name``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPORT_NAME = "pytest-report.xml"


def _test_id(classname: str, name: str) -> str:
    if not classname:
        return name
    parts = classname.split(".")
    # ``tests.test_model.TestX`` → ``tests/test_model.py::TestX``; keep the module boundary.
    for index in range(len(parts), 0, -1):
        if parts[index - 1].startswith("test"):
            module = "/".join(parts[:index]) + ".py"
            rest = parts[index:]
            return "::".join([module, *rest, name])
    return f"{classname}::{name}"


def read_outcomes(path: Path) -> tuple[dict[str, str] | None, str | None]:
    """``({test id: outcome}, None)``, or ``(None, reason)`` when there is no usable report."""
    if not path.is_file():
        return None, "pytest wrote no report (it did not start, or crashed before the end)"
    try:
        root = ElementTree.parse(path).getroot()
    except (ElementTree.ParseError, OSError) as error:
        return None, f"unreadable pytest report: {error}"
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        test_id = _test_id(case.get("classname", ""), case.get("name", "?"))
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                break
            if child.tag == "skipped":
                is_xfail = (child.get("type") or "") == "pytest.xfail" or (
                    child.get("message") or ""
                ).startswith("xfail")
                outcome = "xfailed" if is_xfail else "skipped"
        # A test that passed and then failed teardown appears twice; the worse outcome wins.
        if outcomes.get(test_id) in ("failed", "error"):
            continue
        outcomes[test_id] = outcome
    return outcomes, None
