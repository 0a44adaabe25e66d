"""ROC80x: declared Python dependencies that are CUDA-only or need a ROCm counterpart, one rule
per module.

Every rule reads requirements/constraints files, ``pyproject.toml`` (PEP 621, dependency
groups, uv/pdm lists, Poetry tables), ``setup.cfg``, conda environment files (the ``pip:``
subsection) and the string literals that reach ``setup(install_requires=..., extras_require=...)``
in ``setup.py``. The parsing lives in ``rules/_dependency_files`` and ``rules/_requirement_rule``;
the tables in ``data/packages.toml`` and ``data/torch_rocm.toml``.
"""
