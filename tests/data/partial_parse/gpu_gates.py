"""Device gates whose values travel through module-level names, far from the query."""

import torch

CAPABILITY = torch.cuda.get_device_capability()
MAJOR = CAPABILITY[0]


def unrelated_helper(values):
    total = 0
    for value in values:
        total += value
    return total


class Kernel:
    def pick(self):
        if MAJOR >= 9:
            return "hopper"
        return "generic"


def unrelated_second(values):
    return [value * 2 for value in values]


def cuda_release():
    return float(torch.version.cuda)
