"""``python -m bench.bot_rate [GAME ...]``: how many requests a second docs/bot.md's bot
makes on one seat token, against a ``qahwa serve`` of its own on loopback with no request
limit (docs/deploy.md §5 sets the recommended per-token rate from it).

The bot plays every seat of one match as fast as the server answers. For each game it
prints the match's requests, seconds, the overall rate and the **peak per token**: the
most requests one seat token sent within any one second (a sliding window over the
requests' start times). Benchmarks print figures and never pass or fail.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

from .api import Server

ROOT = Path(__file__).resolve().parent.parent
#: no per-address or per-token limit: the bot's own rate is measured
UNLIMITED = {"QAHWA_RATE_PER_SECOND_PER_IP": "0", "QAHWA_RATE_PER_SECOND_PER_TOKEN": "0"}


def bot_code() -> str:
    """docs/bot.md's python block, as written."""
    text = (ROOT / "docs" / "bot.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text, re.S)
    assert found is not None, "docs/bot.md has no python block"
    return found.group(1)


def peak_per_second(times: list[float]) -> int:
    """The most of ``times`` (sorted) within any window of one second."""
    best, j = 0, 0
    for i, t in enumerate(times):
        while t - times[j] >= 1.0:
            j += 1
        best = max(best, i - j + 1)
    return best


def measure(game: str, url: str, key: str) -> tuple[int, float, int, str]:
    """One bot run of ``game``: (requests, seconds, peak per token, the bot's last line)."""
    sent: dict[str, list[float]] = defaultdict(list)
    inner = httpx.HTTPTransport.handle_request

    def counting(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        sent[request.headers.get("authorization", "")].append(time.monotonic())
        return inner(self, request)

    out = io.StringIO()
    old_argv, old_env = sys.argv, dict(os.environ)
    sys.argv = ["bot.py", game]
    os.environ.update({"QAHWA_URL": url, "OPERATOR_KEY": key})
    httpx.HTTPTransport.handle_request = counting  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as d, contextlib.chdir(d):
            with contextlib.redirect_stdout(out):
                exec(compile(bot_code(), "bot.py", "exec"), {"__name__": "bot"})
    finally:
        httpx.HTTPTransport.handle_request = inner  # type: ignore[method-assign]
        sys.argv = old_argv
        os.environ.clear()
        os.environ.update(old_env)
    every = sorted(t for ts in sent.values() for t in ts)
    peak = max(peak_per_second(ts) for who, ts in sent.items() if who)
    return len(every), every[-1] - every[0], peak, out.getvalue().strip()


def main(games: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        server = Server("qahwa", f"sqlite:///{d}/q.db", Path(d), env=UNLIMITED)
        try:
            assert server.key is not None
            print(f"{'game':14} {'requests':>8} {'seconds':>8} {'req/s':>6} {'peak/token/s':>13}")
            for game in games:
                n, seconds, peak, said = measure(game, server.url, server.key)
                print(f"{game:14} {n:8d} {seconds:8.1f} {n / seconds:6.0f} {peak:13d}  ({said})")
        finally:
            server.stop()


if __name__ == "__main__":
    main(sys.argv[1:] or ["tawla", "iraqi_domino", "hokm"])
