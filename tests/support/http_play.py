"""Play whole matches over HTTP, qahwa-fair/2: a small conforming seat in raw HTTP
(:class:`V2Seat`: commit → check the lock → reveal → play, signing when keyed, sending
fresh-roll values when owed) and random legal actions; and the checks of a v2 transcript.

``client_moves`` plays through ``qahwa_client`` seats (the client's own tests use it).
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx

from fairness import (
    PROTOCOL_V2,
    V2,
    Signer,
    chain_next,
    chain_start,
    load_public_key,
    new_nonce,
    public_key_b64,
    roll_chain,
    seat_sig_message,
    seed_commitment,
    verify_bytes,
    verify_record,
)
from fairness.records import Lock, open_signed
from fairness.seat import trusted_keys
from games import GAME_IDS
from games.base import Engine, MatchContext
from games.errors import RulesetError
from games.registry import engine_class
from games.replay import replay

MAX_ACTIONS = 20_000


def check_signed_record(
    record: Any, keys: Mapping[str, str], *, what: str, rtype: str
) -> dict[str, Any]:
    """``record`` opened as a signed record of ``type`` ``rtype``
    (:func:`fairness.records.open_signed`); else RecordError."""
    return open_signed(record, keys, rtype, what=what)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body: dict[str, Any] = r.json()
    return body


def public_key(client: httpx.Client, signed: dict[str, Any] | None = None) -> Any:
    """The server's current signing key: the one that signed ``signed`` when given (as a
    verifier picks it, by ``key_id``), else the newest. A database shared by several test
    servers (the PostgreSQL test database, which parallel test runs share too) lists every
    one of their keys as current (not retired), so the newest may be another server's."""
    keys = client.get("/v1/keys").json()["keys"]
    current = sorted((k for k in keys if k["current"]), key=lambda k: k["created_at"])
    if signed is not None:
        current = [k for k in current if k["key_id"] == signed["signature"]["key_id"]]
    assert current
    return load_public_key(current[-1]["public_key"])


