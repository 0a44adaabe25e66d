"""Container image references in Dockerfiles, compose and CI files, and the image table."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from migrator.ruledata import load_table

from .._shell import code_lines


def _images() -> dict[str, Any]:
    return load_table("images")


@dataclass(frozen=True, slots=True)
class ImageRef:
    start: int
    end: int
    image: str
    where: str  # FROM | ARG | image


_FROM_RE = re.compile(r"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(?P<image>[^\s#]+)", re.IGNORECASE)


_ARG_RE = re.compile(r"^[ \t]*ARG[ \t]+\w+=(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)", re.IGNORECASE)


_YAML_IMAGE_RE = re.compile(
    r"^[ \t]*(?:-[ \t]*)?(?:image|container):[ \t]*(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)"
)


def image_refs(text: str, kind: str) -> Iterator[ImageRef]:
    """Image references: Dockerfile FROM and ARG defaults; ``image:`` / ``container:`` in YAML."""
    continued = False
    for offset, code in code_lines(text):
        if kind == "dockerfile":
            was_continued = continued
            continued = code.rstrip().endswith("\\")
            if was_continued:
                continue
            for pattern, where in ((_FROM_RE, "FROM"), (_ARG_RE, "ARG")):
                match = pattern.match(code)
                if match is not None:
                    yield ImageRef(
                        offset + match.start("image"),
                        offset + match.end("image"),
                        match.group("image"),
                        where,
                    )
        else:
            match = _YAML_IMAGE_RE.match(code)
            if match is not None:
                yield ImageRef(
                    offset + match.start("image"),
                    offset + match.end("image"),
                    match.group("image"),
                    "image",
                )


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference (digest dropped)."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, ""
