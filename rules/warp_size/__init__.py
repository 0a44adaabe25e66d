"""ROC30x: warp size 32 hard-coded in Python launch math, Triton code and CUDA source strings
(CDNA GPUs run 64-lane wavefronts).

One rule per module.
"""
