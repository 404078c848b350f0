"""Request bodies the API cannot take get the documented error shape and code, never the
framework's own text: not UTF-8, nested too deep, a repeated key, too large (declared or
chunked)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from service.front import MAX_JSON_DEPTH, json_body_problem
from tests.support.http_play import documented_error
from tests.support.live_server import LiveServer


@pytest.fixture()
def seat(server: LiveServer) -> Iterator[tuple[httpx.Client, str, dict[str, str]]]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        created = c.post("/v1/matches", json={"game": "hokm"}).json()
        hdr = {
            "Authorization": f"Bearer {created['seats'][0]['token']}",
            "Content-Type": "application/json",
        }
        yield c, f"/v1/matches/{created['match_id']}/seats/0/commit", hdr


COMMIT = b'"' + b"ab" * 32 + b'"'  # a well-formed seed_commitment


def _error(r: httpx.Response, status: int, code: str) -> str:
    err = documented_error(r, status)
    assert err["code"] == code, err
    message: str = err["message"]
    return message


def test_not_utf8_is_malformed_json(seat: tuple[httpx.Client, str, dict[str, str]]) -> None:
    c, url, hdr = seat
    msg = _error(
        c.post(url, content=b'{"seed_commitment": "\xff\xfe"}', headers=hdr), 400, "malformed_json"
    )
    assert "UTF-8" in msg
    _error(c.post(url, content=b"\xff", headers=hdr), 400, "malformed_json")


@pytest.mark.parametrize("open_", ["[", '{"a":'])
def test_too_deep_is_malformed_json(
    seat: tuple[httpx.Client, str, dict[str, str]], open_: str
) -> None:
    c, url, hdr = seat
    close = "]" if open_ == "[" else "}"
    deep = open_ * (MAX_JSON_DEPTH + 1) + "1" + close * (MAX_JSON_DEPTH + 1)
    assert "deeper" in _error(
        c.post(url, content=deep.encode(), headers=hdr), 400, "malformed_json"
    )
    # as deep as allowed: parsed, then refused for what it is (not an object)
    ok = "[" * MAX_JSON_DEPTH + "1" + "]" * MAX_JSON_DEPTH
    _error(c.post(url, content=ok.encode(), headers=hdr), 400, "bad_request")


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"client_seed": "' + "[" * 200 + '\\"' + "{" * 200 + '"}'
    assert json_body_problem(text.encode()) is None
    assert json_body_problem(b"[" * 65 + b"]" * 65) is not None


def test_oversize_chunked_body_is_413(
    server: LiveServer, seat: tuple[httpx.Client, str, dict[str, str]]
) -> None:
    c, url, hdr = seat
    limit = server.settings.max_body_bytes

    def chunks() -> Iterator[bytes]:  # no Content-Length: Transfer-Encoding: chunked
        yield b'{"seed_commitment": "'
        for _ in range(limit // 1000 + 2):
            yield b"x" * 1000
        yield b'"}'

    _error(c.post(url, content=chunks(), headers=hdr), 413, "body_too_large")
    small = iter([b'{"seed_commitment": ', COMMIT + b"}"])
    assert c.post(url, content=small, headers=hdr).status_code == 200


def test_malformed_json_still_malformed(seat: tuple[httpx.Client, str, dict[str, str]]) -> None:
    c, url, hdr = seat
    _error(c.post(url, content=b'{"seed_commitment": ', headers=hdr), 400, "malformed_json")
    _error(
        c.post(url, content=b'{"seed_commitment": "x"} trailing', headers=hdr),
        400,
        "malformed_json",
    )


def test_a_repeated_key_is_refused_and_changes_nothing(
    seat: tuple[httpx.Client, str, dict[str, str]],
) -> None:
    """fairness-v2 §1: duplicate keys are refused on input (a parser that kept the last
    one would read another value than a client that kept the first)."""
    c, url, hdr = seat
    twice = b'{"seed_commitment": ' + COMMIT + b', "seed_commitment": "' + b"cd" * 32 + b'"}'
    assert "duplicate key" in _error(c.post(url, content=twice, headers=hdr), 400, "malformed_json")
    nested = b'{"seed_commitment": ' + COMMIT + b', "key": null, "roll_chain": {"a": 1, "a": 2}}'
    _error(c.post(url, content=nested, headers=hdr), 400, "malformed_json")
    mid = url.split("/")[3]
    view = c.get(f"/v1/matches/{mid}").json()
    assert not any(s["committed"] for s in view["seats"])  # nothing changed
    assert (
        c.post(url, content=b'{"seed_commitment": ' + COMMIT + b"}", headers=hdr).status_code == 200
    )
