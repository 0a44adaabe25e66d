"""Asks a Ray cluster's GCS, in a process of its own, for the versions it runs: run by
``migrator.fleet.connect`` before ``ray.init`` joins a cluster. In a child process because
Ray's client retries an address that does not answer for about 40 seconds, prints its retries
on stderr from native code and cannot be stopped from Python: the child is killed at the
caller's deadline instead. Runs no project code; prints one JSON object on stdout:
``{"metadata": {...}}`` (``ray_version``, ``python_version``), ``{"metadata": null}`` (a GCS
that has not recorded them) or ``{"error": KIND, "message": TEXT}`` with KIND ``auth``,
``no-token`` or ``other``."""

from __future__ import annotations

import json
import sys
from typing import Any


def probe(address: str) -> dict[str, Any]:
    """The cluster metadata the GCS at ``address`` stores, or the error that stopped it."""
    try:
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
        from ray.exceptions import AuthenticationError
    except ImportError as error:  # checked by the caller first; named here all the same
        return {"error": "other", "message": f"cannot import Ray: {error}"}
    try:
        client = GcsClient(address=address)
        raw = client.internal_kv_get(b"CLUSTER_METADATA", b"cluster", timeout=5)
    except AuthenticationError as error:
        message = str(error)
        kind = "no-token" if "no authentication token was found" in message.lower() else "auth"
        return {"error": kind, "message": message.splitlines()[0] if message else ""}
    except Exception as error:  # noqa: BLE001 - any failure is reported as data, one line
        text = str(error).strip().splitlines()
        return {"error": "other", "message": f"{type(error).__name__}: {text[0] if text else ''}"}
    if not raw:
        return {"metadata": None}
    try:
        metadata = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {"metadata": None}
    return {"metadata": metadata if isinstance(metadata, dict) else None}


def main(argv: list[str]) -> int:
    print(json.dumps(probe(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
