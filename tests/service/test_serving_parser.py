"""The HTTP parser (service/serving.py, issue 50): ``qahwa serve`` parses requests with
httptools (``GuardedHttpToolsProtocol``) instead of h11, and its answers are h11's byte for
byte; the guard (head and body timeouts, the connection cap, and a head size limit that
llhttp lacks) holds on both."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service import cli
from service.server import ServerThread
from service.serving import (
    MAX_HEAD_BYTES,
    GuardedH11Protocol,
    GuardedHttpToolsProtocol,
)
from service.settings import Settings
from tests.support.fake_clock import FakeClock

DATE = re.compile(rb"\r\ndate: [^\r]*")


@pytest.fixture()
def pair(tmp_path: Path) -> Iterator[tuple[ServerThread, ServerThread, str]]:
    """The same app state served twice, by httptools and by h11 (one database, one data
    dir, one clock: the same keys, the same signatures); a started match's id."""
    clock = FakeClock()
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'q.db'}",
        data_dir=tmp_path,
        header_timeout_seconds=0.5,
        body_timeout_seconds=0.5,
    )
    with (
        ServerThread(settings, clock=clock, http=GuardedHttpToolsProtocol) as fast,
        ServerThread(settings, clock=clock, http=GuardedH11Protocol) as ref,
    ):
        key = settings.operator_key_path.read_text(encoding="ascii").strip()
        r = httpx.post(
            fast.url + "/v1/matches",
            json={"game": "tawla"},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert r.status_code == 201, r.text
        yield fast, ref, r.json()["match_id"]


def _exchange(url: str, raw: bytes, *, pause: float = 0.0) -> bytes:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        if pause:  # in two parts: the parser sees an incomplete head first
            s.sendall(raw[:-4])
            time.sleep(pause)
            try:
                s.sendall(raw[-4:])
            except OSError:
                pass  # already answered and closed
        else:
            s.sendall(raw)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return DATE.sub(b"", out)


def _requests(mid: str) -> list[bytes]:
    rid = b"X-Request-ID: same-id\r\n"
    close = b"Connection: close\r\n"
    body = b'{"action": {"type": "nope"}}'
    post = (
        f"POST /v1/matches/{mid}/actions HTTP/1.1\r\nHost: x\r\n".encode()
        + rid
        + b"Content-Type: application/json\r\nAuthorization: Bearer bad\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
    )
    return [
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + rid + close + b"\r\n",
        b"GET /healthz HTTP/1.0\r\n" + rid + b"\r\n",  # HTTP/1.0: closes without asking
        b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n" + rid + close + b"\r\n",
        f"GET /v1/matches/{mid} HTTP/1.1\r\nHost: x\r\n".encode() + rid + close + b"\r\n",
        f"GET /v1/matches/{mid}/events?after=0 HTTP/1.1\r\nHost: x\r\n".encode()
        + rid
        + close
        + b"\r\n",
        b"GET /v1/matches/m_nope/state HTTP/1.1\r\nHost: x\r\n" + rid + close + b"\r\n",
        post + close + b"\r\n" + body,  # a refusal (the token), signed
        post + close + b"Expect: 100-continue\r\n\r\n" + body,
        b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n" + rid + close + b"\r\n",
        # keep-alive then close, pipelined in one packet
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
        + rid
        + b"\r\nGET /v1/keys HTTP/1.1\r\nHost: x\r\n"
        + rid
        + close
        + b"\r\n",
        f"GET /v1/matches/{mid}/events/stream?timeout=0.2 HTTP/1.1\r\nHost: x\r\n".encode()
        + rid
        + close
        + b"\r\n",  # an event stream: chunked
    ]


def test_httptools_answers_are_h11_answers_byte_for_byte(
    pair: tuple[ServerThread, ServerThread, str],
) -> None:
    fast, ref, mid = pair
    for raw in _requests(mid):
        a, b = _exchange(fast.url, raw), _exchange(ref.url, raw)
        assert a == b, (raw, a[:400], b[:400])
        assert a.startswith(b"HTTP/1.1 "), a[:200]


def test_requests_the_parsers_refuse_get_the_same_400(
    pair: tuple[ServerThread, ServerThread, str],
) -> None:
    fast, ref, _ = pair
    for raw in (
        b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n",
        b"NOT A REQUEST\r\n\r\n",
    ):
        a = _exchange(fast.url, raw)
        assert a.startswith(b"HTTP/1.1 400 "), (raw, a[:200])
        assert a == _exchange(ref.url, raw), raw
    # Content-Length and Transfer-Encoding both (a smuggling attempt): h11 passes it on to
    # the app (which refuses it), llhttp refuses it itself
    smuggled = (
        b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    assert _exchange(fast.url, smuggled).startswith(b"HTTP/1.1 400 ")
    # a method llhttp does not know: its 400 (h11 passed it on: the app answers 404)
    brew = b"BREW /pot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    assert _exchange(fast.url, brew).startswith(b"HTTP/1.1 400 ")
    assert _exchange(ref.url, brew).startswith(b"HTTP/1.1 404 ")


def test_a_head_too_large_is_refused_as_h11_refuses_it(
    pair: tuple[ServerThread, ServerThread, str],
) -> None:
    fast, ref, _ = pair
    raw = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (MAX_HEAD_BYTES + 100)
    raw += b"\r\n\r\n"
    a = _exchange(fast.url, raw, pause=0.1)
    assert a.startswith(b"HTTP/1.1 400 "), a[:200]
    assert a == _exchange(ref.url, raw, pause=0.1)
    ok = _exchange(fast.url, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert ok.startswith(b"HTTP/1.1 200 ")


def test_a_body_after_an_early_answer_is_not_taken_for_a_head(
    pair: tuple[ServerThread, ServerThread, str],
) -> None:
    """A body the app answered before reading it (too large, as declared) goes on arriving
    after the answer: the head size limit counts heads only, so no 400 follows the 413."""
    fast, _, _ = pair
    host, port = fast.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            b"POST /v1/rng HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 10000000\r\n\r\n"
        )
        out = s.recv(65536)
        for _ in range(8):  # 4 × MAX_HEAD_BYTES of body after the answer
            try:
                s.sendall(b"x" * (MAX_HEAD_BYTES // 2))
            except OSError:
                break
            time.sleep(0.02)
        s.settimeout(0.5)
        try:
            while chunk := s.recv(65536):
                out += chunk
        except TimeoutError:
            pass
    assert out.startswith(b"HTTP/1.1 413 "), out[:200]
    assert b"HTTP/1.1 400 " not in out, out  # (the header timeout may close it: a 408)


@pytest.mark.parametrize("name", ["fast", "ref"])
def test_both_parsers_keep_the_header_and_body_timeouts(
    pair: tuple[ServerThread, ServerThread, str], name: str
) -> None:
    fast, ref, mid = pair
    url = fast.url if name == "fast" else ref.url
    t0 = time.monotonic()
    slow = _exchange(url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
    assert slow.startswith(b"HTTP/1.1 408 ") and b"request_timeout" in slow, slow
    assert time.monotonic() - t0 < 8
    slow_body = _exchange(
        url,
        f"POST /v1/matches/{mid}/actions HTTP/1.1\r\nHost: x\r\n".encode()
        + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        + b'{"action":',
    )
    assert slow_body.startswith(b"HTTP/1.1 408 ") and b"request_timeout" in slow_body


def test_qahwa_serve_and_in_process_servers_parse_with_httptools() -> None:
    import inspect

    assert "http=GuardedHttpToolsProtocol," in inspect.getsource(cli.serve.callback)  # type: ignore[arg-type]
    assert inspect.signature(ServerThread).parameters["http"].default is GuardedHttpToolsProtocol
