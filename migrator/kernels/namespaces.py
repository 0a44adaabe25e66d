"""Files that see NVIDIA's WMMA namespace through a project header. A kernel may write
``mma_sync(c, a, b, c)`` without ``wmma::`` because a header it includes (``common.cuh``:
``using namespace nvcuda;``) brought the namespace in; the file's own tokens cannot tell, so the
project's sources are read once per scan and the files that include such a header, directly or
through other project headers, are set in the project facts (``nvcuda_using``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

#: ``using namespace nvcuda;`` / ``using namespace nvcuda::wmma;`` at the start of a line.
_USING = re.compile(rb"^[ \t]*using[ \t]+namespace[ \t]+(?:::)?nvcuda\b", re.M)


def nvcuda_using_files(texts: Mapping[str, bytes]) -> frozenset[str]:
    """The sources of ``texts`` (relative path -> bytes) that include, through the project's own
    headers, one with a using-directive for ``nvcuda``; files with their own directive are left
    out (the rule sees it)."""
    from migrator.kernels.builds import include_graph

    direct = {relative for relative, data in texts.items() if _USING.search(data)}
    if not direct:
        return frozenset()
    # every file is in ``texts``: the root is never read
    included_by = include_graph(Path("."), sorted(texts), texts)
    seen: set[str] = set()
    frontier = list(direct)
    while frontier:
        header = frontier.pop()
        for includer in included_by.get(header, ()):
            if includer not in seen and includer not in direct:
                seen.add(includer)
                frontier.append(includer)
    return frozenset(seen)


__all__ = ["nvcuda_using_files"]
