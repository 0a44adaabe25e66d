"""Scan output formats (``migrate scan --format``): findings as text, JSON, SARIF or GitHub annotations.

The readiness report (score, verdict, effort; ``migrate report``) lives in ``migrator.reporting``.
"""
