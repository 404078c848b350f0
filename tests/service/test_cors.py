"""Cross-origin reads (docs/spec/api.md "Cross-origin reads", service/front.py): the public
reads a verifier needs answer any origin with ``Access-Control-Allow-Origin: *`` and no
credentials, their preflight included; nothing else is cross-origin."""

from __future__ import annotations

import httpx
import pytest

from tests.support.http_play import play_to_end

ORIGIN = {"Origin": "http://127.0.0.1:8765"}


@pytest.fixture(scope="module")
def finished(server: object) -> str:
    """A finished v2 tawla match on the module's live server."""
    url = server.url  # type: ignore[attr-defined]
    with httpx.Client(base_url=url, timeout=30) as c:
        return play_to_end(c, "tawla", {"match_length": 1}, seed=5)


def _public_reads(mid: str) -> list[str]:
    return [
        "/v1/keys",
        f"/v1/matches/{mid}/transcript",
        f"/v1/matches/{mid}/log-proof",
        "/v1/log",
        "/v1/log/entries?start=0&limit=2",
        "/v1/log/proof?index=0",
        "/v1/log/consistency?first=1&second=2",
        "/log/checkpoint",
        "/log/tile/entries/000.p/1",
    ]


def test_public_reads_answer_any_origin(client: httpx.Client, finished: str) -> None:
    for path in _public_reads(finished):
        for origin in (ORIGIN, {"Origin": "null"}, {}):
            r = client.get(path, headers=origin)
            assert r.status_code == 200, (path, r.status_code, r.text[:200])
            assert r.headers.get("access-control-allow-origin") == "*", path
            assert "access-control-allow-credentials" not in r.headers, path
        h = client.head(path, headers=ORIGIN)
        assert h.headers.get("access-control-allow-origin") == "*", path


def test_errors_of_public_reads_are_readable_cross_origin(client: httpx.Client) -> None:
    # the page shows the server's message: a 404 of a public read is readable too
    r = client.get("/v1/matches/m-nosuchmatch/transcript", headers=ORIGIN)
    assert r.status_code == 404
    assert r.headers.get("access-control-allow-origin") == "*"
    assert r.json()["error"]["code"] == "not_found"


def test_preflight_of_public_reads(client: httpx.Client, finished: str) -> None:
    for path in _public_reads(finished):
        r = client.options(
            path,
            headers={
                **ORIGIN,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "cache-control",
            },
        )
        assert r.status_code == 204, (path, r.status_code)
        assert r.headers["access-control-allow-origin"] == "*"
        assert set(r.headers["access-control-allow-methods"].replace(" ", "").split(",")) == {
            "GET",
            "HEAD",
        }
        assert r.headers["access-control-allow-headers"] == "cache-control"
        assert "access-control-allow-credentials" not in r.headers
    # a preflight for a write to a public path is refused
    r = client.options("/v1/keys", headers={**ORIGIN, "Access-Control-Request-Method": "POST"})
    assert r.status_code == 405
    assert "access-control-allow-origin" not in r.headers


def test_nothing_else_is_cross_origin(client: httpx.Client, finished: str) -> None:
    for path in (
        f"/v1/matches/{finished}",
        f"/v1/matches/{finished}/events",
        f"/v1/matches/{finished}/lock",
        "/healthz",
        "/verify",
        "/openapi.json",
        "/metrics",
        "/",
    ):
        r = client.get(path, headers=ORIGIN)
        assert "access-control-allow-origin" not in r.headers, path
        pre = client.options(path, headers={**ORIGIN, "Access-Control-Request-Method": "GET"})
        assert "access-control-allow-origin" not in pre.headers, path
    # writes never are, not even to a match's public paths
    r = client.post("/v1/matches", json={"game": "tawla", "ruleset": {}}, headers=ORIGIN)
    assert r.status_code == 201
    assert "access-control-allow-origin" not in r.headers
    pre = client.options("/v1/matches", headers={**ORIGIN, "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in pre.headers
