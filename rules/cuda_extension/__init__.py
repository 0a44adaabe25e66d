"""ROC60x: CUDA C++ extensions and CUDA source kept in Python strings (category
``cuda-extension``).

One rule per module; what the rules share is in ``_shared.py``.
"""
