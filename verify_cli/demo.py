"""The demo: random legal bots play one full qahwa-fair/2 match of each game over the HTTP
API, each seat as a conforming client does (fairness-v2.md §3a), then every transcript is
verified with the same code as ``verify`` (keys fetched from the server).

``verify`` stands alone (it never imports ``qahwa_client``), so the demo's seats are built
here on ``fairness``: each makes its own seed, nonce, Ed25519 key and roll chain, commits,
checks the signed lock (signature, the commit record, its own commitment, key and tip, the
lock's inclusion in the log) before it reveals, signs every action over the chain head and
sends a roll-chain value only when the view says it is owed.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

import httpx
from rich.console import Console
from rich.markup import escape

from fairness import (
    V2,
    Signer,
    canonical_json,
    chain_start,
    new_nonce,
    public_key_b64,
    roll_chain,
    seat_sig_message,
    seed_commitment,
    signed_protocol,
)
from games.registry import available_games, engine_class

from .core import FAILED, UNCHECKED, UNUSABLE, VERIFIED, signed_by, unusable, verify_document
from .keys import KeySet, UnusableInput, fetch_keys
from .log import ProofError, leaf_hash, root_from_inclusion
from .log_state import LogCheckFailed, _hex_list, parse_head
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


def _signed_by(record: Any, keys: KeySet, what: str, rtype: str) -> dict[str, Any]:
    """``record`` is a ``rtype`` record of qahwa-fair/2 signed by one of ``keys``."""
    good, why = signed_by(record, keys)
    if not good:
        raise DemoError(f"the {what}: {why}")
    if record.get("type") != rtype or not signed_protocol(record):
        raise DemoError(f"the {what} is not a {V2} {rtype} record")
    return dict(record)


class _Seat:
    """One seat, played as fairness-v2.md §3a says."""

    def __init__(self, api: _Api, mid: str, seat: int, token: str, fresh: bool) -> None:
        self.api, self.mid, self.seat, self.token = api, mid, seat, token
        self.client_seed = f"demo-bot{seat}-{secrets.token_hex(8)}"
        self.nonce = new_nonce().hex()
        self.signer = Signer.generate()
        self.key = public_key_b64(self.signer.public_key)
        self.chain = roll_chain(mid, seat, secrets.token_bytes(32)) if fresh else None
        self.sent_values = 0

    def commit(self) -> None:
        self.api.call(
            "POST",
            f"/v1/matches/{self.mid}/seats/{self.seat}/commit",
            token=self.token,
            body={
                "seed_commitment": seed_commitment(
                    self.mid, self.seat, self.nonce, self.client_seed
                ),
                "key": self.key,
                "roll_chain": self.chain[0].hex() if self.chain else None,
            },
        )

    def check_lock(self, record: dict[str, Any], keys: KeySet) -> dict[str, Any]:
        _, got = self.api.call("GET", f"/v1/matches/{self.mid}/lock")
        lock = _signed_by(got.get("lock"), keys, "lock", "lock")
        for k in ("match_id", "game", "ruleset", "commitment"):
            if lock.get(k) != record.get(k):
                raise DemoError(
                    f"match {self.mid} is not ours: the lock's {k} is not the commit record's"
                )
        mine = lock["seats"][self.seat]
        own = {
            "seed_commitment": seed_commitment(self.mid, self.seat, self.nonce, self.client_seed),
            "key": self.key,
            "roll_chain": self.chain[0].hex() if self.chain else None,
        }
        if any(mine.get(k) != v for k, v in own.items()):
            raise DemoError(
                f"match {self.mid} is not ours: seat {self.seat} of the lock "
                "holds another commitment, key or roll chain"
            )
        idx = got.get("log_index")
        _, proof = self.api.call("GET", "/v1/log/proof", params={"index": idx})
        if not isinstance(proof, dict) or proof.get("leaf") != lock:
            raise DemoError(f"match {self.mid}: log entry {idx} is not its lock")
        try:  # the head signed by a listed key, the lock under its root
            head = parse_head(proof.get("tree_head"), keys)
            path = _hex_list(proof.get("audit_path"), "the audit path")
            root = root_from_inclusion(idx, head.tree_size, leaf_hash(canonical_json(lock)), path)
        except (LogCheckFailed, ProofError, TypeError) as exc:
            raise DemoError(f"match {self.mid}: the lock's log inclusion: {exc}") from None
        if root != head.root:
            raise DemoError(f"match {self.mid}: the lock is not in the log at index {idx}")
        return lock

    def reveal(self) -> None:
        self.api.call(
            "POST",
            f"/v1/matches/{self.mid}/seats/{self.seat}/reveal",
            token=self.token,
            body={"client_seed": self.client_seed, "nonce": self.nonce},
        )

    def body(self, state: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        act = dict(action)
        if self.chain is not None and act.get("type") in ("roll", "roll_value"):
            fresh = state.get("fresh_roll")
            owed = (
                fresh is None
                if act["type"] == "roll"  # the roller's value goes with it
                else (fresh or {}).get("owes", [])[:1] == [self.seat]
            )
            k = (state.get("values_used") or [])[self.seat]
            if not owed or state.get("turn") != self.seat or k != self.sent_values:
                raise DemoError(f"seat {self.seat} asked for a roll-chain value it does not owe")
            act["value"] = self.chain[k + 1].hex()
        event = {"type": "action", "seat": self.seat, "action": act}
        sig = self.signer.sign_bytes(seat_sig_message(self.mid, state["chain"], event))
        return {"action": act, "version": state.get("version"), "sig": sig, "prev": state["chain"]}


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
    record = _signed_by(created.get("record"), keys, "commit record", "commit")
    tokens = {s["seat"]: s["token"] for s in created.get("seats", [])}
    if sorted(tokens) != list(range(n)):
        raise DemoError(f"POST /v1/matches: expected tokens for seats 0..{n - 1}")
    console.print(
        f"[bold]{game}[/]: match {escape(str(mid))}, {n} seats, commitment "
        f"{str(created.get('commitment'))[:16]}…"
    )
    fresh = '"fresh_rolls":true' in str(record.get("ruleset"))
    seats = [_Seat(api, mid, s, tokens[s], fresh) for s in range(n)]
    for seat in seats:
        seat.commit()
    locks = []
    for seat in seats:
        locks.append(seat.check_lock(record, keys))  # nothing is revealed unless it holds
        seat.reveal()
    console.print(
        f"  every seat checked the lock in the log and revealed "
        f"(chain[-1] {chain_start(locks[-1]).hex()[:16]}…)"
    )
    counters = [0]
    with console.status(f"{game}: playing…") as spinner:
        _bot_loop(api, game, seats, bots, max_actions, spinner, counters)
    console.print(f"  played {counters[0]} signed actions")
    return f"/v1/matches/{mid}/transcript"


def _bot_loop(
    api: _Api,
    game: str,
    seats: list[_Seat],
    bots: random.Random,
    max_actions: int,
    spinner: Any,
    counters: list[int],
) -> None:
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
            break
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
        body = seats[seat].body(state, bots.choice(suggested or legal))
        code, _ = api.call(
            "POST",
            f"/v1/matches/{mid}/actions",
            token=seats[seat].token,
            body=body,
            ok=(200, 201, 409),
        )
        if code != 409:  # 409: stale version or head / not our turn any more: poll again
            if "value" in body["action"]:
                seats[seat].sent_values += 1
            actions += 1
            counters[0] = actions
            if actions % 10 == 0:
                spinner.update(f"{game}: {actions} actions played…")


def _rng_session(api: _Api, bots: random.Random, console: Console, keys: KeySet) -> Any:
    _, sess = api.call("POST", "/v1/rng", token=api.operator_key, body={})
    sid, token = sess["session_id"], sess["token"]
    _signed_by(sess.get("record"), keys, "commit record", "commit")
    # the seed and nonce go only after the signed commit record (fairness-v2.md §3)
    api.call(
        "POST",
        f"/v1/rng/{sid}/seed",
        token=token,
        body={"client_seed": f"demo-{secrets.token_hex(8)}", "nonce": new_nonce().hex()},
    )
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
        api.call("POST", f"/v1/rng/{sid}/draws", token=token, body=d)
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
    api = _Api(base, timeout, operator_key)
    reports: list[dict[str, Any]] = []
    try:
        for game in wanted:
            try:
                if game == "rng":
                    doc = _rng_session(api, bots, console, keys)
                    source = f"{base}/v1/rng (session)"
                else:
                    path = _play_match(api, game, bots, max_actions, console, keys)
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
    console.print(
        "[dim]The public key was fetched from the server, so the signature check "
        "is only as trustworthy as that server; pin the key with `verify --key`.[/]"
    )
    if any(r["status"] == UNUSABLE for r in reports):
        return 2
    if any(r["status"] in (FAILED, UNCHECKED) for r in reports):
        return 1
    return 0 if all(r["status"] == VERIFIED for r in reports) else 1
