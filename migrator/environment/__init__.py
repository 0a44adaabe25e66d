"""An installed Python environment read from its files, never run: where its site-packages are,
which distribution provides each import name, and whether a distribution's native code is a CUDA
build, a ROCm build, CPU-only or absent (ELF dynamic sections and sections read with pyelftools,
requirements, device-code files), within size caps and without leaving the environment."""
