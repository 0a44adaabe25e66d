"""Attack class: a buffer that crashes the native parser or runs past the time budget, opened in
an editor, costs that buffer only: ``migrate server`` analyses each buffer in a worker process
(as ``scan`` does each file), publishes one diagnostic that says why the buffer was not
analysed, and goes on serving the other buffers."""

from __future__ import annotations

from pathlib import Path

from tests.attacks.conftest import AMP, write
from tests.attacks.lsp_wire import Server

LAMBDAS = "import torch.cuda.amp\nx = " + "lambda: " * 20000 + "1\n"
PARENS = "import torch.cuda.amp\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
HUGE = "import torch.cuda.amp\nx = torch.cuda.amp.autocast() + " + "+".join(["a"] * 20000) + "\n"


def _codes_and_messages(diagnostics: list[dict[str, object]]) -> list[tuple[object, object]]:
    return sorted((d.get("code"), d["message"]) for d in diagnostics)


def _everything(uri: str) -> dict[str, object]:
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}
    return {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}}


def test_a_buffer_that_crashes_the_parser_costs_that_buffer_only(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.migrate]\nmin-severity = "hygiene"\n')
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path)
        lambdas = (tmp_path / "lambdas.py").as_uri()
        server.open(lambdas, LAMBDAS)
        crashed = server.diagnostics(lambdas)
        assert [d["message"] for d in crashed] == ["analysis crashed (SIGSEGV); file not analysed"]
        assert crashed[0]["source"] == "migrate"
        # the editor asks for fixes on its own: the crash costs that answer only
        assert server.request("textDocument/codeAction", _everything(lambdas))["result"] == []

        good = (tmp_path / "good.py").as_uri()
        server.open(good, AMP)
        assert [d["code"] for d in server.diagnostics(good)] == ["ROC520"]
        actions = server.request("textDocument/codeAction", _everything(good))["result"]
        assert actions and actions[0]["title"] == "migrate: apply 1 safe fix"

        # the cheap nesting check applies before any parser sees the buffer
        parens = (tmp_path / "parens.py").as_uri()
        server.open(parens, PARENS)
        assert [d["message"] for d in server.diagnostics(parens)] == [
            "nested more than 200 levels deep; not parsed"
        ]
        assert server.finish() == 0
    finally:
        server.close()


def test_a_buffer_that_runs_past_the_time_budget_is_stopped(tmp_path: Path) -> None:
    write(
        tmp_path, "pyproject.toml", '[tool.migrate]\nmin-severity = "hygiene"\nfile-timeout = 2\n'
    )
    server = Server(tmp_path)
    try:
        server.initialize(tmp_path)
        huge = (tmp_path / "huge.py").as_uri()
        server.open(huge, HUGE)
        assert [d["message"] for d in server.diagnostics(huge)] == [
            "analysis took longer than the per-file time budget of 2 s; file not analysed"
        ]
        good = (tmp_path / "good.py").as_uri()
        server.open(good, AMP)
        assert [d["code"] for d in server.diagnostics(good)] == ["ROC520"]
        assert server.finish() == 0
    finally:
        server.close()
