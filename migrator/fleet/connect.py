"""Checks a Ray cluster before ``migrate fleet --address`` joins it, so that the usual mistakes
end in one line that says the fix, within seconds (exit 2), instead of Ray's twenty warnings
and a traceback after 20 to 40 seconds: nothing listening at the address, a port that is not a
Ray head's, a cluster that asks for its authentication token (missing here, or another one),
and a cluster started with another Ray or Python version than this driver's. The versions are
the ones the cluster's GCS records for itself (the ``CLUSTER_METADATA`` entry that Ray's own
``ray.init`` compares); nothing of the cluster's or a project's code runs here."""

from __future__ import annotations

import os
import platform
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from migrator.errors import MigrateError

#: Seconds to open a TCP connection to the address; then the GCS has until ``DEADLINE_SECONDS``
#: after this process started (at least ``PROBE_SECONDS``) to answer: on a loaded machine
#: starting Python and importing Ray alone can take 4 seconds.
CONNECT_SECONDS = 2.0
PROBE_SECONDS = 2.0
DEADLINE_SECONDS = 7.5
DOCS = "docs/fleet.md, 'A cluster'"
TOKEN_PLACES = "~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN"


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise MigrateError(
            f"--address {address!r} is not HOST:PORT (the head's address, as `ray start --head` "
            "printed it) or auto"
        )
    return host.strip("[]"), int(port)


def resolve(address: str) -> str:
    """The HOST:PORT a driver joins: ``auto`` is the cluster ``ray start`` left on this
    machine."""
    if address != "auto":
        return address
    from ray._private import services

    try:
        found = services.canonicalize_bootstrap_address(address)
    except Exception:  # noqa: BLE001 - Ray raises ConnectionError or others: one line
        found = None
    if not found:
        raise MigrateError(
            "--address auto: no Ray cluster was started on this machine; start one with "
            f"`ray start --head` or pass the head's HOST:PORT ({DOCS})"
        )
    return str(found)


def _reachable(host: str, port: int, address: str) -> None:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
            return
    except socket.gaierror:
        raise MigrateError(f"--address {address}: unknown host {host!r}") from None
    except ConnectionRefusedError:
        raise MigrateError(
            f"no Ray cluster at {address}: connection refused; start the head with "
            f"`ray start --head --port={port}` or pass the address it printed ({DOCS})"
        ) from None
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or "error"
        raise MigrateError(
            f"no Ray cluster at {address}: {reason} within {CONNECT_SECONDS:g} s; check the "
            "host, the port and the firewall between this machine and the head"
        ) from None


def _auth_error(kind: str, address: str) -> MigrateError:
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return MigrateError(
            f"the Ray cluster at {address} requires its authentication token: run with "
            f"RAY_AUTH_MODE=token and the head's token in {TOKEN_PLACES} ({DOCS})"
        )
    if kind == "no-token":
        return MigrateError(
            f"RAY_AUTH_MODE=token but this machine has no Ray token: copy the head node's "
            f"~/.ray/auth_token here, or set RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN ({DOCS})"
        )
    return MigrateError(
        f"the Ray cluster at {address} refused this machine's token: use the head node's "
        f"(copy its ~/.ray/auth_token here, or set RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN)"
    )


def _check_token_here() -> None:
    """With ``RAY_AUTH_MODE=token``, a token must be here where Ray looks for one (Ray's
    client aborts the process, with a native stack trace, when it is not)."""
    if (
        os.environ.get("RAY_AUTH_MODE", "").lower() != "token"
        or os.environ.get("RAY_AUTH_TOKEN", "").strip()
    ):
        return
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    path = Path(named).expanduser() if named else Path.home() / ".ray" / "auth_token"
    try:
        present = bool(path.read_text(encoding="utf-8", errors="replace").strip())
    except OSError:
        present = False
    if present:
        return
    if named:
        raise MigrateError(
            f"RAY_AUTH_TOKEN_PATH names {named!r}, which cannot be read or is empty: point it "
            f"at a copy of the head node's ~/.ray/auth_token ({DOCS})"
        )
    raise MigrateError(
        "RAY_AUTH_MODE=token but this machine has no Ray token: copy the head node's "
        f"~/.ray/auth_token here, or set RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN ({DOCS})"
    )


