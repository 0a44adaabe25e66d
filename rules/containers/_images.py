"""Container image references in Dockerfiles, compose and CI files, and the image table."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from migrator.api import load_table

from .._shell import code_lines


def _images() -> dict[str, Any]:
    return load_table("images")


@dataclass(frozen=True, slots=True)
class ImageRef:
    start: int
    end: int
    image: str
    where: str  # FROM | ARG | image


_FROM_RE = re.compile(r"^[ \t]*FROM\s+(?:--\S+\s+)*(?P<image>[^\s#\\]+)", re.IGNORECASE)


_ARG_RE = re.compile(r"^[ \t]*ARG[ \t]+\w+=(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)", re.IGNORECASE)


_YAML_IMAGE_RE = re.compile(
    r"^[ \t]*(?:-[ \t]*)?(?:image|container):[ \t]*(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)"
)


def image_refs(text: str, kind: str) -> Iterator[ImageRef]:
    """Image references: Dockerfile FROM and ARG defaults (also when the instruction continues
    on the next line, ``FROM \\`` then the image); ``image:`` / ``container:`` in YAML."""
    if kind != "dockerfile":
        for offset, code in code_lines(text):
            match = _YAML_IMAGE_RE.match(code)
            if match is not None:
                yield ImageRef(
                    offset + match.start("image"),
                    offset + match.end("image"),
                    match.group("image"),
                    "image",
                )
        return
    pending: list[tuple[int, str]] = []
    for offset, code in code_lines(text):
        pending.append((offset, code))
        if code.rstrip().endswith("\\"):
            continue
        yield from _instruction_refs(pending)
        pending = []
    if pending:
        yield from _instruction_refs(pending)


def _instruction_refs(parts: list[tuple[int, str]]) -> Iterator[ImageRef]:
    """FROM/ARG image references of one instruction over its physical lines: the lines are
    joined (each continuation backslash read as a space) and positions mapped back."""
    logical: list[str] = []
    positions: list[int] = []
    for offset, code in parts:
        stripped = code.rstrip()
        body = stripped[:-1] + " " if stripped.endswith("\\") else code
        logical.append(body)
        positions.extend(range(offset, offset + len(body)))
    line = "".join(logical)
    for pattern, where in ((_FROM_RE, "FROM"), (_ARG_RE, "ARG")):
        match = pattern.match(line)
        if match is not None and match.group("image") != "\\":
            start, end = match.start("image"), match.end("image")
            yield ImageRef(positions[start], positions[end - 1] + 1, match.group("image"), where)


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference (digest dropped)."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, ""
