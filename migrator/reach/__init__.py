"""Whether code runs on a ROCm build: vendor guards in Python, text and CI files, callers that
dispatch per vendor, CUDA-only modules and their users, and the project's own ROCm variants.
The one home for reachability; rules ask it through the rule API."""
