"""What a kernel rule sees of one C/C++/CUDA file: the parse (``migrator.kernels.source``),
the preprocessor's branches on HIP (``migrator.kernels.preproc``), and offsets converted from
the parse's bytes to the text's characters, which findings use."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.kernels import preproc
from migrator.kernels.source import NO_MACROS, CudaSource, ProjectMacros, parse_text


@dataclass(slots=True)
class KernelView:
    """One file's parse and the questions kernel rules ask of it."""

    text: str
    source: CudaSource
    _ascii: bool

    @classmethod
    def of(cls, text: str, macros: ProjectMacros = NO_MACROS) -> KernelView:
        """The view of ``text``, its branches read with the project's ``macros``."""
        source = parse_text(text, macros)
        return cls(text, source, len(source.data) == len(text))

    def char(self, byte_offset: int) -> int:
        """The text offset of a byte offset of the parse."""
        if self._ascii:
            return byte_offset
        return len(self.source.data[:byte_offset].decode("utf-8", "surrogateescape"))

    def no_amd_path(self, byte_offset: int) -> str | None:
        """Why the code there compiles to nothing on AMD with nothing in its place, or None."""
        return preproc.no_amd_path(self.source, byte_offset)

    def rocm_only(self, byte_offset: int) -> bool:
        """Whether the code there is in a branch only ROCm builds compile."""
        return preproc.rocm_only(self.source, byte_offset)

    def line_text(self, byte_offset: int) -> str:
        start = self.source.data.rfind(b"\n", 0, byte_offset) + 1
        end = self.source.data.find(b"\n", byte_offset)
        end = len(self.source.data) if end < 0 else end
        return self.source.text(start, end)


def hip_skipped_regions(text: str, macros: ProjectMacros = NO_MACROS) -> list[tuple[int, int, str]]:
    """Guard regions of a CUDA source, as text offsets: branches hipcc skips where AMD has
    another path or the project excludes them from ROCm builds (read with its ``macros``)."""
    view = KernelView.of(text, macros)
    return [
        (view.char(start), view.char(end), label)
        for start, end, label in preproc.skipped_on_hip(view.source)
    ]
