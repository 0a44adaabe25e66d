"""What is known about CUDA and ROCm, as data and pure functions: the facts document, package and
wheel-index tables, torch builds, version ranges, markers and the words that name a vendor."""
