"""Print the name and memory of the first GPU (attach the output to support tickets)."""

from llm_app.gpu_utils import pynvml as nvml


def main(index=0):
    nvml.nvmlInit()
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    total = nvml.nvmlDeviceGetMemoryInfo(handle).total
    print(f"{index}: {nvml.nvmlDeviceGetName(handle)} {total / 2**30:.0f} GiB")
    nvml.nvmlShutdown()


if __name__ == "__main__":
    main()
