"""The demo: random legal bots play one full match of each game over the HTTP API, then
every transcript is verified with the same code as ``verify`` (keys fetched from the server).
"""

from __future__ import annotations

import random
import secrets
from typing import Any

import httpx
from rich.console import Console
from rich.markup import escape

from games.registry import available_games, engine_class

from .core import FAILED, UNCHECKED, UNUSABLE, VERIFIED, unusable, verify_document
from .keys import KeySet, UnusableInput, fetch_keys
from .output import make_console, print_report, print_summary


class DemoError(Exception):
    """The server did not behave as the API contract says (one-line message)."""


class _Api:
    def __init__(self, base: str, timeout: float) -> None:
        self.base = base.rstrip("/")
        self.http = httpx.Client(base_url=self.base, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, path: str, *, token: str | None = None,
             body: Any = None, ok: tuple[int, ...] = (200, 201)) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            resp = self.http.request(method, path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DemoError(f"{method} {path}: {exc.__class__.__name__}: {exc}") from None
        try:
            data = resp.json()
        except ValueError:
            data = None
        if resp.status_code not in ok:
            msg = ""
            if isinstance(data, dict) and isinstance(data.get("error"), dict):
                msg = f": {data['error'].get('code')}: {data['error'].get('message')}"
            raise DemoError(f"{method} {path} answered HTTP {resp.status_code}{msg}")
        return resp.status_code, data


# Real rulesets, on the short side so a newcomer sees every game within a few minutes:
# Shelem to 330 (a common target, the spec's default is 1200); the others as they default.
DEMO_RULESETS: dict[str, dict[str, Any]] = {"shelem": {"target": 330}}


def _play_match(api: _Api, game: str, bots: random.Random, max_actions: int,
                console: Console) -> str:
    """Create and play one match with random legal bots; return its transcript path."""
    cls = engine_class(game)
    ruleset = DEMO_RULESETS.get(game, {})
    n = cls.seat_count(cls.parse_ruleset(ruleset))
    _, created = api.call("POST", "/v1/matches", body={
        "game": game, "ruleset": ruleset, "seats": [{"name": f"bot-{i}"} for i in range(n)]})
    if not isinstance(created, dict) or "match_id" not in created:
        raise DemoError("POST /v1/matches: no match_id in the answer")
    mid = created["match_id"]
    tokens = {s["seat"]: s["token"] for s in created.get("seats", [])}
    if sorted(tokens) != list(range(n)):
        raise DemoError(f"POST /v1/matches: expected tokens for seats 0..{n - 1}")
    console.print(f"[bold]{game}[/]: match {escape(str(mid))}, {n} seats, commitment "
                  f"{str(created.get('commitment'))[:16]}…")
    for seat, token in tokens.items():
        api.call("POST", f"/v1/matches/{mid}/seats/{seat}/seed", token=token,
                 body={"client_seed": f"demo-bot{seat}-{secrets.token_hex(8)}"})
    counters = [0]
    with console.status(f"{game}: playing…") as spinner:
        _bot_loop(api, game, mid, tokens, bots, max_actions, spinner, counters)
    actions = counters[0]
    console.print(f"  played {actions} actions")
    return f"/v1/matches/{mid}/transcript"


def _bot_loop(api: _Api, game: str, mid: str, tokens: dict[int, str], bots: random.Random,
              max_actions: int, spinner: Any, counters: list[int]) -> None:
    actions = 0
    polls = 0
    seat = 0
    while True:
        polls += 1
        if polls > 4 * max_actions + 100:
            raise DemoError(f"{game}: the match does not progress")
        _, state = api.call("GET", f"/v1/matches/{mid}/state", token=tokens[seat])
        status = state.get("status")
        if status == "finished":
            break
        if status == "seating":
            api.call("POST", f"/v1/matches/{mid}/start", token=tokens[seat])
            continue
        turn = state.get("turn")
        if turn is None:
            raise DemoError(f"{game}: status {status!r} with nobody to act")
        if turn != seat:
            seat = turn
            continue
        legal = state.get("legal_actions") or []
        if not legal:
            raise DemoError(f"{game}: seat {seat} is to act but has no legal action")
        if actions >= max_actions:
            raise DemoError(f"{game}: no end after {max_actions} actions")
        # `suggested_actions` (where a view has it) is the subset of legal_actions a random
        # bot should pick from, e.g. qahve's two lowest bids: uniformly random bids make
        # contracts nobody can reach, and such a match never ends
        suggested = [a for a in state.get("suggested_actions") or [] if a in legal]
        action = bots.choice(suggested or legal)
        code, _ = api.call("POST", f"/v1/matches/{mid}/actions", token=tokens[seat],
                           body={"action": action, "version": state.get("version")},
                           ok=(200, 201, 409))
        if code != 409:  # 409: stale version / not our turn any more: poll again
            actions += 1
            counters[0] = actions
            if actions % 10 == 0:
                spinner.update(f"{game}: {actions} actions played…")


def _rng_session(api: _Api, bots: random.Random, console: Console) -> Any:
    _, sess = api.call("POST", "/v1/rng", body={"client_seed": f"demo-{secrets.token_hex(8)}"})
    sid, token = sess["session_id"], sess["token"]
    console.print(f"[bold]rng[/]: session {escape(str(sid))}, commitment "
                  f"{str(sess.get('commitment'))[:16]}…")
    draws = [{"kind": "dice", "count": 2, "sides": 6}, {"kind": "uniform", "n": 37},
             {"kind": "shuffle", "n": 52}, {"kind": "dice", "count": bots.randint(1, 5),
                                            "sides": 20}]
    for d in draws:
        api.call("POST", f"/v1/rng/{sid}/draws", token=token, body=d)
    _, closed = api.call("POST", f"/v1/rng/{sid}/close", token=token)
    if isinstance(closed, dict) and isinstance(closed.get("transcript"), dict):
        return closed["transcript"]
    if isinstance(closed, dict) and closed.get("protocol"):
        return closed
    _, doc = api.call("GET", f"/v1/rng/{sid}/transcript", token=token)
    return doc


def run_demo(base_url: str, games: list[str] | None = None, console: Console | None = None,
             *, seed: int | None = None, max_actions: int = 20_000,
             timeout: float = 30.0) -> int:
    """Play and verify one match per game; 0 all verified, 1 one failed, 2 server trouble."""
    console = console or make_console()
    bots = random.Random(seed)
    wanted = list(games) if games else available_games() + ["rng"]
    base = base_url.rstrip("/")
    try:
        keys: KeySet = fetch_keys(base)
    except UnusableInput as exc:
        console.print(f"[red]demo: cannot get the server's keys:[/] {escape(str(exc))}")
        return 2
    console.print(f"server {escape(base)}: {len(keys.keys)} signing key(s) "
                  f"({', '.join(keys.keys)}), fetched from the server itself\n")
    api = _Api(base, timeout)
    reports: list[dict[str, Any]] = []
    try:
        for game in wanted:
            try:
                if game == "rng":
                    doc = _rng_session(api, bots, console)
                    source = f"{base}/v1/rng (session)"
                else:
                    path = _play_match(api, game, bots, max_actions, console)
                    _, doc = api.call("GET", path)
                    source = base + path
            except (DemoError, KeyError, TypeError, AttributeError) as exc:
                msg = str(exc) if isinstance(exc, DemoError) else f"unexpected answer: {exc!r}"
                console.print(f"  [red]{escape(game)}: {escape(msg)}[/]")
                reports.append(unusable(game, msg) | {"game": game})
                continue
            except Exception as exc:  # an engine refusing a game id etc.
                console.print(f"  [red]{escape(game)}: {escape(str(exc))}[/]")
                reports.append(unusable(game, str(exc)) | {"game": game})
                continue
            rep = verify_document(doc, keys, source=source, draws_limit=4)
            reports.append(rep)
            print_report(console, rep)
    finally:
        api.close()
    print_summary(console, reports)
    console.print("[dim]The public key was fetched from the server, so the signature check "
                  "is only as trustworthy as that server; pin the key with `verify --key`.[/]")
    if any(r["status"] == UNUSABLE for r in reports):
        return 2
    if any(r["status"] in (FAILED, UNCHECKED) for r in reports):
        return 1
    return 0 if all(r["status"] == VERIFIED for r in reports) else 1
