"""verify over HTTP: transcript URLs, --server/--match, and the demo against an API server.

The demo is tested against a small in-process stand-in for the HTTP API (the subset of
docs/spec/api.md the demo uses, built on the real engines and fairness code), and
against the real service when it is importable.
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from fairness import PROTOCOL, canonical_ruleset, commitment, match_key, new_server_seed
from games.base import Chance
from games.errors import ActionError, GameError
from games.registry import find_engine
from games.transcript import build_transcript, simulate_match
from tests.support import serving
from tests.verify.test_verify_cli_helpers import (
    SIGNER,
    any_match,
    games_and_rng,
    keys_doc,
    resign,
    run,
    write,
)
from verify_cli.demo import run_demo
from verify_cli.main import app


class FakeApi:
    """Matches and rng sessions over HTTP, signed with the tests' key; ``docs`` are static."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}
        self.matches: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.serve_keys = True

    # -- match life ------------------------------------------------------------------------
    def create(self, body: dict[str, Any], rng: bool = False) -> dict[str, Any]:
        game = "rng" if rng else body["game"]
        cls = find_engine(game, protocol=PROTOCOL)
        parsed = cls.parse_ruleset(body.get("ruleset") or {}, protocol=PROTOCOL)
        n = cls.seat_count(parsed)
        names = [s.get("name") for s in body.get("seats", [])] if not rng else ["session"]
        if len(names) != n:
            raise GameError(f"{game} needs {n} seats")
        mid = secrets.token_hex(6)
        seed = new_server_seed()
        m = {
            "id": mid,
            "game": game,
            "cls": cls,
            "parsed": parsed,
            "ruleset": canonical_ruleset(parsed),
            "seed": seed,
            "names": names,
            "tokens": [secrets.token_hex(8) for _ in range(n)],
            "seeds": [None] * n,
            "engine": None,
            "events": [],
            "version": 0,
        }
        self.matches[mid] = m
        if rng:
            m["seeds"] = [body.get("client_seed") or "server-seed"]
            self.start(m)
        return m

    def start(self, m: dict[str, Any]) -> None:
        key = match_key(m["seed"], m["id"], m["game"], m["ruleset"], m["seeds"])
        m["chance"] = Chance(key)
        m["engine"] = m["cls"](m["parsed"], m["chance"])
        self.take(m)

    def take(self, m: dict[str, Any], produced: list[dict[str, Any]] | None = None) -> None:
        """Log ``produced`` (an action's events) or else the start's draws."""
        for e in m["chance"].take_events() if produced is None else produced:
            m["events"].append({"seq": len(m["events"]), **e})

    def transcript(self, m: dict[str, Any]) -> dict[str, Any]:
        seats = [
            {
                "seat": i,
                "name": m["names"][i],
                "client_seed": m["seeds"][i],
                "seed_source": "player",
            }
            for i in range(len(m["names"]))
        ]
        doc = build_transcript(
            match_id=m["id"],
            game=m["game"],
            ruleset=m["ruleset"],
            server_seed=m["seed"],
            seats=seats,
            events=m["events"],
            result=m["engine"].outcome.to_json(),
        )
        return SIGNER.signed(doc)

    def seat_of(self, m: dict[str, Any], headers: Any) -> int | None:
        auth = headers.get("Authorization", "")
        tok = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
        return m["tokens"].index(tok) if tok in m["tokens"] else None

    def handle(self, method: str, path: str, body: Any, headers: Any) -> tuple[int, Any]:
        self.requests.append((method, path))
        parts = path.strip("/").split("/")
        if path in self.docs:
            return 200, self.docs[path]
        if path == "/v1/keys":
            return (200, keys_doc()) if self.serve_keys else (404, {"error": {"code": "nf"}})
        with self.lock:
            if method == "POST" and path == "/v1/matches":
                m = self.create(body)
                return 201, {
                    "match_id": m["id"],
                    "game": m["game"],
                    "ruleset": m["ruleset"],
                    "commitment": commitment(m["seed"]),
                    "status": "seating",
                    "seats": [
                        {"seat": i, "name": m["names"][i], "token": t}
                        for i, t in enumerate(m["tokens"])
                    ],
                }
            if method == "POST" and path == "/v1/rng":
                m = self.create(body, rng=True)
                return 201, {
                    "session_id": m["id"],
                    "commitment": commitment(m["seed"]),
                    "token": m["tokens"][0],
                }
            if len(parts) < 3 or parts[2] not in self.matches:
                return 404, {"error": {"code": "not_found", "message": path}}
            m = self.matches[parts[2]]
            seat = self.seat_of(m, headers)
            eng = m["engine"]
            tail = parts[3:]
            if tail == ["transcript"]:
                if eng is None or eng.outcome is None:
                    return 409, {"error": {"code": "running", "message": "not over"}}
                return 200, self.transcript(m)
            if seat is None:
                return 401, {"error": {"code": "auth", "message": "no token"}}
            if tail[:1] == ["seats"] and tail[2:] == ["seed"]:
                m["seeds"][int(tail[1])] = body["client_seed"]
                if all(m["seeds"]):
                    self.start(m)
                return 200, {"ok": True}
            if tail == ["state"]:
                if eng is None:
                    return 200, {"status": "seating", "turn": None, "version": 0}
                return 200, {**eng.view(seat), "version": m["version"]}
            if tail == ["actions"]:
                if body.get("version") != m["version"]:
                    return 409, {"error": {"code": "stale", "message": "stale version"}}
                try:
                    produced = eng.apply(seat, body["action"])
                except ActionError as exc:
                    return 422, {"error": {"code": "illegal", "message": str(exc)}}
                self.take(m, produced)
                m["version"] += 1
                return 200, {**eng.view(seat), "version": m["version"]}
            if tail == ["draws"]:
                self.take(m, eng.apply(0, {"type": "draw", **body}))
                return 200, {"result": m["events"][-1]}
            if tail == ["close"]:
                eng.apply(0, {"type": "close"})
                m["events"].append(
                    {
                        "seq": len(m["events"]),
                        "type": "action",
                        "seat": 0,
                        "action": {"type": "close"},
                    }
                )
                return 200, {"transcript": self.transcript(m)}
        return 404, {"error": {"code": "not_found", "message": path}}


