"""Reads torch.version.hip through an alias of torch (no trigger on that line): the vendor
test of the CUDA version is then a dispatch, not a bug."""

import torch as t


def uses_cuda_build():
    return t.version.cuda is not None


def helper(x):
    return x + 1


def on_rocm():
    return t.version.hip is not None
