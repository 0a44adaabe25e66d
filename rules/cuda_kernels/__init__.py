"""ROC31x-ROC35x: what blocks a CUDA C++ source on ROCm after PyTorch's hipify: inline PTX,
tensor-core and Hopper-only code, CUTLASS/CuTe, CUDA-only headers, shared memory above AMD's
limit. They read `.cu`/`.cuh`/C++ files through ``migrator.engine.rule.KernelRule``.

One rule per module; what the rules share is in ``_shared.py``.
"""
