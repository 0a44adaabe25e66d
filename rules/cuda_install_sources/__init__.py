"""ROC815-ROC817: CUDA software installed from a direct source rather than a package name: a
wheel URL of a CUDA build, a `git+` install of NVIDIA's apex, conda's `nvidia` channel
(category ``dependency``).

One rule per module; what the rules share is in ``_shared.py``.
"""
