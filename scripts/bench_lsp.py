"""How long `migrate server` takes from a change of a buffer to its diagnostics, measured from a
real LSP client (pygls's) over stdio: a 2,000-line Python file of ordinary training code with a
CUDA-only block every ``--every`` lines (100: about 20 problems; 10 makes a file that is mostly
findings), edited ``--changes`` times (one line each); prints the median, 90th percentile and
maximum in milliseconds.

    python scripts/bench_lsp.py [--lines 2000] [--every 100] [--changes 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

CUDA_BLOCK = """

def step_{n}(model, batch):
    if torch.version.cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
    with torch.cuda.amp.autocast():
        out = model(batch)
    return out
"""
PLAIN_BLOCK = '''

def loss_{n}(logits, labels, weight=None):
    """Cross-entropy over the last dimension, optionally weighted."""
    logits = logits.view(-1, logits.size(-1))
    labels = labels.view(-1)
    loss = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    if weight is not None:
        loss = loss * weight.view(-1)
    return loss.mean()
'''


def source(lines: int, every: int) -> str:
    text = "import os\nimport torch\n"
    n = 0
    last_cuda = -every
    while text.count("\n") < lines:
        here = text.count("\n")
        if here - last_cuda >= every:
            text += CUDA_BLOCK.format(n=n)
            last_cuda = here
        else:
            text += PLAIN_BLOCK.format(n=n)
        n += 1
    return text


async def measure(lines: int, every: int, changes: int) -> list[float]:
    client = LanguageClient("bench", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.py"
        text = source(lines, every)
        path.write_text(text)
        await client.start_io(sys.executable, "-m", "migrator", "server")
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        client.initialized(types.InitializedParams())
        uri = path.as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=text
                )
            )
        )
        first = await published.get()
        print(f"{lines} lines, {len(first.diagnostics)} diagnostics on open", file=sys.stderr)
        times = []
        for version in range(2, changes + 2):
            text = text.replace("return loss.mean()", f"return loss.mean()  # {version}", 1)
            started = time.perf_counter()
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
            while (await published.get()).version != version:
                pass
            times.append((time.perf_counter() - started) * 1000)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()  # type: ignore[no-untyped-call]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--changes", type=int, default=30)
    args = parser.parse_args()
    times = sorted(asyncio.run(measure(args.lines, args.every, args.changes)))
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    print(
        f"change -> diagnostics, {args.lines}-line file, CUDA code every {args.every} lines, "
        f"{len(times)} changes: "
        f"median {statistics.median(times):.0f} ms, p90 {p90:.0f} ms, max {times[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
