"""``migrate kernels --run hip-on-nvidia``: build a CUDA extension and its hipified translation
through HIP's NVIDIA platform with nvcc, run both on one NVIDIA GPU and compare their outputs
(proves the translation, not AMD behaviour)."""