@pytest.fixture
def api() -> Iterator[tuple[FakeApi, str]]:
    fake = FakeApi()

    class Handler(BaseHTTPRequestHandler):
        def _do(self, method: str) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else None
            path = self.path.split("?")[0]
            try:
                code, out = fake.handle(method, path, body, self.headers)
            except (GameError, KeyError, ValueError) as exc:
                code, out = 400, {"error": {"code": "bad", "message": str(exc)}}
            data = json.dumps(out).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._do("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._do("POST")

        def log_message(self, *args: Any) -> None:
            pass

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        yield fake, url


# -- transcript URLs ---------------------------------------------------------------------------


def test_transcript_url_verifies_with_keys_from_the_server(api: tuple[FakeApi, str]) -> None:
    fake, base = api
    doc = any_match("rng")
    fake.docs["/v1/matches/abc/transcript"] = doc
    res = run(f"{base}/v1/matches/abc/transcript")
    assert res.exit_code == 0, res.output
    assert "VERIFIED" in res.stdout
    assert "fetched from the server" in res.stdout and "only as trustworthy" in res.stdout
    assert ("GET", "/v1/keys") in fake.requests
    out = json.loads(run(f"{base}/v1/matches/abc/transcript", "--json").stdout)
    assert out["results"][0]["signature"]["key_source"] == "server"
    assert out["results"][0]["signature"]["key_origin"] == f"{base}/v1/keys"


def test_server_and_match_options(api: tuple[FakeApi, str], tmp_path: Path) -> None:
    fake, base = api
    games = games_and_rng()
    good = any_match(games[0])
    bad = any_match("rng")
    bad["result"]["scores"] = [42]
    fake.docs["/v1/matches/g1/transcript"] = good
    fake.docs["/v1/matches/b1/transcript"] = resign(bad)
    res = run("--server", base, "--match", "g1")
    assert res.exit_code == 0, res.output
    res = run("--server", base, "--match", "g1", "--match", "b1", "--json")
    assert res.exit_code == 1
    statuses = [r["status"] for r in json.loads(res.stdout)["results"]]
    assert statuses == ["verified", "failed"]
    # a file checked against the server's keys
    path = write(tmp_path / "t.json", good)
    assert run(path, "--server", base).exit_code == 0


def test_unknown_match_and_missing_keys_exit_2(api: tuple[FakeApi, str]) -> None:
    fake, base = api
    res = run("--server", base, "--match", "nope")
    assert res.exit_code == 2 and "HTTP 404" in res.stderr
    fake.docs["/v1/matches/abc/transcript"] = any_match("rng")
    fake.serve_keys = False
    res = run(f"{base}/v1/matches/abc/transcript")
    assert res.exit_code == 2 and "/v1/keys" in res.stderr


def test_url_with_pinned_key_does_not_ask_the_server(
    api: tuple[FakeApi, str], tmp_path: Path
) -> None:
    fake, base = api
    fake.docs["/v1/matches/abc/transcript"] = any_match("rng")
    kf = write(tmp_path / "keys.json", keys_doc())
    res = run(f"{base}/v1/matches/abc/transcript", "--key", kf)
    assert res.exit_code == 0
    assert ("GET", "/v1/keys") not in fake.requests
    assert "fetched from the server" not in res.stdout


# -- the demo ----------------------------------------------------------------------------------


@functools.cache
def _quick_game() -> str:
    """The available game whose random-bot matches are shortest (keeps the test fast)."""
    best, best_len = "rng", None
    for g in games_and_rng():
        if g == "rng":
            continue
        try:
            doc, _ = simulate_match(g, seed=0, max_actions=3000, protocol=PROTOCOL)
        except RuntimeError:
            continue
        if best_len is None or len(doc["events"]) < best_len:
            best, best_len = g, len(doc["events"])
    return best


def test_demo_plays_and_verifies() -> None:
    from tests.support.live_server import (
        LiveServer,  # the demo plays qahwa-fair/2: a real v2 service
    )

    game = _quick_game()
    buf = StringIO()
    console = Console(file=buf, width=120, emoji=False, highlight=False)
    with LiveServer() as srv:
        code = run_demo(
            srv.url, [game, "rng"] if game != "rng" else ["rng"], console=console, seed=5
        )
    text = buf.getvalue()
    assert code == 0, text
    assert text.count("VERIFIED") >= (2 if game != "rng" else 1)
    assert "fetched from the server" in text
    if game != "rng":
        assert "every seat checked the lock in the log and revealed" in text
        assert "signed actions" in text


def _lying(
    monkeypatch: pytest.MonkeyPatch, path_end: str, lie: Callable[[Any], Any]
) -> list[tuple[str, str]]:
    """The demo's API calls, with the answers of paths ending ``path_end`` altered."""
    import verify_cli.demo as demo

    calls: list[tuple[str, str]] = []
    real = demo._Api.call

    def call(self: Any, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        calls.append((method, path))
        code, data = real(self, method, path, **kw)
        if path.endswith(path_end):
            data = lie(data)
        return code, data

    monkeypatch.setattr(demo._Api, "call", call)
    return calls


def test_demo_reports_a_lying_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.live_server import LiveServer

    def forged(closed: Any) -> Any:  # the session's transcript comes with /close
        closed["transcript"]["events"][0]["result"] = [7, 7]  # no six-sided die shows 7
        return closed

    _lying(monkeypatch, "/close", forged)
    buf = StringIO()
    with LiveServer() as srv:
        code = run_demo(srv.url, ["rng"], console=Console(file=buf, width=120), seed=1)
    assert code == 1
    assert "FAILED" in buf.getvalue()


def test_demo_seats_do_not_reveal_against_a_lock_missing_from_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.live_server import LiveServer

    def elsewhere(proof: Any) -> Any:
        proof["leaf"] = {"type": "lock", "match_id": "another"}
        return proof

    calls = _lying(monkeypatch, "/v1/log/proof", elsewhere)
    buf = StringIO()
    with LiveServer() as srv:
        code = run_demo(srv.url, ["tawla"], console=Console(file=buf, width=120), seed=1)
    assert code == 2 and "is not this lock" in buf.getvalue()
    assert not [p for m, p in calls if p.endswith("/reveal")]
    assert len([p for m, p in calls if p.endswith("/commit")]) == 2


def test_demo_command_with_unreachable_server() -> None:
    res = run("demo", "--server", "http://127.0.0.1:9")
    assert res.exit_code == 2
    assert "cannot get the server's keys" in res.stdout


def test_demo_command_sends_the_operator_key() -> None:
    """A server that requires an operator key refuses the demo without one (exit 2, the
    server's reason); with ``--operator-key`` or ``$QAHWA_OPERATOR_KEY`` it plays and
    verifies. The server registers no key with the tests' httpx hook: only the demo's own
    header reaches it."""
    from service.operators import new_key
    from tests.support.live_server import LiveServer

    demo = ("demo", "--game", "rng", "--seed", "1")
    with LiveServer(operator_key=False) as srv:
        key = srv.operator_key
        keyless = CliRunner().invoke(
            app,
            [*demo, "--server", srv.url],
            env={"QAHWA_OPERATOR_KEY": None},
            catch_exceptions=False,
        )
        wrong = run(*demo, "--server", srv.url, "--operator-key", new_key())
        given = run(*demo, "--server", srv.url, "--operator-key", key)
        from_env = CliRunner().invoke(
            app,
            [*demo, "--server", srv.url],
            env={"QAHWA_OPERATOR_KEY": key},
            catch_exceptions=False,
        )
    for refused in (keyless, wrong):
        assert refused.exit_code == 2, refused.output
        assert "POST /v1/rng answered HTTP 401" in refused.output
        assert "VERIFIED" not in refused.output
    for ok in (given, from_env):
        assert ok.exit_code == 0, ok.output
        assert "VERIFIED" in ok.output and "FAILED" not in ok.output
    assert key not in given.output + from_env.output


def test_demo_unknown_game_is_reported(api: tuple[FakeApi, str]) -> None:
    _, base = api
    buf = StringIO()
    code = run_demo(base, ["chess"], console=Console(file=buf, width=120))
    assert code == 2 and "chess" in buf.getvalue()


def _demo_on_real_service(games: list[str] | None) -> None:
    from tests.support.live_server import (
        LiveServer,  # the service's own test server (SQLite, temp keys)
    )

    buf = StringIO()
    with LiveServer() as srv:  # a service that does not start fails the test
        code = run_demo(srv.url, games, console=Console(file=buf, width=120), seed=3)
    assert code == 0, buf.getvalue()
    assert "VERIFIED" in buf.getvalue() and "FAILED" not in buf.getvalue()


def test_demo_session_against_the_real_service() -> None:
    _demo_on_real_service(["rng"])


@pytest.mark.slow
def test_demo_every_game_against_the_real_service() -> None:
    _demo_on_real_service(None)
