"""The request layer's hot routes (service/front.py ``HotRoute``, issue 50): a move's GET state
and POST action are served by ``Front`` without the framework's dispatch when the request is
plain, and every answer is the framework's, byte for byte, whichever path served it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairness import seat_sig_message
from service.front import Front, HotRoute
from service.server import ServerThread
from service.settings import Settings
from tests.service.test_service_hot import started
from tests.support.fake_clock import FakeClock


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[httpx.Client, Front, list[str], Any]]:
    """A live server on a started keyed hokm match; the app's Front; the paths the hot
    routes answered (recorded as their answer starts)."""
    clock = FakeClock()  # refusals carry the time: the same on both paths
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'q.db'}", data_dir=tmp_path)
    with ServerThread(settings, clock=clock) as srv, httpx.Client(base_url=srv.url) as client:
        app = srv.app
        assert client.get("/healthz").status_code == 200  # builds the middleware stack
        layer: Any = app.middleware_stack
        while not isinstance(layer, Front):
            layer = layer.app
        hits: list[str] = []
        for hot in layer.hot:

            def spy(
                scope: Any, receive: Any, send: Any, *rest: Any, _serve: Any = hot.serve
            ) -> Any:
                async def sending(message: Any) -> None:
                    if message["type"] == "http.response.start":  # before the client has it
                        hits.append(scope["path"])
                    await send(message)

                return _serve(scope, receive, sending, *rest)

            hot.serve = spy  # type: ignore[method-assign,assignment]
        yield client, layer, hits, started(app.state.service)


def both(front: Front, send: Any) -> tuple[Any, Any]:
    """The answer through the hot route, then through the framework (no hot routes)."""
    hot = send()
    kept, front.hot = front.hot, []
    try:
        framework = send()
    finally:
        front.hot = kept
    return hot, framework


def same(a: Any, b: Any) -> None:
    assert (a.status_code, a.content) == (b.status_code, b.content)
    drop = {"x-request-id", "date"}
    assert [(k, v) for k, v in a.headers.items() if k not in drop] == [
        (k, v) for k, v in b.headers.items() if k not in drop
    ]


def test_the_moves_two_routes_are_hot(served: Any) -> None:
    _, front, _, _ = served
    assert sorted((h.method, h.route.path) for h in front.hot) == [
        ("GET", "/v1/matches/{match_id}/state"),
        ("POST", "/v1/matches/{match_id}/actions"),
    ]


def test_a_route_that_is_not_plain_is_not_taken(served: Any) -> None:
    client, _, _, _ = served
    from fastapi.routing import APIRoute

    from service.routes import matches

    create = next(
        r for r in matches.router.routes if isinstance(r, APIRoute) and r.name == "create_match"
    )
    assert HotRoute.of(create) is None  # a plain def, answering a dict, behind a dependency


def test_reads_answer_the_same_on_both_paths(served: Any) -> None:
    client, front, hits, (mid, tokens, _) = served
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    for path, headers, hot in [
        (f"/v1/matches/{mid}/state", auth, True),  # 200, the seat's view
        (f"/v1/matches/{mid}/state", {"Authorization": "Bearer nope"}, True),  # 401
        (f"/v1/matches/{mid}/state", {}, True),  # 401, no token
        ("/v1/matches/nosuch/state", auth, True),  # 404
        (f"/v1/matches/{'x' * 65}/state", auth, False),  # 422: the framework's check
        # a seat following the log: its view with the events after its last (its bounds
        # are -1 and 2**31 - 1)
        (f"/v1/matches/{mid}/state?events_after=0", auth, True),
        (f"/v1/matches/{mid}/state?events_after=-1", auth, True),
        (f"/v1/matches/{mid}/state?events_after=3", auth, True),
        (f"/v1/matches/{mid}/state?events_after=2147483647", auth, True),
        (f"/v1/matches/{mid}/state?events_after=3", {}, True),  # 401
        # anything else in a query: the framework, whatever it answers
        (f"/v1/matches/{mid}/state?events_after=x", auth, False),  # 422
        (f"/v1/matches/{mid}/state?events_after=-2", auth, False),  # 422, below -1
        (f"/v1/matches/{mid}/state?events_after=2147483648", auth, False),  # 422, above
        (f"/v1/matches/{mid}/state?events_after=03", auth, False),  # the framework reads 3
        (f"/v1/matches/{mid}/state?events_after=%33", auth, False),  # 3, percent-encoded
        (f"/v1/matches/{mid}/state?events_after=+3", auth, False),
        (f"/v1/matches/{mid}/state?events_after=1&events_after=3", auth, False),  # the last
        (f"/v1/matches/{mid}/state?events_after=3&other=1", auth, False),  # ignored
        (f"/v1/matches/{mid}/state?other=1", auth, False),
        (f"/v1/matches/{mid}/state?events_after=", auth, False),
        (f"/v1/matches/{mid}/state?events_after=3&", auth, False),
        # the view's sealed block, full or brief: one of its words, letter for letter
        (f"/v1/matches/{mid}/state?sealed=brief", auth, True),
        (f"/v1/matches/{mid}/state?sealed=full", auth, True),
        (f"/v1/matches/{mid}/state?events_after=3&sealed=brief", auth, True),
        (f"/v1/matches/{mid}/state?sealed=brief&events_after=3", auth, True),
        (f"/v1/matches/{mid}/state?sealed=brief", {}, True),  # 401
        (f"/v1/matches/{mid}/state?sealed=%62rief", auth, False),  # brief, percent-encoded
        (f"/v1/matches/{mid}/state?sealed=Brief", auth, False),  # 422
        (f"/v1/matches/{mid}/state?sealed=", auth, False),  # 422
        (f"/v1/matches/{mid}/state?sealed", auth, False),  # 422
        (f"/v1/matches/{mid}/state?sealed=brief&sealed=full", auth, False),  # the last
        (f"/v1/matches/{mid}/state?sealed=full&sealed=bogus", auth, False),  # 422
    ]:
        hits.clear()
        a, b = both(front, lambda p=path, h=headers: client.get(p, headers=h))
        same(a, b)
        assert hits == ([path.split("?")[0]] if hot else []), path
    assert client.get(f"/v1/matches/{mid}/state", headers=auth).status_code == 200


def test_refused_actions_answer_the_same_on_both_paths(served: Any) -> None:
    client, front, hits, (mid, tokens, signers) = served
    view = client.get(
        f"/v1/matches/{mid}/state", headers={"Authorization": f"Bearer {tokens[0]}"}
    ).json()
    seat = view["turn"]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    view = client.get(f"/v1/matches/{mid}/state", headers=auth).json()
    action = view["legal_actions"][0]
    sig = signers[seat].sign_bytes(
        seat_sig_message(mid, view["chain"], {"type": "action", "seat": seat, "action": action})
    )
    url = f"/v1/matches/{mid}/actions"
    good = {"action": action, "version": view["version"], "sig": sig}
    for body, headers, hot in [
        ({**good, "version": view["version"] + 5}, auth, True),  # 409 stale_version, signed
        ({**good, "sig": sig[:-4] + "AAA="}, auth, True),  # bad_signature, signed
        ({**good, "action": {"type": "nonsense"}}, auth, True),  # malformed/illegal, signed
        (good, {"Authorization": "Bearer nope"}, True),  # 401, signed
        ({**good, "extra": 1}, auth, False),  # 422 from the model: the framework's
        # (the route's own query, sealed=brief, is below)
        ([good], auth, False),  # not an object
    ]:
        hits.clear()
        a, b = both(front, lambda j=body, h=headers: client.post(url, json=j, headers=h))
        same(a, b)
        assert a.status_code >= 400 and "refusal" in a.json(), a.text
        assert hits == ([url] if hot else []), (body, a.text)
    for raw, ctype in [(b"{", "application/json"), (b"{}", "text/plain")]:
        hits.clear()
        a, b = both(
            front,
            lambda r=raw, c=ctype: client.post(url, content=r, headers={**auth, "content-type": c}),
        )
        same(a, b)
        assert hits == []
    # a query string on the action: its one parameter (sealed) through the hot route, as a
    # word; anything else the framework's, which ignores an unknown one
    stale = {**good, "version": view["version"] + 5}
    for query, hot, status in [
        ("?sealed=brief", True, 409),
        ("?sealed=full", True, 409),
        ("?events_after=1", False, 409),
        ("?sealed=%62rief", False, 409),
        ("?sealed=short", False, 422),
    ]:
        hits.clear()
        a, b = both(front, lambda q=query: client.post(url + q, json=stale, headers=auth))
        same(a, b)
        assert a.status_code == status and hits == ([url] if hot else []), (query, a.text)
    # the action itself, through the hot route: counted in /metrics under its route
    hits.clear()
    done = client.post(url, json=good, headers=auth)
    assert done.status_code == 200, done.text
    assert hits == [url]
    assert client.get(f"/v1/matches/{mid}/state", headers=auth).json()["version"] == (
        view["version"] + 1
    )
    metrics = client.get("/metrics").text
    assert (
        'qahwa_http_requests_total{method="POST",route="/v1/matches/{match_id}/actions",'
        'status="200"} 1.0'
    ) in metrics
    assert 'qahwa_actions_total{kind="match"} 1.0' in metrics
