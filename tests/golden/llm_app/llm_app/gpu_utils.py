"""GPU environment helpers: backend flags, NVML telemetry, device selection."""

import logging
import os

import torch

try:
    import pynvml
    HAS_NVML = True
except ImportError:
    HAS_NVML = False

log = logging.getLogger(__name__)


def setup_backends():
    """Fast-path flags for Ampere+/Hopper inference."""
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    if torch.version.cuda:
        # cuBLASLt heuristics improved a lot in 11.8; older toolkits are slow with bf16 GEMMs
        if float(torch.version.cuda) >= 11.8:
            log.info("CUDA %s: enabling reduced-precision reductions", torch.version.cuda)
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
        else:
            log.warning("CUDA %s is older than 11.8, expect slow bf16 matmuls", torch.version.cuda)


def cuda_toolkit_version():
    major, minor = torch.version.cuda.split(".")[:2]
    return int(major), int(minor)


def select_gpus(ids):
    """Pin the process to the given GPUs; must run before CUDA is initialised."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in ids)
    os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]


def find_cuda_home():
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or os.environ.get("ROCM_HOME") or os.environ.get("ROCM_PATH")
    if cuda_home is None and os.path.isdir("/usr/local/cuda"):
        cuda_home = "/usr/local/cuda"
    return cuda_home


def flash_sdp_only():
    """Force the FlashAttention-2 SDPA kernel (errors instead of silently using math)."""
    return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)


def gpu_stats(index=0):
    """Memory/utilization of one GPU via NVML, or None when NVML is unavailable."""
    if not HAS_NVML or not torch.cuda.is_available():
        return None
    pynvml.nvmlInit()
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        name = pynvml.nvmlDeviceGetName(h)
        if isinstance(name, bytes):
            name = name.decode()
        return {
            "name": name,
            "mem_used_mib": mem.used / 2**20,
            "mem_total_mib": mem.total / 2**20,
            "gpu_util_pct": util.gpu,
        }
    finally:
        pynvml.nvmlShutdown()


def log_gpu_memory(tag=""):
    stats = gpu_stats()
    if stats is None:
        log.debug("[%s] no NVML; allocated=%d", tag, torch.cuda.memory_allocated() if torch.cuda.is_available() else 0)
        return None
    log.info("[%s] %s: %.0f/%.0f MiB used, util %d%%", tag, stats["name"],
             stats["mem_used_mib"], stats["mem_total_mib"], stats["gpu_util_pct"])
    return stats
