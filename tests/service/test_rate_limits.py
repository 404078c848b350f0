"""Limits that keep out floods, not the operator (docs/deploy.md §5): per seat token as well
as per address, and a client that waits out a 429 and sends the identical bytes again."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from qahwa_client import ApiError, AsyncClient, Client
from tests.repo.test_docs_examples import python_blocks, run
from tests.support.fake_clock import FakeClock
from tests.support.live_server import LiveServer

#: what docs/deploy.md §5 recommends for production
DEPLOY_LIMITS: dict[str, Any] = {
    "rate_per_second_per_ip": 100,
    "rate_per_second_per_token": 500,
    "create_rate_per_minute": 600,
}


def test_deploy_md_recommends_these_limits() -> None:
    text = (Path(__file__).parents[2] / "docs" / "deploy.md").read_text(encoding="utf-8")
    for name, value in DEPLOY_LIMITS.items():
        assert f"QAHWA_{name.upper()}={value}" in text, name


def _session(c: httpx.Client) -> tuple[str, dict[str, str]]:
    r = c.post("/v1/rng", json={})
    assert r.status_code == 201, r.text
    return r.json()["session_id"], {"Authorization": f"Bearer {r.json()['token']}"}


def test_a_seat_token_has_its_own_bucket_and_made_up_tokens_are_charged_to_the_address() -> None:
    clock = FakeClock()  # the buckets refill only as told
    with (
        LiveServer(rate_per_second_per_ip=3, rate_per_second_per_token=10, clock=clock) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        one, h1 = _session(c)
        two, h2 = _session(c)
        # The address's bucket is spent by requests without a credential...
        assert [c.get("/v1/keys").status_code for _ in range(4)] == [200] * 3 + [429]
        # ...and a seat token still has its own: ten a second, then 429 for that token.
        codes = [c.get(f"/v1/rng/{one}/events", headers=h1).status_code for _ in range(11)]
        assert codes == [200] * 10 + [429]
        r = c.get(f"/v1/rng/{one}/events", headers=h1)
        assert r.status_code == 429 and r.headers["Retry-After"] == "1"
        assert r.headers["Qahwa-Limit"] == "token"
        assert "from this token" in r.json()["error"]["message"]
        assert h1["Authorization"].split()[1] not in r.text
        # Another seat's token is not held up by the first one's.
        assert c.get(f"/v1/rng/{two}/events", headers=h2).status_code == 200
        clock.advance(1.0)
        # Made-up tokens: each refused (401) and charged to the address; once its bucket is
        # empty every credentialed request from it is refused as the address's.
        bad = {"Authorization": "Bearer made-up"}
        draw = {"kind": "dice", "count": 1, "sides": 6}
        codes = [
            c.post(f"/v1/rng/{one}/draws", json=draw, headers=bad).status_code for _ in range(5)
        ]
        assert codes == [401, 401, 401, 429, 429], codes
        r = c.get(f"/v1/rng/{two}/events", headers=h2)
        assert r.status_code == 429 and "from 127.0.0.1" in r.json()["error"]["message"]
        assert r.headers["Qahwa-Limit"] == "address"
        clock.advance(2.0)  # the address's debt is paid: the good token works again
        assert c.get(f"/v1/rng/{two}/events", headers=h2).status_code == 200
        # Each refusal is counted under the limit that made it: the address's first 429,
        # the token's two, the two made-up tokens' and the good token's as the address's.
        counted = {
            line.split('"')[1]: float(line.split()[-1])
            for line in c.get("/metrics").text.splitlines()
            if line.startswith("qahwa_rate_limited_total{")
        }
        assert counted == {"create": 0, "token": 2, "address": 4, "lobby": 0}, counted


# -- the client and 429 -------------------------------------------------------------------------
class Limited:
    """A transport that answers 429 with ``Retry-After: after`` ``refusals`` times, then
    200, and keeps every request's bytes."""

    def __init__(self, refusals: int, after: str = "1") -> None:
        self.refusals = refusals
        self.after = after
        self.seen: list[tuple[str, str, bytes, str | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(
            (request.method, request.url.path, request.read(), request.headers.get("authorization"))
        )
        if len(self.seen) <= self.refusals:
            return httpx.Response(
                429,
                json={"error": {"code": "rate_limited", "message": "retry in 1 s"}},
                headers={"Retry-After": self.after},
            )
        return httpx.Response(200, json={"ok": True})


def test_the_client_waits_out_a_429_and_resends_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("qahwa_client.client.time.sleep", slept.append)
    t = Limited(2)
    with Client("http://q.test", http=httpx.Client(transport=httpx.MockTransport(t))) as qc:
        body = {"kind": "dice", "count": 2, "sides": 6, "z": "é"}
        assert qc.send("POST", "/v1/rng/r_1/draws", body, token="tok") == ({"ok": True}, 0)
        assert qc.request("GET", "/v1/rng/r_1/events", token="tok") == {"ok": True}
    posts = [s for s in t.seen if s[0] == "POST"]
    assert len(posts) == 3 and len({p[2] for p in posts}) == 1  # identical bytes
    assert all(p[3] == "Bearer tok" for p in posts)
    assert len(slept) == 2 and all(1.0 <= d <= 1.25 for d in slept), slept  # after + jitter
    # The wait is bounded: a Retry-After beyond rate_limit_wait raises the 429 at once.
    slept.clear()
    t = Limited(5, after="120")
    http = httpx.Client(transport=httpx.MockTransport(t))
    with Client("http://q.test", http=http, rate_limit_wait=60) as qc:
        with pytest.raises(ApiError) as err:
            qc.send("POST", "/v1/rng/r_1/draws", {"kind": "dice"})
    assert err.value.status == 429 and err.value.code == "rate_limited"
    assert slept == [] and len(t.seen) == 1
    # Repeated 429s stop once their waits would pass the budget.
    t = Limited(100, after="1")
    http = httpx.Client(transport=httpx.MockTransport(t))
    with Client("http://q.test", http=http, rate_limit_wait=5) as qc:
        with pytest.raises(ApiError):
            qc.request("GET", "/v1/keys")
    assert 3 <= len(slept) <= 5 and sum(slept) <= 5


def test_the_async_client_waits_out_a_429_and_resends_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []

    async def fake_sleep(d: float) -> None:
        slept.append(d)

    monkeypatch.setattr("qahwa_client.aio.asyncio.sleep", fake_sleep)
    t = Limited(2)

    async def go() -> None:
        http = httpx.AsyncClient(transport=httpx.MockTransport(t))
        async with AsyncClient("http://q.test", http=http) as qc:
            assert await qc.send("POST", "/v1/rng/r_1/draws", {"n": 1}, token="t") == (
                {"ok": True},
                0,
            )
            assert await qc.request("GET", "/v1/keys") == {"ok": True}
        await http.aclose()

    asyncio.run(go())
    posts = [s for s in t.seen if s[0] == "POST"]
    assert len(posts) == 3 and len({p[2] for p in posts}) == 1
    assert len(slept) == 2 and all(1.0 <= d <= 1.25 for d in slept), slept


def test_a_429_from_the_server_is_retried_after_retry_after_with_the_same_bytes() -> None:
    """Against a real server whose per-token limit is 1 a second: three draws sent back to
    back all succeed, the refused ones resent byte for byte after Retry-After."""
    sent: list[tuple[str, bytes]] = []

    def keep(request: httpx.Request) -> None:
        sent.append((request.url.path, request.read()))

    with LiveServer(rate_per_second_per_token=1) as srv:
        http = httpx.Client(timeout=30, event_hooks={"request": [keep]})
        with Client(srv.url, http=http) as qc:
            sess = qc.rng()
            sess.send_seed("limits")
            results = [sess.dice(n, 6) for n in (1, 2, 3)]
        http.close()
    assert len(results) == 3
    draws = [b for p, b in sent if p.endswith("/draws")]
    assert len(draws) > 3  # some were refused and sent again...
    assert len(set(draws)) == 3  # ...as the same bytes


# -- the bot under deploy.md's limits ------------------------------------------------------------
def _bot(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    limits: dict[str, Any],
    game: str = "iraqi_domino",
    anonymous: list[str] | None = None,
) -> tuple[str, int]:
    """docs/bot.md's bot, run as written against a server with ``limits`` (its game
    ``game``, as ``bot.py GAME``): its output and how many 429s it was answered (the paths
    it asked without a credential are added to ``anonymous``)."""
    (code,) = python_blocks("bot.md")
    if game != "iraqi_domino":
        code = code.replace('sys.argv[1] if len(sys.argv) > 1 else "iraqi_domino"', repr(game))
        assert repr(game) in code
    monkeypatch.chdir(tmp_path)  # it keeps transcript.json there
    refused = 0
    inner = httpx.HTTPTransport.handle_request

    def counting(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        nonlocal refused
        response = inner(self, request)
        refused += response.status_code == 429
        if anonymous is not None and "authorization" not in request.headers:
            anonymous.append(request.url.path)
        return response

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", counting)
    with LiveServer(**limits) as srv:
        out = run(code, srv.url, monkeypatch)
    return out, refused


BOT_DONE = re.compile(r"iraqi_domino: \d+ moves, finished; transcript verified\n(.*\n)*")


@pytest.mark.parametrize("game", ["iraqi_domino", "tawla"])
def test_the_bot_runs_under_deploy_md_limits_with_no_429(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, game: str
) -> None:
    """deploy.md's per-token rate fits the bot (a tawla seat rolls and moves several times
    in a row, as fast as the server answers): not one request is refused."""
    anonymous: list[str] = []
    out, refused = _bot(monkeypatch, tmp_path, DEPLOY_LIMITS, game, anonymous)
    assert re.fullmatch(BOT_DONE.pattern.replace("iraqi_domino", game), out), out
    assert refused == 0
    # a seat reads with its own token, so its pace is held to the token's rate: what the
    # address is charged is a handful of reads per seat (the lock, its log proof; the keys,
    # the transcript), not one per view (the events a seat reads to hold them to a head)
    assert len(anonymous) <= 24, sorted(set(anonymous))


def test_the_bot_takes_its_url_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/bot.md's block as written (its default URL left in place): QAHWA_URL says
    where it plays."""
    (code,) = python_blocks("bot.md")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["bot.py"])
    with LiveServer() as srv:
        monkeypatch.setenv("QAHWA_URL", srv.url)
        monkeypatch.setenv("OPERATOR_KEY", srv.operator_key)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "bot.py", "exec"), {"__name__": "bot"})
    assert BOT_DONE.fullmatch(out.getvalue()), out.getvalue()


@pytest.mark.slow  # ~30 s: a token's one request a second
def test_the_bot_runs_to_the_end_when_it_is_limited(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Limits tight enough that the bot is refused again and again: it waits them out. One
    request a second per token refuses every request sent within a second of the last,
    however fast or slow the machine (at four a second, a loaded machine's slower answers
    kept the bot under the limit)."""
    limits = {"rate_per_second_per_ip": 10, "rate_per_second_per_token": 1}
    out, refused = _bot(monkeypatch, tmp_path, limits)
    assert BOT_DONE.fullmatch(out), out
    assert refused >= 3, refused
