"""ROC90x: imports of NVIDIA-only packages that have no ROCm build (TensorRT, PyCUDA,
cuda-python, numba.cuda, DALI), and modules written on a CUDA-only kernel toolkit (ROC902). The
packages are the ``imports`` section of the package table (``packages()``).

One rule per module; what ROC900 and ROC901 share is in ``_shared.py``.
"""
