"""The docs run as written: every fenced block of README.md, docs/api.md, docs/bot.md and
docs/deploy.md is run against a live server, so a page that drifts from the code fails.

How a page's blocks run (a reader on one machine, after ``make serve``, in the repository):

- ``python`` blocks run in order in one namespace per page, as one interpreter session
  reading the page top to bottom (a later block may use an earlier one's names);
- ``sh`` blocks run each under ``bash -euo pipefail`` with ``.venv/bin`` first on ``PATH``;
- both in one scratch directory per page whose ``data/`` is the live server's own (its
  SQLite database, key files and ``operator.key``), as the repository's ``data/`` is after
  ``make serve``; ``OPERATOR_KEY`` is that key, as the pages tell the reader to set it; the
  server's address replaces ``127.0.0.1:8000`` / ``localhost:8000``.

A block that cannot run on one machine (it needs root, systemd, a proxy, other hosts, or it
starts a server of its own) carries ``<!-- not run: why -->`` on the line before its fence:
visible in the page's source, listed by the test, never skipped silently. Every other block
must be ``python`` or ``sh`` and must run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from qahwa_client import Client
from tests.support import bash_ok
from tests.support.live_server import OPERATOR_KEYS, LiveServer
from verify_cli.main import app as verify_app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = ("README.md", "docs/api.md", "docs/bot.md", "docs/deploy.md")
DEFAULT_URL = "http://127.0.0.1:8000"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"^<!-- not run: (\S.*?) -->$")
RUNNABLE = ("python", "sh")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str
    not_run: str | None  # why, from the mark

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.lang or 'no language'})"


def blocks(page: str) -> list[Block]:
    text = (ROOT / page).read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.match(before.strip())
        out.append(Block(page, line, m.group(1).strip(), m.group(2), mark and mark.group(1)))
    return out


def python_blocks(name: str) -> list[str]:
    """The page's python blocks that run (not those marked ``<!-- not run: why -->``)."""
    return [b.code for b in blocks(f"docs/{name}") if b.lang == "python" and b.not_run is None]


def _address(url: str) -> str:
    return url.removeprefix("http://")


def _localize(code: str, url: str) -> str:
    addr = _address(url)
    return (
        code.replace(DEFAULT_URL, url)
        .replace("127.0.0.1:8000", addr)
        .replace("localhost:8000", addr)
    )


def run(
    code: str, url: str, monkeypatch: pytest.MonkeyPatch, namespace: dict[str, Any] | None = None
) -> str:
    """Run a page's python ``code`` against the server at ``url``; its printed output."""
    assert DEFAULT_URL in code or namespace
    monkeypatch.setattr(sys, "argv", ["doc"])
    key = OPERATOR_KEYS.get(_address(url))
    if key is not None and "OPERATOR_KEY" not in os.environ:
        monkeypatch.setenv("OPERATOR_KEY", key)
    out = io.StringIO()
    ns: dict[str, Any] = namespace if namespace is not None else {"__name__": "doc"}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_localize(code, url), "<doc>", "exec"), ns)
    finally:
        if namespace is None:
            _close(ns)
    return out.getvalue()


def _close(ns: dict[str, Any]) -> None:
    for value in ns.values():
        if isinstance(value, Client):
            value.close()  # a guide's example leaves its client open, as a REPL would


def test_every_block_runs_or_says_why_not() -> None:
    unmarked = [
        str(b) for p in PAGES for b in blocks(p) if b.not_run is None and b.lang not in RUNNABLE
    ]
    assert not unmarked, f"neither python/sh nor marked <!-- not run: why -->: {unmarked}"
    assert sum(b.not_run is None for p in PAGES for b in blocks(p)) >= 10


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs_as_written(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runnable = [b for b in blocks(page) if b.not_run is None]
    if page != "README.md":
        assert runnable, page
    data = tmp_path / "data"
    # A server as `make serve` leaves it: data/ with its database and keys; creation needs
    # the key the page tells the reader to use (no key is added behind the page's back).
    with LiveServer(
        operator_key=False,
        database_url=f"sqlite:///{data / 'qahwa.db'}",
        data_dir=data,
        key_poll_seconds=0.5,
    ) as srv:
        env = {
            **os.environ,
            "OPERATOR_KEY": srv.operator_key,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        for name in [k for k in env if k.startswith("QAHWA_")]:
            del env[name]  # the defaults: ./data, as after `make serve`
        (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)  # the repo's
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("OPERATOR_KEY", srv.operator_key)
        namespace: dict[str, Any] = {"__name__": "doc"}
        try:
            for b in runnable:
                if b.lang == "python":
                    try:
                        run(b.code, srv.url, monkeypatch, namespace)
                    except Exception as exc:
                        raise AssertionError(f"{b} fails: {type(exc).__name__}: {exc}") from exc
                    continue
                bash_ok(_localize(b.code, srv.url), f"{b} fails:", tmp_path, env, timeout=300)
        finally:
            _close(namespace)


def test_bot_is_30_lines_and_plays_to_a_verified_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (code,) = python_blocks("bot.md")
    assert len(code.splitlines()) <= 30
    monkeypatch.chdir(tmp_path)
    with LiveServer() as srv:
        out = run(code, srv.url, monkeypatch)
    assert re.fullmatch(r"iraqi_domino: \d+ moves, finished; transcript verified\n", out), out
    assert (tmp_path / "transcript.json").stat().st_size > 1000  # kept


def test_the_bot_plays_a_sealed_match_with_only_its_ruleset_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (code,) = python_blocks("bot.md")
    sealed = [b for b in blocks("docs/bot.md") if b.not_run and "deal" in b.code]
    (line,) = sealed[0].code.strip("\n").splitlines()
    old = next(x for x in code.splitlines() if "create_match(" in x)
    assert line.split("#")[0].split("=")[0] == old.split("=")[0]  # the same statement
    monkeypatch.chdir(tmp_path)
    with LiveServer() as srv:
        out = run(code.replace(old, line), srv.url, monkeypatch)
        # the next documented step, online: the sealed match's lock asks for qahwa-fair/3
        # (fairness-v3 §9c), and its reveal record signs this transcript
        online = CliRunner().invoke(
            verify_app, ["transcript.json", "--server", srv.url, "--no-state"]
        )
    assert re.fullmatch(r"iraqi_domino: \d+ moves, finished; transcript verified\n", out), out
    assert online.exit_code == 0 and "VERIFIED" in online.stdout, online.output
    doc = json.loads((tmp_path / "transcript.json").read_text())
    assert doc["protocol"] == "qahwa-fair/3"
    assert any(e.get("action", {}).get("type") == "sealed" for e in doc["events"])
