"""A module with a match statement (its cases are kept whole around a trigger)."""

import torch


def route(kind):
    import torch.backends.cudnn as cudnn

    match kind:
        case "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
        case "cudnn":
            cudnn.allow_tf32 = True
        case _:
            pass


def unrelated(values):
    return [value * 2 for value in values]
