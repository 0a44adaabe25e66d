"""Asks a Ray cluster's GCS for the versions it runs, before ``ray.init`` joins it
(``migrator.fleet.connect`` calls it in a thread it can leave behind: Ray's client retries an
address that does not answer for about 40 seconds). Runs no project code; the answer is
``{"metadata": {...}}`` (``ray_version``, ``python_version``), ``{"metadata": None}`` (a GCS
that has not recorded them) or ``{"error": KIND, "message": TEXT}`` with KIND ``auth``,
``no-token`` or ``other``."""

from __future__ import annotations

import json
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
