"""The Python examples in docs/api.md and docs/bot.md run as written against a server."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from live_server import OPERATOR_KEYS, LiveServer

from qahwa_client import Client

DOCS = Path(__file__).resolve().parent.parent / "docs"
DEFAULT_URL = "http://127.0.0.1:8000"


def python_blocks(name: str) -> list[str]:
    return re.findall(
        r"^```python\n(.*?)^```", (DOCS / name).read_text(encoding="utf-8"), flags=re.S | re.M
    )


def run(code: str, url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    assert DEFAULT_URL in code
    monkeypatch.setattr(sys, "argv", ["doc"])
    # the examples read the operator key as a reader passes it: $OPERATOR_KEY
    monkeypatch.setenv("OPERATOR_KEY", OPERATOR_KEYS[url.removeprefix("http://")])
    out = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "doc"}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace(DEFAULT_URL, url), "<doc>", "exec"), namespace)
    finally:
        for value in namespace.values():
            if isinstance(value, Client):
                value.close()  # the guide's example leaves its client open, as a REPL would
    return out.getvalue()


def test_api_guide_example_runs(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    first, *rest = python_blocks("api.md")
    namespace_code = first + "\n" + "\n".join(rest)  # the rng block reuses `qc`
    run(namespace_code, server.url, monkeypatch)


def test_bot_is_30_lines_and_plays_to_a_verified_end(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (code,) = python_blocks("bot.md")
    assert len(code.splitlines()) <= 30
    out = run(code, server.url, monkeypatch)
    assert re.fullmatch(r"iraqi_domino: \d+ moves, finished; transcript verified\n", out), out
