"""ROC86x: containers and launch scripts built for NVIDIA GPUs, one rule per module.

Base images (`nvidia/cuda`, NGC), GPU access flags of `docker run` (`--gpus`,
`--runtime=nvidia`), GPU reservations in compose files, CUDA apt packages, and `pip install`
commands that fetch CUDA builds, in Dockerfiles, compose files, shell scripts, Makefiles, CI
files, Cog's ``cog.yaml`` and command strings in Python code. Image tables:
``data/images.toml``; PyTorch/ROCm pairs: ``data/torch_rocm.toml``.
"""
