"""A client that speaks LSP to the real ``migrate server`` at the byte level: it frames what it
is given (or sends raw bytes, for broken headers), reads every framed message back on a thread,
and waits with generous timeouts, so a test sees exactly what a hostile client would."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from tests.attacks.conftest import command, environment

#: Seconds to wait for one answer (the machine is shared and may be loaded).
ANSWER_TIMEOUT = 120.0


class Server:
    """``migrate server`` in a child process, with the messages it sent, in order."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            command("server"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environment(),
            start_new_session=True,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr = b""
        self._stderr_done = threading.Event()
        self._next_id = 0
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put(json.loads(stream.read(length)))

    def _drain(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
            self.stderr += chunk
        self._stderr_done.set()

    def stderr_text(self) -> str:
        """What the server wrote on stderr so far (all of it, once it has exited)."""
        if self.process.poll() is not None:
            self._stderr_done.wait(ANSWER_TIMEOUT)
        return self.stderr.decode("utf-8", "replace")

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and return the response with its id (the test fails without one)."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)

    def wait(self, wanted: Any) -> dict[str, Any]:
        """The first message (seen before or arriving) for which ``wanted`` is true."""
        for message in self.seen:
            if wanted(message):
                self.seen.remove(message)
                return message
        while True:
            try:
                message = self.messages.get(timeout=ANSWER_TIMEOUT)
            except queue.Empty:
                raise AssertionError(
                    f"no answer in {ANSWER_TIMEOUT:g} s; {self.stderr!r}"
                ) from None
            if message is None:
                code = self.process.wait(timeout=ANSWER_TIMEOUT)
                raise AssertionError(f"server ended (status {code}); {self.stderr[-3000:]!r}")
            if wanted(message):
                return message
            self.seen.append(message)

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The next diagnostics published for ``uri``."""
        message = self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            )
        )
        return list(message["params"]["diagnostics"])

    def initialize(self, root: Path) -> None:
        answer = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": "project"}],
            },
        )
        assert "result" in answer, answer
        self.notify("initialized", {})

    def open(self, uri: str, text: str, language: str = "python") -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
        )

    def finish(self) -> int:
        """Shut the server down as an editor does; its exit status."""
        answer = self.request("shutdown")
        assert "error" not in answer, answer
        self.notify("exit", None)
        return self.process.wait(timeout=ANSWER_TIMEOUT)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
