"""The demo: random legal bots play one full qahwa-fair/2 match of each game over the HTTP
API, each seat as a conforming client does (fairness-v2.md §3a), then every transcript is
verified with the same code as ``verify`` (keys fetched from the server).

``verify`` stands alone (it never imports ``qahwa_client``), so the demo's seats drive the
conforming seat itself (:class:`fairness.seat.SeatProtocol`, the one ``qahwa_client``'s seats
drive) over the demo's own HTTP calls.
"""

from __future__ import annotations

import random
import secrets
from contextlib import closing
from typing import Any

import httpx
from rich.console import Console
from rich.markup import escape

from fairness import chain_start, public_key_b64
from fairness.seat import SeatProtocol, Terms
from games.registry import available_games, engine_class
from tlog import root_from_inclusion

from .core import exit_code, unusable, verify_document
from .keys import KeySet, UnusableInput, fetch_keys
from .output import make_console, print_report, print_summary


class DemoError(Exception):
    """The server did not behave as the API contract says (one-line message)."""


class _Api:
    def __init__(self, base: str, timeout: float, operator_key: str | None = None) -> None:
        self.base = base.rstrip("/")
        self.http = httpx.Client(base_url=self.base, timeout=timeout)
        self.operator_key = operator_key

    def close(self) -> None:
        self.http.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: Any = None,
        ok: tuple[int, ...] = (200, 201),
        params: dict[str, Any] | None = None,
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            resp = self.http.request(method, path, json=body, headers=headers, params=params)
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


def _trusted(keys: KeySet) -> dict[str, str]:
    """key_id → base64 public key, as the conforming seat takes the server's keys."""
    return {kid: public_key_b64(pub) for kid, pub in keys.keys.items()}


class _Seat:
    """One seat, played as fairness-v2.md §3a says: the conforming seat over the demo's HTTP."""

    def __init__(self, api: _Api, mid: str, seat: int, token: str, keys: dict[str, str]) -> None:
        self.api, self.mid, self.seat, self.token, self.keys = api, mid, seat, token, keys
        self.proto = SeatProtocol(mid, seat, root_from_inclusion=root_from_inclusion)

    def _post(self, tail: str, body: Any, seq: int | None = None) -> int:
        """POST ``body`` and check and keep the answer's receipt (``seq`` when it is known);
        the HTTP status (409: stale, the bot polls again)."""
        code, answer = self.api.call("POST", tail, token=self.token, body=body, ok=(200, 201, 409))
        if code != 409:
            self.proto.take_receipt(answer, self.keys, seq=seq)
        return code

    def commit(self, record: Any, terms: Terms) -> None:
        self.proto.terms = terms
        self.proto.accept_record(record, self.keys)
        body = self.proto.commit_body(f"demo-bot{self.seat}-{secrets.token_hex(8)}")
        self._post(f"/v1/matches/{self.mid}/seats/{self.seat}/commit", body, seq=-1)

    def check_lock(self) -> dict[str, Any]:
        _, got = self.api.call("GET", f"/v1/matches/{self.mid}/lock")
        idx = got.get("log_index")
        _, proof = self.api.call("GET", "/v1/log/proof", params={"index": idx})
        lock = self.proto.check_lock(got.get("lock"), idx, proof, self.keys)
        self.proto.take_receipt(got, self.keys, seq=-1)
        return lock

    def reveal(self) -> None:
        self._post(f"/v1/matches/{self.mid}/seats/{self.seat}/reveal", self.proto.reveal_body(), -1)
        self.proto.revealed = True

    def act(self, state: dict[str, Any], action: dict[str, Any]) -> int:
        body = self.proto.action_body(
            action,
            version=state["version"],
            chain=state["chain"],
            view_lock=state.get("lock"),
            turn=state.get("turn"),
            legal=state.get("legal_actions"),
            fresh_roll=state.get("fresh_roll"),
            values_used=state.get("values_used"),
        )
        return self._post(f"/v1/matches/{self.mid}/actions", body)


def _play_match(
    api: _Api, game: str, bots: random.Random, max_actions: int, console: Console, keys: KeySet
) -> str:
    """Create and play one match with random legal bots; return its transcript path."""
    cls = engine_class(game)
    ruleset = DEMO_RULESETS.get(game, {})
    n = cls.seat_count(cls.parse_ruleset(ruleset))
    _, created = api.call(
        "POST",
        "/v1/matches",
        token=api.operator_key,
        body={"game": game, "ruleset": ruleset, "seats": [{"name": f"bot-{i}"} for i in range(n)]},
    )
    if not isinstance(created, dict) or "match_id" not in created:
        raise DemoError("POST /v1/matches: no match_id in the answer")
    mid = created["match_id"]
    tokens = {s["seat"]: s["token"] for s in created.get("seats", [])}
    if sorted(tokens) != list(range(n)):
        raise DemoError(f"POST /v1/matches: expected tokens for seats 0..{n - 1}")
    console.print(
        f"[bold]{game}[/]: match {escape(str(mid))}, {n} seats, commitment "
        f"{str(created.get('commitment'))[:16]}…"
    )
    trusted = _trusted(keys)
    terms = Terms(game=game, ruleset=ruleset, names=[f"bot-{i}" for i in range(n)])
    seats = [_Seat(api, mid, s, tokens[s], trusted) for s in range(n)]
    for seat in seats:
        seat.commit(created.get("record"), terms)
    for seat in seats:
        lock = seat.check_lock()  # nothing is revealed unless it holds
        seat.reveal()
    console.print(
        f"  every seat checked the lock in the log and revealed "
        f"(chain[-1] {chain_start(lock).hex()[:16]}…)"
    )
    with console.status(f"{game}: playing…") as spinner:
        played = _bot_loop(api, game, seats, bots, max_actions, spinner)
    console.print(f"  played {played} signed actions")
    return f"/v1/matches/{mid}/transcript"