class V2Seat:
    """One seat of a v2 match, played the way fairness-v2.md §3a says a conforming client
    does: it makes its seed, nonce, roll-chain secret and key, commits, checks the signed
    lock against the commit record and its own commitment before revealing, signs its
    events over the chain head (keyed) and sends a fresh-roll value only when it is owed.
    Every receipt it gets is checked and kept."""

    def __init__(
        self,
        client: httpx.Client,
        created: dict[str, Any],
        seat: int,
        *,
        keyed: bool = True,
        client_seed: str | None = None,
    ) -> None:
        self.client = client
        self.created = created
        self.match_id: str = created["match_id"]
        self.seat = seat
        self.token: str = created["seats"][seat]["token"]
        self.client_seed = client_seed or f"seat{seat}-{secrets.token_hex(8)}"
        self.nonce = new_nonce().hex()
        self.signer = Signer.generate() if keyed else None
        self.fresh = '"fresh_rolls":true' in created["ruleset"]
        self._chain: list[bytes] | None = (
            roll_chain(self.match_id, seat, secrets.token_bytes(32)) if self.fresh else None
        )
        self.values_sent = 0
        self.lock: dict[str, Any] | None = None
        self.receipts: list[dict[str, Any]] = []

    @property
    def key(self) -> str | None:
        return public_key_b64(self.signer.public_key) if self.signer is not None else None

    @property
    def tip(self) -> str | None:
        return self._chain[0].hex() if self._chain is not None else None

    @property
    def seed_commitment(self) -> str:
        return seed_commitment(self.match_id, self.seat, self.nonce, self.client_seed)

    def url(self, tail: str) -> str:
        return f"/v1/matches/{self.match_id}/{tail}"

    def keys(self) -> dict[str, str]:
        """The server's keys as the conforming seat trusts them (GET /v1/keys)."""
        return trusted_keys(self.client.get("/v1/keys").json())

    def _receipt(self, body: dict[str, Any]) -> dict[str, Any] | None:
        receipt: dict[str, Any] | None = body.get("receipt")
        if receipt is not None:
            check_signed_record(receipt, self.keys(), what="receipt", rtype="receipt")
            assert receipt["match_id"] == self.match_id
            self.receipts.append(receipt)
        return receipt

    def commit(self) -> dict[str, Any]:
        body = ok(
            self.client.post(
                self.url(f"seats/{self.seat}/commit"),
                headers=auth(self.token),
                json={
                    "seed_commitment": self.seed_commitment,
                    "key": self.key,
                    "roll_chain": self.tip,
                },
            )
        )
        self._receipt(body)
        return body

    def check_lock(self) -> dict[str, Any]:
        """§3a.4: the lock is signed, of the right type, equal to the commit record, with
        this seat's commitment, key and tip; and it is in the log at its index."""
        got = ok(self.client.get(self.url("lock")))
        keys = self.keys()
        lock = check_signed_record(got["lock"], keys, what="lock", rtype="lock")
        record = check_signed_record(self.created["record"], keys, what="record", rtype="commit")
        Lock.parse(lock).check_commit(record)
        mine = lock["seats"][self.seat]
        assert (mine["seed_commitment"], mine["key"], mine["roll_chain"]) == (
            self.seed_commitment,
            self.key,
            self.tip,
        )
        proof = ok(self.client.get("/v1/log/proof", params={"index": got["log_index"]}))
        assert proof["leaf"] == lock
        self._receipt(got)
        assert got["receipt"]["seq"] == -1
        assert got["receipt"]["chain"] == chain_start(lock).hex()
        self.lock = lock
        return lock

    def reveal(self) -> dict[str, Any]:
        assert self.lock is not None, "a conforming seat checks the lock before revealing"
        body = ok(
            self.client.post(
                self.url(f"seats/{self.seat}/reveal"),
                headers=auth(self.token),
                json={"client_seed": self.client_seed, "nonce": self.nonce},
            )
        )
        receipt = self._receipt(body)
        assert receipt is not None and receipt["seq"] == -1
        return body

    def state(self) -> dict[str, Any]:
        return ok(self.client.get(self.url("state"), headers=auth(self.token)))

    def complete(self, action: dict[str, Any]) -> dict[str, Any]:
        """A legal action as listed, with this seat's next roll-chain value where one is
        owed (fresh rolls list ``roll`` / ``roll_value`` without it)."""
        if self.fresh and action.get("type") in ("roll", "roll_value") and "value" not in action:
            assert self._chain is not None
            return {**action, "value": self._chain[self.values_sent + 1].hex()}
        return action

    def sign(self, event: dict[str, Any], prev: str) -> str | None:
        if self.signer is None:
            return None
        return self.signer.sign_bytes(seat_sig_message(self.match_id, prev, event))

    def act_request(self, view: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        """The body of POST /actions for ``action`` (completed) at ``view``."""
        action = self.complete(action)
        body: dict[str, Any] = {"action": action, "version": view["version"]}
        sig = self.sign({"type": "action", "seat": self.seat, "action": action}, view["chain"])
        if sig is not None:
            body["sig"] = sig
        return body

    def accepted(self, body: dict[str, Any]) -> None:
        """The server accepted ``body``: a roll-chain value in it is used up."""
        if body["action"].get("type") in ("roll", "roll_value") and "value" in body["action"]:
            self.values_sent += 1

    def act(self, view: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        body = self.act_request(view, action)
        out = ok(self.client.post(self.url("actions"), headers=auth(self.token), json=body))
        self.accepted(body)
        receipt = self._receipt(out)
        assert receipt is not None and receipt["chain"] == out["chain"]
        return out

    def resign(self) -> dict[str, Any]:
        view = self.state()
        body: dict[str, Any] = {}
        sig = self.sign({"type": "end", "reason": "resigned", "seat": self.seat}, view["chain"])
        if sig is not None:
            body["sig"] = sig
        out = ok(self.client.post(self.url("resign"), headers=auth(self.token), json=body))
        self._receipt(out)
        return out


def documented_error(r: httpx.Response, status: int) -> dict[str, Any]:
    """The documented error (``{"error": {"code", "message"}}``) with ``status``; a 4xx
    answer to a seat's request carries beside it the server's signed refusal of that very
    request (fairness-v2 §7, refusals), and nothing else does. Returns ``error``."""
    from service.errors import signs_refusal
    from service.front import SEAT_REQUEST

    assert r.status_code == status, r.text
    body = r.json()
    signed = (
        r.request.method == "POST"
        and SEAT_REQUEST.match(r.request.url.path) is not None
        and signs_refusal(status)
    )
    assert set(body) == ({"error", "refusal"} if signed else {"error"}), body
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"], body
    if signed:
        refusal = body["refusal"]
        assert refusal["type"] == "refusal" and "signature" in refusal
        assert refusal["request"] == hashlib.sha256(r.request.content).hexdigest()
        assert (refusal["status"], refusal["reason"]) == (status, body["error"]["code"])
    err: dict[str, Any] = body["error"]
    return err


def create_match(
    client: httpx.Client,
    game: str,
    ruleset: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    house: Sequence[bool] | None = None,
) -> dict[str, Any]:
    """Create a match; the creation answer as JSON (seats with their tokens)."""
    body: dict[str, Any] = {"game": game, "ruleset": ruleset or {}}
    if names is not None:
        body["seats"] = [
            {"name": n, "house": bool(house[i]) if house else False} for i, n in enumerate(names)
        ]
    created = ok(client.post("/v1/matches", json=body), 201)
    assert created["protocol"] == PROTOCOL_V2
    verify_record(created["record"], public_key(client, created["record"]))
    return created


def seats_of(
    client: httpx.Client,
    created: dict[str, Any],
    *,
    keyed: bool | Sequence[bool] = True,
    prefix: str | None = None,
) -> list[V2Seat]:
    n = len(created["seats"])
    keys = [keyed] * n if isinstance(keyed, bool) else list(keyed)
    return [
        V2Seat(
            client,
            created,
            i,
            keyed=keys[i],
            client_seed=f"{prefix}-{i}" if prefix is not None else None,
        )
        for i in range(n)
    ]


def locked_seats(client: httpx.Client, created: dict[str, Any], **kw: Any) -> list[V2Seat]:
    """Every seat (:func:`seats_of` with ``kw``) commits, then checks the lock: the match
    waits for the reveals."""
    seats = seats_of(client, created, **kw)
    for st in seats:
        st.commit()
    for st in seats:
        st.check_lock()
    return seats


def seed_all(
    client: httpx.Client,
    created: dict[str, Any],
    prefix: str = "seed",
    *,
    keyed: bool | Sequence[bool] = True,
) -> list[V2Seat]:
    """Every seat commits, checks the lock and reveals: the match is playing."""
    seats = locked_seats(client, created, keyed=keyed, prefix=prefix)
    for st in seats:
        st.reveal()
    assert seats[0].state()["status"] in ("playing", "finished")
    return seats


def started(client: httpx.Client, game: str, **kw: Any) -> tuple[dict[str, Any], list[V2Seat]]:
    """A match of ``game`` under :func:`short_ruleset`, every seat seeded (:func:`seed_all`
    with ``kw``): its creation answer and its seats."""
    created = create_match(client, game, short_ruleset(game))
    return created, seed_all(client, created, **kw)


def seat_moves(
    seats: Sequence[V2Seat], rnd: random.Random, limit: int = MAX_ACTIONS
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Random legal actions (from the engine's suggestions) by the seat that owes the next
    step until the match ends or ``limit`` were played: yields ``(seat, action, answer)``."""
    played = 0
    turn: int | None = 0
    while played < limit:
        view = seats[turn or 0].state()
        if view["status"] != "playing":
            break
        turn = view["turn"]
        assert turn is not None
        if view["seat"] != turn:
            continue
        legal = view["legal_actions"]
        assert legal, f"seat {turn} to act with no legal action"
        choices = view.get("suggested_actions") or legal
        assert all(a in legal for a in choices)
        action = rnd.choice(choices)
        out = seats[turn].act(view, action)
        assert out["version"] == view["version"] + 1
        yield turn, action, out
        played += 1


def play_actions(
    client: httpx.Client,
    seats: Sequence[V2Seat],
    rnd: random.Random,
    limit: int = MAX_ACTIONS,
    on_response: Callable[[httpx.Response], None] | None = None,
) -> int:
    """Play up to ``limit`` random legal actions; returns how many were played.

    ``on_response`` sees every response the bots got (read), e.g. to look for leaks.
    """

    def hook(r: httpx.Response) -> None:
        r.read()
        assert on_response is not None
        on_response(r)

    if on_response is not None:
        client.event_hooks["response"].append(hook)
    try:
        return sum(1 for _ in seat_moves(seats, rnd, limit))
    finally:
        if on_response is not None:
            client.event_hooks["response"].remove(hook)


def client_moves(
    seats: Sequence[Any], rnd: random.Random, limit: int = MAX_ACTIONS
) -> Iterator[tuple[int, dict[str, Any], Any]]:
    """Random legal actions through ``qahwa_client`` seats (one per seat, in seat order)
    until the match ends or ``limit`` were played: yields ``(seat, action, answer)`` after
    each accepted action."""
    played = 0
    seat_of_turn: int | None = 0
    while played < limit:
        view = seats[seat_of_turn or 0].state()
        if view.status != "playing":
            break
        seat_of_turn = view.turn
        assert seat_of_turn is not None
        if view.seat != seat_of_turn:
            continue
        legal = view.legal_actions
        assert legal, f"seat {seat_of_turn} to act with no legal action"
        choices = getattr(view, "suggested_actions", None) or legal
        assert all(a in legal for a in choices)
        action = rnd.choice(choices)
        out = seats[seat_of_turn].act(action)
        assert out.version == view.version + 1
        yield seat_of_turn, action, out
        played += 1


def play_to_end(
    client: httpx.Client,
    game: str,
    ruleset: dict[str, Any] | None = None,
    seed: int = 0,
    names: Sequence[str] | None = None,
    on_response: Callable[[httpx.Response], None] | None = None,
    keyed: bool = True,
) -> str:
    """Create a match, seat every seat (v2), play random legal actions to the end.

    ``client`` has the server's base URL. Returns the match id.
    """
    rnd = random.Random(seed)
    created = create_match(client, game, ruleset, names)
    seats = seed_all(client, created, prefix=f"s{seed}", keyed=keyed)
    play_actions(client, seats, rnd, on_response=on_response)
    public = ok(client.get(f"/v1/matches/{created['match_id']}"))
    assert public["status"] == "finished", public
    return str(created["match_id"])


# Rulesets that keep a whole match short (keys the engines document); {} if an engine
# rejects one (its defaults are then used).
SHORT: dict[str, dict[str, Any]] = {
    "iraqi_domino": {"target": 1, "players": 2},
    "mexican_train": {"rounds": 1, "players": 2},
    "qahve": {"target": 1},
    "hokm": {"target": 1},
    "shelem": {"target": 5},
    "tawla": {"match_length": 1},
    "mahbusa": {"match_length": 1},
}


def short_ruleset(game: str) -> dict[str, Any]:
    ruleset = SHORT.get(game, {})
    try:
        engine_class(game).parse_ruleset(ruleset, protocol=PROTOCOL_V2)
    except RulesetError:
        return {}
    return ruleset


# Every game (the plain rng session aside): a missing engine fails, it does not vanish.
GAMES = [g for g in GAME_IDS if g != "rng"]


def check_transcript(
    client: httpx.Client, doc: dict[str, Any], receipts: Sequence[dict[str, Any]] = ()
) -> Engine | None:
    """A v2 transcript, checked the way fairness-v2.md §9 says: the signatures (transcript,
    lock), the lock against the transcript, every revealed seat against its commitment in
    the lock, a full replay with K and the roll tips from the lock, the chain, every keyed
    seat's signature with the key from the lock, and ``receipts`` against the chain.
    Returns the replayed engine (None for a ``no_reveal`` transcript)."""
    pub = public_key(client, doc)
    verify_record(doc, pub)
    assert doc["protocol"] == PROTOCOL_V2
    assert V2.commitment(doc["server_seed"]) == doc["commitment"]
    lock = doc["lock"]
    verify_record(lock, pub)
    for k in ("match_id", "game", "ruleset", "commitment"):
        assert lock[k] == doc[k], k
    for ts, ls in zip(doc["seats"], lock["seats"], strict=True):
        for k in ("seat", "name", "house", "key", "roll_chain"):
            assert ts[k] == ls[k], (k, ts, ls)
        if ts["client_seed"] is not None:
            assert (
                seed_commitment(doc["match_id"], ls["seat"], ts["nonce"], ts["client_seed"])
                == ls["seed_commitment"]
            )
    # the chain and the keyed seats' signatures
    heads = [chain_start(lock)]
    for ev in doc["events"]:
        heads.append(chain_next(heads[-1], ev))
        caused = ev["type"] == "action" or (ev["type"] == "end" and ev["reason"] == "resigned")
        key = lock["seats"][ev["seat"]]["key"] if caused else None
        if key is not None:
            verify_bytes(key, ev["sig"], seat_sig_message(doc["match_id"], heads[-2], ev))
        else:
            assert "sig" not in ev, ev
    assert heads[-1].hex() == doc["chain"]
    for r in receipts:
        verify_record(r, pub)
        assert -1 <= r["seq"] < len(heads) - 1, f"receipt at seq {r['seq']}: past the end"
        assert heads[r["seq"] + 1].hex() == r["chain"], f"receipt at seq {r['seq']} disagrees"
    if any(s["client_seed"] is None for s in doc["seats"]):
        assert [e["type"] for e in doc["events"]] == ["end"]
        assert doc["events"][0]["reason"] == "no_reveal"
        return None
    key = V2.match_key(
        doc["server_seed"],
        doc["match_id"],
        doc["game"],
        doc["ruleset"],
        [(s["client_seed"], s["nonce"]) for s in doc["seats"]],
    )
    ctx = MatchContext(doc["match_id"], tuple(s["roll_chain"] for s in lock["seats"]))
    engine = replay(
        engine_class(doc["game"]), doc["ruleset"], key, doc["events"], protocol=PROTOCOL_V2, ctx=ctx
    )
    assert engine.outcome is not None
    assert engine.outcome.to_json() == doc["result"]
    return engine
