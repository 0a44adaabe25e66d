"""The one way ``migrate`` starts another program, so that no helper can run the scanned
project's code: the program is an absolute path found in migrate's own environment or on the
absolute entries of ``PATH`` (never a relative entry, never inside a project the caller names),
Python helpers start isolated (``-I``: neither the working directory, ``PYTHONPATH`` nor user
site-packages come first), the working directory is a private empty folder unless the caller
names one on purpose (verify's copy, a git repository), the environment loses the variables
that make an interpreter load code, and the helper gets its own process group, which a timeout
kills whole (hipcc's wrapper and the clang it started alike)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Variables that make an interpreter or a shell load code the user did not choose for this
#: helper; removed from every helper's environment (verify's smoke command keeps its own).
LOADING_VARIABLES = frozenset(
    {
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONUSERBASE",
        "PYTHONINSPECT",
        "PYTHONBREAKPOINT",
        "PYTHONEXECUTABLE",
        "PYTHONPLATLIBDIR",
    }
)
#: Seconds between SIGTERM to a timed-out group and SIGKILL.
KILL_GRACE_SECONDS = 2.0
#: The folder holding the ``migrator`` package (site-packages, or a checkout run in place).
HOME = str(Path(__file__).resolve().parents[2])
#: Runs a module of migrate's own code in an interpreter started with ``-I``: the folder of
#: ``migrator`` is put first on the path explicitly, so an uninstalled checkout works too.
_BOOT = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); module = sys.argv.pop(1); "
    "sys.argv[0] = module; runpy.run_module(module, run_name='__main__', alter_sys=True)"
)


class HelperError(Exception):
    """A helper could not be started; the message is the one-line reason."""


@dataclass(frozen=True, slots=True)
class Finished:
    """What a helper did: exit status (None when it was killed at its timeout) and output."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float

    @property
    def timed_out(self) -> bool:
        """Killed at its timeout."""
        return self.returncode is None

    @property
    def out(self) -> str:
        """Stdout as text (undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        """Stderr as text (undecodable bytes replaced)."""
        return self.stderr.decode("utf-8", "replace")


def helper_environment(
    extra: Mapping[str, str] | None = None, *, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``base`` (this process's environment) without the variables that load code, plus
    ``extra``."""
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if name not in LOADING_VARIABLES}
    env.update(extra or {})
    return env


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    try:
        resolved = path.resolve()
    except OSError:
        return True
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def find_program(
    name: str, *, avoid: Sequence[Path] = (), env: Mapping[str, str] | None = None
) -> str | None:
    """The absolute path of program ``name``: migrate's own environment's ``bin`` folder first
    (where pip put black, ruff or hipify), then the absolute entries of ``PATH``. A relative
    entry (``.``, an empty one) is never searched, so the working directory (often the project)
    cannot supply the program, and neither can a folder inside ``avoid`` (the projects being
    read)."""
    if os.sep in name:
        path = Path(name)
        if not path.is_absolute() or _inside(path, avoid):
            return None
        return str(path) if os.access(path, os.X_OK) and path.is_file() else None
    own = Path(sys.executable).parent
    search = [str(own)]
    path_value = (os.environ if env is None else env).get("PATH", os.defpath)
    search += [entry for entry in path_value.split(os.pathsep) if os.path.isabs(entry)]
    for folder in search:
        if folder != str(own) and _inside(Path(folder), avoid):
            continue
        found = shutil.which(name, path=folder)
        if found:
            return found
    return None


def python_module(module: str, *args: str) -> list[str]:
    """The argv that runs ``module`` of migrate's own code (``migrator.…``) with migrate's own
    interpreter, isolated."""
    return [sys.executable, "-I", "-c", _BOOT, HOME, module, *args]


