"""CUDA C++ in scope: reading `.cu`/`.cuh`/C++ sources (a tree-sitter parse plus the
preprocessor's branches as HIP sees them), the extensions a project builds from them, what
PyTorch's hipify leaves untranslated, and the HIP compile check.

Rules about kernel constructs live in ``rules/`` like every other rule; this package is the
machinery they and the ``migrate kernels`` command share."""
