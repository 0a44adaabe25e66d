"""Optional dependencies, imported once for the package."""

import bitsandbytes as bnb

__all__ = ["bnb"]
