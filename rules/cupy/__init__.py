"""ROC53x: CuPy APIs that a ROCm build of CuPy (``cupy-rocm-*``) does not provide.

One rule per module."""
