"""A test module: a gate assigned at module level is never read when nothing spells its name,
but an attribute of that spelling counts as a read (as the rule reads it)."""

import torch

major = torch.cuda.get_device_capability()[0]
is_sm80 = major == 8


def unrelated(value):
    return value + 1


def reads_the_flag(config):
    return config.is_sm80
