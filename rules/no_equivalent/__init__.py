"""ROC90x: imports of NVIDIA-only packages that have no ROCm build (TensorRT, PyCUDA,
cuda-python, numba.cuda, DALI). The packages are the ``imports`` section of the
package table (``packages()``).

One rule per module; what the rules share is in ``_shared.py``.
"""
