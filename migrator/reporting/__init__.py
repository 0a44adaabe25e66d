"""The readiness report (``migrate report``): computed in ``readiness``, rendered as HTML, Markdown or JSON.

Scan output formats (findings as text, JSON, SARIF, annotations) live in ``migrator.output``.
"""