def _python_matches(cluster: str, mine: str) -> bool:
    """As Ray compares them: to the patch by default, or to the minor version when
    ``RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor``."""
    if os.environ.get("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "patch") == "minor":
        return cluster.split(".")[:2] == mine.split(".")[:2]
    return cluster == mine


def check_versions(metadata: dict[str, object], address: str, ray_version: str) -> None:
    """MigrateError when the cluster runs another Ray, or another Python, than this driver."""
    theirs_ray = str(metadata.get("ray_version", ""))
    theirs_python = str(metadata.get("python_version", ""))
    mine_python = platform.python_version()
    if not theirs_ray or (
        theirs_ray == ray_version and _python_matches(theirs_python, mine_python)
    ):
        return
    fix = (
        f"pip install 'ray=={theirs_ray}' here"
        if theirs_ray != ray_version
        else f"run migrate fleet with Python {theirs_python}"
    )
    raise MigrateError(
        f"the Ray cluster at {address} runs Ray {theirs_ray} on Python {theirs_python}, this "
        f"driver Ray {ray_version} on Python {mine_python}: {fix}, or start the cluster with "
        "this driver's versions (every node and the driver need the same)"
    )


def _age() -> float:
    """Seconds since this process started (Linux's /proc; 0 where it cannot tell)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            started = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, uptime - started / os.sysconf("SC_CLK_TCK"))


def probe_seconds() -> float:
    """How long the GCS may take to answer: what is left of ``DEADLINE_SECONDS``."""
    return max(PROBE_SECONDS, DEADLINE_SECONDS - _age())


def _probe(address: str, seconds: float) -> dict[str, Any] | None:
    """``probe.probe(address)`` in a thread, waited for ``seconds``; None when it has
    not answered by then. Ray's client releases the interpreter while it waits, prints its
    retries from native code on stderr (file descriptor 2) and cannot be stopped: descriptor 2
    points at /dev/null meanwhile, and for good when the thread is left behind (this process's
    own messages then go to a copy of the real stderr)."""
    from migrator.fleet.probe import probe

    answer: list[dict[str, Any]] = []
    thread = threading.Thread(
        target=lambda: answer.append(probe(address)), name="ray-probe", daemon=True
    )
    sys.stderr.flush()
    saved = os.dup(2)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    os.close(quiet)
    try:
        thread.start()
        thread.join(seconds)
    finally:
        if thread.is_alive():
            sys.stderr = os.fdopen(saved, "w", encoding="utf-8", errors="replace")
        else:
            os.dup2(saved, 2)
            os.close(saved)
    return answer[0] if answer else None


def check_cluster(address: str, ray_version: str) -> str:
    """The cluster's HOST:PORT once it answers, accepts this driver's token and runs its
    versions; otherwise MigrateError with the one line that says what to do. A Ray Client
    address (``ray://``) is left to Ray."""
    if address.startswith("ray://"):
        return address
    resolved = resolve(address)
    host, port = _split(resolved)
    _check_token_here()
    _reachable(host, port, resolved)
    seconds = probe_seconds()
    answer = _probe(resolved, seconds)
    if answer is None:
        raise MigrateError(
            f"no Ray cluster at {resolved}: the port is open but no Ray head answered within "
            f"{seconds:.0f} s; pass the port `ray start --head --port` used (6379 unless it "
            "said otherwise)"
        )
    kind = answer.get("error")
    if kind in ("auth", "no-token"):
        raise _auth_error(kind, resolved)
    if kind:
        raise MigrateError(f"no Ray cluster at {resolved}: {answer.get('message', '')}")
    metadata = answer.get("metadata")
    if isinstance(metadata, dict):
        check_versions(metadata, resolved, ray_version)
    return resolved


def init_error(error: BaseException, address: str) -> MigrateError:
    """One line for what ``ray.init`` raised joining ``address`` after the checks passed (a
    node that went away in between, Ray's own version check)."""
    text = str(error).strip()
    if type(error).__name__ == "AuthenticationError":
        return _auth_error("auth", address)
    if text.startswith("Version mismatch"):
        flat = " ".join(part.strip() for part in text.splitlines() if part.strip())
        return MigrateError(f"the Ray cluster at {address}: {flat}")
    first = text.splitlines()[0] if text else ""
    return MigrateError(
        f"cannot join the Ray cluster at {address}: {type(error).__name__}: {first}"
    )
