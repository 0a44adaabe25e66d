"""Größen und Namen: non-ASCII text before the trigger on the same line."""

import torch

ÄNDERUNG = "größe"; torch.backends.cudnn.allow_tf32 = True


def données(x):
    café = "naïve"; torch.backends.cuda.matmul.allow_tf32 = x
    return café


def unrelated(values):
    return [value * 2 for value in values]
