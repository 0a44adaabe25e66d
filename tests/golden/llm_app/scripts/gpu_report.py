"""Print the name and memory of every GPU (attach the output to support tickets)."""

from llm_app.gpu_utils import pynvml as nvml
import torch


def main():
    nvml.nvmlInit()
    for index in range(torch.cuda.device_count()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        total = nvml.nvmlDeviceGetMemoryInfo(handle).total
        print(f"{index}: {nvml.nvmlDeviceGetName(handle)} {total / 2**30:.0f} GiB")
    nvml.nvmlShutdown()


if __name__ == "__main__":
    main()
