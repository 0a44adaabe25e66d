"""Reachability helpers for rules: whether a node is caught with a fallback or guarded for a
vendor (``guard_conditions`` names the kinds of guard), CUDA-only toolkits, and which
preprocessor branches of a kernel source an AMD build compiles."""

from migrator.kernels.build_gates import cuda_build_branches
from migrator.kernels.differential import READER as DIFFERENTIAL_READER
from migrator.kernels.differential import arch_names, empty_on_amd
from migrator.kernels.preproc import dead_on_amd, has_rocm_branch
from migrator.reach import guard_conditions
from migrator.reach.cuda_only import CUDA_ONLY_PROBLEM, toolkit_of, toolkits
from migrator.reach.guards import caught_with_fallback, falls_back

__all__ = [
    "CUDA_ONLY_PROBLEM",
    "DIFFERENTIAL_READER",
    "arch_names",
    "caught_with_fallback",
    "cuda_build_branches",
    "dead_on_amd",
    "empty_on_amd",
    "falls_back",
    "guard_conditions",
    "has_rocm_branch",
    "toolkit_of",
    "toolkits",
]
