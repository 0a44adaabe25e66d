"""Attack class: a client that sends malformed or hostile requests gets, for each, a JSON-RPC
error or an empty answer, never silence, an error pop-up or a dead server: parameters missing or
of the wrong type, positions out of range, documents never opened (which the server never reads
from disk: it analyses only the text the editor sent), unknown documents changed, URIs that are
no file on disk, and ``..`` in a URI (read as the file it names)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.conftest import CUDA_CHECK, write
from tests.attacks.lsp_wire import Server

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
SERVER_NOT_INITIALIZED = -32002
WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}


def _error(answer: dict[str, Any]) -> int:
    assert "result" not in answer, answer
    return int(answer["error"]["code"])


def _fifo(root: Path) -> str:
    """A URI the client never opened, naming a named pipe: reading it would block for good."""
    path = root / "pipe.py"
    os.mkfifo(path)
    return path.as_uri()


def code_action_without_context(server: Server, root: Path) -> None:
    uri = (root / "app.py").as_uri()
    server.open(uri, CUDA_CHECK)
    server.diagnostics(uri)
    answer = server.request(
        "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": WHOLE}
    )
    assert _error(answer) == INVALID_PARAMS


def negative_position(server: Server, root: Path) -> None:
    position = {"line": -1, "character": -5}
    params = {"textDocument": {"uri": (root / "app.py").as_uri()}, "position": position}
    assert _error(server.request("textDocument/hover", params)) == INVALID_PARAMS


def params_of_the_wrong_type(server: Server, root: Path) -> None:
    assert _error(server.request("textDocument/hover", [1, 2])) == INVALID_PARAMS
    assert _error(server.request("textDocument/codeAction", "x")) == INVALID_PARAMS


def no_jsonrpc_member(server: Server, root: Path) -> None:
    server.send_bytes(b'Content-Length: 36\r\n\r\n{"id": 7, "method": "shutdown"}     ')
    answer = server.wait(lambda m: m.get("id") == 7)
    assert _error(answer) == INVALID_REQUEST


def body_that_is_not_json(server: Server, root: Path) -> None:
    server.send_bytes(b"Content-Length: 5\r\n\r\n{abc}")
    answer = server.wait(lambda m: "error" in m and m.get("id") is None)
    assert _error(answer) == PARSE_ERROR
    server.send_bytes(b"Content-Length: 4\r\n\r\n[1]\n")
    answer = server.wait(lambda m: "error" in m and m.get("id") is None)
    assert _error(answer) == INVALID_REQUEST


def hover_on_a_document_never_opened(server: Server, root: Path) -> None:
    uri = _fifo(root)
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
    assert server.request("textDocument/hover", params)["result"] is None
    passwd = {"textDocument": {"uri": "file:///etc/passwd"}, "position": params["position"]}
    assert server.request("textDocument/hover", passwd)["result"] is None


def code_action_on_a_document_never_opened(server: Server, root: Path) -> None:
    uri = _fifo(root)
    params = {"textDocument": {"uri": uri}, "range": WHOLE, "context": {"diagnostics": []}}
    assert server.request("textDocument/codeAction", params)["result"] == []


def position_out_of_range(server: Server, root: Path) -> None:
    uri = (root / "app.py").as_uri()
    server.open(uri, CUDA_CHECK)
    server.diagnostics(uri)
    far = {"line": 10**6, "character": 10**6}
    answer = server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": far})
    assert answer["result"] is None
    params = {
        "textDocument": {"uri": uri},
        "range": {"start": far, "end": far},
        "context": {"diagnostics": []},
    }
    assert isinstance(server.request("textDocument/codeAction", params)["result"], list)


def change_to_an_unknown_document(server: Server, root: Path) -> None:
    uri = (root / "never-opened.py").as_uri()
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": CUDA_CHECK}]}
    server.notify("textDocument/didChange", change)
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    params = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}}
    assert server.request("textDocument/hover", params)["result"] is None


def uris_that_are_no_file(server: Server, root: Path) -> None:
    for uri in (
        "untitled:Untitled-1",
        "http://evil.example/a.py",
        "file://evil.example/share/a.py",
        "file:///tmp/nul%00byte.py",
    ):
        server.open(uri, CUDA_CHECK)
        assert server.diagnostics(uri) == [], uri
        params = {"textDocument": {"uri": uri}, "range": WHOLE, "context": {"diagnostics": []}}
        assert server.request("textDocument/codeAction", params)["result"] == [], uri
    # a name too long for any file system: still the editor's text, analysed as sent
    uri = "file:///" + "a" * 5000 + ".py"
    server.open(uri, CUDA_CHECK)
    assert [d["code"] for d in server.diagnostics(uri)] == ["ROC101"]


def dot_dot_in_a_uri(server: Server, root: Path) -> None:
    # the workspace's configuration ignores ROC101; the file the URI names is outside it
    uri = root.as_uri() + "/../outside/a.py"
    server.open(uri, CUDA_CHECK)
    assert [d["code"] for d in server.diagnostics(uri)] == ["ROC101"]


def text_with_a_lone_surrogate(server: Server, root: Path) -> None:
    uri = (root / "odd.py").as_uri()
    server.open(uri, "import torch\nx = '\ud800'\n")  # JSON can carry what UTF-8 cannot
    [diagnostic] = server.diagnostics(uri)
    assert diagnostic["message"].startswith("skipped: undecodable bytes (utf-8)")


ATTACKS: list[Callable[[Server, Path], None]] = [
    code_action_without_context,
    negative_position,
    params_of_the_wrong_type,
    no_jsonrpc_member,
    body_that_is_not_json,
    hover_on_a_document_never_opened,
    code_action_on_a_document_never_opened,
    position_out_of_range,
    change_to_an_unknown_document,
    uris_that_are_no_file,
    dot_dot_in_a_uri,
    text_with_a_lone_surrogate,
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.__name__ for attack in ATTACKS])
def test_each_malformed_request_is_answered_and_the_server_goes_on(
    tmp_path: Path, attack: Callable[[Server, Path], None]
) -> None:
    project = tmp_path / "project"
    write(project, "pyproject.toml", '[tool.migrate]\nignore = ["ROC101"]\n')
    (tmp_path / "outside").mkdir()
    server = Server(project)
    try:
        server.initialize(project)
        attack(server, project)
        popups = [m for m in server.seen if m.get("method") == "window/showMessage"]
        assert popups == []
        assert server.finish() == 0  # it still answers, and ends as asked
    finally:
        server.close()


def test_requests_before_initialize_are_refused(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        uri = (tmp_path / "app.py").as_uri()
        server.open(uri, CUDA_CHECK)  # dropped, as LSP says: no error shown, nothing published
        params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        assert _error(server.request("textDocument/hover", params)) == SERVER_NOT_INITIALIZED
        server.initialize(tmp_path)
        assert server.request("textDocument/hover", params)["result"] is None
        assert server.finish() == 0
        assert server.seen == []
        assert "Traceback" not in server.stderr_text()
    finally:
        server.close()