def tool_command(tool: str, *, avoid: Sequence[Path] = ()) -> list[str] | None:
    """How to run the Python tool ``tool`` (black, ruff) from migrate's own environment: its
    program beside migrate's interpreter, else ``python -I -m tool`` when this interpreter has
    it installed (not found through the working directory), else the program on ``PATH``; None
    when none exists (nothing is ever installed)."""
    own = Path(sys.executable).parent / tool
    if own.is_file() and os.access(own, os.X_OK):
        return [str(own)]
    spec = importlib.util.find_spec(tool)
    origin = spec.origin if spec is not None else None
    if origin and os.path.isabs(origin) and not _inside(Path(origin), [*avoid, Path.cwd()]):
        return [sys.executable, "-I", "-m", tool]
    program = find_program(tool, avoid=avoid)
    return [program] if program else None


@contextlib.contextmanager
def private_folder() -> Iterator[Path]:
    """An empty folder of migrate's own, removed afterwards: the working directory of a helper
    that needs none of the project's."""
    folder = Path(tempfile.mkdtemp(prefix="migrate-helper-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: Every helper started and not yet reaped, so that a migrate told to stop (SIGTERM, SIGHUP)
#: ends their groups too: they run in sessions of their own, which no signal to migrate reaches.
_live: set[subprocess.Popen[Any]] = set()
_live_lock = threading.RLock()  # re-entered by a signal handler in the thread that holds it
_stopping = threading.Event()


def end_every_helper() -> None:
    """Kill the process group of every helper still running and start no more (on the way out
    of a stopped run, whose worker threads may still hold queued work)."""
    _stopping.set()
    with _live_lock:
        running = list(_live)
    for process in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _check_argv(argv: Sequence[str]) -> list[str]:
    command = [str(part) for part in argv]
    if not command or not os.path.isabs(command[0]):
        raise HelperError(f"helper program must be an absolute path: {command[:1]}")
    return command


def start(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (an absolute program) in ``cwd``, in a new session (its own process
    group); raise HelperError when it cannot start."""
    command = _check_argv(argv)
    if _stopping.is_set():
        raise HelperError(f"not starting {Path(command[0]).name}: migrate is stopping")
    try:
        process = subprocess.Popen(
            command,
            cwd=str(cwd),
            env=helper_environment() if env is None else dict(env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    except OSError as error:
        raise HelperError(f"cannot run {Path(command[0]).name}: {error.strerror}") from None
    with _live_lock:
        _live.add(process)
        if _stopping.is_set():  # stopped while it started: end it with the others
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
    return process


def kill_group(process: subprocess.Popen[Any], grace: float = 0.0) -> None:
    """End ``process`` and everything it started in its group: SIGTERM and ``grace`` seconds
    to exit when ``grace`` is positive, then SIGKILL; reaped before returning."""

    def signal_group(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)

    if grace > 0 and process.poll() is None:
        signal_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    signal_group(signal.SIGKILL)
    process.wait()
    with _live_lock:
        _live.discard(process)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    input: bytes | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run ``argv`` to its end or to ``timeout`` (then its whole group is killed), with
    ``input`` on stdin; in ``cwd``, or a private empty folder when None. Whatever it left
    running in its group afterwards is killed too. Raise HelperError when it cannot start."""
    with contextlib.ExitStack() as stack:
        folder = cwd if cwd is not None else stack.enter_context(private_folder())
        started = time.monotonic()
        process = start(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        )
        returncode: int | None
        try:
            stdout, stderr = process.communicate(input=input, timeout=max(timeout, 0.001))
            returncode = process.returncode
        except subprocess.TimeoutExpired:
            kill_group(process, KILL_GRACE_SECONDS)
            stdout, stderr = process.communicate()
            returncode = None
        finally:
            if process.returncode is None:
                kill_group(process)
        kill_group(process)
        return Finished(
            tuple(process.args) if isinstance(process.args, list) else (str(argv[0]),),
            returncode,
            stdout or b"",
            stderr or b"",
            time.monotonic() - started,
        )
