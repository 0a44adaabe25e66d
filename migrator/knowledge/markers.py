"""Environment markers of requirements, evaluated with ``packaging.markers`` for the only platform
ROCm runs on (Linux)."""

from __future__ import annotations

import functools
import itertools
import re

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, default_environment

#: The platform variables a Linux machine fixes; every other variable may take any value.
_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
_VARIABLES = frozenset(default_environment()) | {"extra", "extras", "dependency_groups"}
_NAME = re.compile(r"\b[a-z_]+\b")
_STRING = re.compile(r"'([^']*)'|\"([^\"]*)\"")
#: Values tried for a free variable besides the marker's own strings (below and above any version).
_EXTREMES = ("0", "9999")
#: Beyond this many environments to try, the marker is taken to allow Linux.
_MOST_ENVIRONMENTS = 4096


@functools.lru_cache(maxsize=1024)
def marker_allows_linux(marker: str) -> bool:
    """False only when the marker certainly excludes Linux (``sys_platform == 'darwin'``): no
    value of the variables Linux does not fix (Python version, machine, extras) satisfies it.
    A marker ``packaging`` cannot read allows Linux."""
    try:
        parsed = Marker(marker)
    except InvalidMarker:
        return True
    free = sorted((_VARIABLES & set(_NAME.findall(marker))) - set(_LINUX))
    strings = [first or second for first, second in _STRING.findall(marker)]
    values = tuple(dict.fromkeys([*strings, *_EXTREMES]))
    if len(values) ** len(free) > _MOST_ENVIRONMENTS:
        return True
    for combination in itertools.product(values, repeat=len(free)):
        chosen = dict(zip(free, combination, strict=True))
        environment = {**dict.fromkeys(_VARIABLES, ""), **_LINUX, **chosen}
        try:
            if parsed.evaluate(environment):
                return True
        except (UndefinedComparison, ValueError, TypeError):
            return True
    return False
