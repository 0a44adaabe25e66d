"""Hypothesis strategies that cost time to build, built where a test first draws from them."""

from __future__ import annotations

from hypothesis import strategies as st


def python_sources() -> st.SearchStrategy[str]:
    """hypothesmith's Python programs, from the grammar. Importing hypothesmith and compiling
    the grammar takes about a second of CPU; wrapped in ``st.deferred`` (``@given(source=
    st.deferred(python_sources))``) that is paid by the worker that runs the test, not by every
    worker at collection."""
    import hypothesmith

    return hypothesmith.from_grammar()
