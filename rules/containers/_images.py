"""Container image references in Dockerfiles, compose and CI files, and the image table."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from migrator.api import load_table
from migrator.api.syntax import ImageRef, code_lines, dockerfile_images


def _images() -> dict[str, Any]:
    return load_table("images")


_YAML_IMAGE_RE = re.compile(
    r"^[ \t]*(?:-[ \t]*)?(?:image|container):[ \t]*(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)"
)


def image_refs(text: str, kind: str) -> Iterator[ImageRef]:
    """Image references: Dockerfile FROM and ARG defaults (``migrator.api.syntax``'s one
    Dockerfile reader); ``image:`` / ``container:`` in YAML."""
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
    yield from dockerfile_images(text)


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference (digest dropped)."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, ""
