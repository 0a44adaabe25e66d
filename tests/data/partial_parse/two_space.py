# A utility module indented with two spaces in its first function, four later (the first
# indented line decides the indentation libcst infers for the whole file).
import torch


def first(x):
  return x + 1


def amp_step(model, batch):
    scaler = torch.cuda.amp.GradScaler()
    with torch.autocast("cuda"):
        loss = model(batch)
    scaler.scale(loss).backward()
    return loss
