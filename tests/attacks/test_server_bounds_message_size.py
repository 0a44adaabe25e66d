"""Attack class: a client's message header cannot make ``migrate server`` allocate what it
claims or wait for what never comes: a ``Content-Length`` over the 64 MiB bound, or a header it
cannot read, ends the server at once with one line on stderr (the stream has no framing left to
trust) and exit status 2; messages under the bound are served as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.conftest import CUDA_CHECK
from tests.attacks.lsp_wire import ANSWER_TIMEOUT, Server


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: 99999999999999999\r\n",  # MemoryError before
        b"Content-Length: 67108865\r\n",  # one byte over the bound: waited for 64 MiB before
        b"Content-Length: -1\r\n",
        b"Content-Length: 12abc\r\n",
        b"this is no header\r\n",
        b"Content-Length: 10\r\nContent-Length: 20\r\n",
    ],
)
def test_a_header_the_server_cannot_trust_ends_it_cleanly(tmp_path: Path, header: bytes) -> None:
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path)
        server.send_bytes(header + b"\r\n" + b'{"jsonrpc": "2.0", "id": 99, "method": "shutdown"}')
        status = server.process.wait(timeout=ANSWER_TIMEOUT)
        lines = [line for line in server.stderr_text().splitlines() if line.strip()]
        assert status == 2, lines
        assert len(lines) == 1 and lines[0].startswith("migrate server: "), lines
        assert "Traceback" not in lines[0] and "Error" not in lines[0]
    finally:
        server.close()


def test_a_large_message_under_the_bound_is_served(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path)
        uri = (tmp_path / "big.py").as_uri()
        # 2.4 MB in one message (a long comment: the bound is on the message, not the parse)
        server.open(uri, CUDA_CHECK + "# " + "x" * 2_400_000 + "\n")
        assert [d["code"] for d in server.diagnostics(uri)] == ["ROC101"]
        assert server.finish() == 0
    finally:
        server.close()