def _bot_loop(
    api: _Api,
    game: str,
    seats: list[_Seat],
    bots: random.Random,
    max_actions: int,
    spinner: Any,
) -> int:
    """Play until the match ends; the signed actions sent."""
    actions = 0
    polls = 0
    seat = 0
    mid = seats[0].mid
    while True:
        polls += 1
        if polls > 4 * max_actions + 100:
            raise DemoError(f"{game}: the match does not progress")
        _, state = api.call("GET", f"/v1/matches/{mid}/state", token=seats[seat].token)
        status = state.get("status")
        if status == "finished":
            return actions
        if status != "playing":
            raise DemoError(f"{game}: status {status!r} after every seat revealed")
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
        code = seats[seat].act(state, bots.choice(suggested or legal))
        if code != 409:  # 409: stale version or head / not our turn any more: poll again
            actions += 1
            if actions % 10 == 0:
                spinner.update(f"{game}: {actions} actions played…")


def _rng_session(api: _Api, bots: random.Random, console: Console, keys: KeySet) -> Any:
    _, sess = api.call("POST", "/v1/rng", token=api.operator_key, body={})
    sid, token = sess["session_id"], sess["token"]
    trusted = _trusted(keys)
    proto = SeatProtocol(sid, 0, root_from_inclusion=root_from_inclusion, keyed=False)
    proto.accept_record(sess.get("record"), trusted)
    # the seed and nonce go only after the signed commit record (fairness-v2.md §3)
    proto.commit_body(f"demo-{secrets.token_hex(8)}")
    body = {"client_seed": proto.client_seed, "nonce": proto.nonce}
    _, seeded = api.call("POST", f"/v1/rng/{sid}/seed", token=token, body=body)
    _, proof = api.call("GET", "/v1/log/proof", params={"index": seeded.get("log_index")})
    proto.check_lock(seeded.get("lock"), seeded.get("log_index"), proof, trusted)
    proto.take_receipt(seeded, trusted, seq=-1)
    console.print(
        f"[bold]rng[/]: session {escape(str(sid))}, commitment {str(sess.get('commitment'))[:16]}…"
    )
    draws = [
        {"kind": "dice", "count": 2, "sides": 6},
        {"kind": "uniform", "n": 37},
        {"kind": "shuffle", "n": 52},
        {"kind": "dice", "count": bots.randint(1, 5), "sides": 20},
    ]
    for d in draws:
        proto.take_receipt(
            api.call("POST", f"/v1/rng/{sid}/draws", token=token, body=d)[1], trusted
        )
    _, closed = api.call("POST", f"/v1/rng/{sid}/close", token=token)
    if isinstance(closed, dict) and isinstance(closed.get("transcript"), dict):
        return closed["transcript"]
    if isinstance(closed, dict) and closed.get("protocol"):
        return closed
    _, doc = api.call("GET", f"/v1/rng/{sid}/transcript", token=token)
    return doc


def run_demo(
    base_url: str,
    games: list[str] | None = None,
    console: Console | None = None,
    *,
    seed: int | None = None,
    max_actions: int = 20_000,
    timeout: float = 30.0,
    operator_key: str | None = None,
) -> int:
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
    console.print(
        f"server {escape(base)}: {len(keys.keys)} signing key(s) "
        f"({', '.join(keys.keys)}), fetched from the server itself\n"
    )
    reports: list[dict[str, Any]] = []
    with closing(_Api(base, timeout, operator_key)) as api:
        for game in wanted:
            try:
                if game == "rng":
                    doc = _rng_session(api, bots, console, keys)
                    source = f"{base}/v1/rng (session)"
                else:
                    path = _play_match(api, game, bots, max_actions, console, keys)
                    _, doc = api.call("GET", path)
                    source = base + path
            except Exception as exc:  # the server's trouble, an engine refusing a game id etc.
                odd = isinstance(exc, KeyError | TypeError | AttributeError)  # a malformed answer
                msg = f"unexpected answer: {exc!r}" if odd else str(exc)
                console.print(f"  [red]{escape(game)}: {escape(msg)}[/]")
                reports.append(unusable(game, msg) | {"game": game})
                continue
            rep = verify_document(doc, keys, source=source, draws_limit=4)
            reports.append(rep)
            print_report(console, rep)
    print_summary(console, reports)
    console.print(
        "[dim]The public key was fetched from the server, so the signature check "
        "is only as trustworthy as that server; pin the key with `verify --key`.[/]"
    )
    return exit_code(reports)
