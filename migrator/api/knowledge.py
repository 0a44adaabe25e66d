"""What rules know about CUDA, ROCm and the project being scanned: torch builds and wheel
indexes, version ranges, environment markers, packages without a ROCm equivalent, test paths,
what PyTorch's hipify maps (its own tables, as data) and the scanned project's declared facts."""

from migrator.files.paths import is_benchmark_path, is_test_file, is_test_path
from migrator.kernels.buildmodel import (
    CUDA_REQUIRED,
    GATE,
    GENERATED,
    IDE_ONLY,
    LINK,
    UNREAD,
    BuildNote,
    anchor_key,
    call_digest,
)
from migrator.kernels.cuda_names import cuda_header, cuda_names_in, declared_unmapped
from migrator.kernels.hipify_map import load as hipify_tables
from migrator.kernels.hipify_map import rewrites_include, unmapped_cuda_name
from migrator.kernels.hipify_map import unsupported as unsupported_mapping
from migrator.kernels.notes import build_calls_in, cuda_build_macros, notes_for
from migrator.kernels.smem_requests import requests as smem_requests
from migrator.knowledge.markers import marker_allows_linux
from migrator.knowledge.packages import no_equivalent, package_info
from migrator.knowledge.torch_builds import (
    CUDA_INDEX_RE,
    LOCAL_CUDA_RE,
    index_url_for,
    rocm_for_companion,
    rocm_for_specs,
    rocm_for_torch_version,
    rocm_index_for,
)
from migrator.knowledge.versions import (
    ProjectFacts,
    VersionRange,
    parse_version,
    poetry_to_pep440,
    spec_admits,
)
from migrator.reach.project import NVML_BINDINGS

__all__ = [
    "smem_requests",
    "CUDA_REQUIRED",
    "GATE",
    "GENERATED",
    "IDE_ONLY",
    "LINK",
    "UNREAD",
    "BuildNote",
    "anchor_key",
    "build_calls_in",
    "call_digest",
    "cuda_build_macros",
    "notes_for",
    "CUDA_INDEX_RE",
    "LOCAL_CUDA_RE",
    "NVML_BINDINGS",
    "ProjectFacts",
    "VersionRange",
    "cuda_header",
    "cuda_names_in",
    "declared_unmapped",
    "hipify_tables",
    "index_url_for",
    "is_benchmark_path",
    "is_test_file",
    "is_test_path",
    "marker_allows_linux",
    "no_equivalent",
    "package_info",
    "parse_version",
    "poetry_to_pep440",
    "rocm_for_companion",
    "rocm_for_specs",
    "rocm_for_torch_version",
    "rewrites_include",
    "rocm_index_for",
    "spec_admits",
    "unmapped_cuda_name",
    "unsupported_mapping",
]
