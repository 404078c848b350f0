"""Transcript documents and random-bot matches for tests and demos.

qahwa-fair/1 (fairness-v1.md §6): :func:`build_transcript`; qahwa-fair/2 (fairness-v2.md
§9): :func:`build_locked_transcript`, with the lock record of §3 (:class:`fairness.records.Lock`). Tests,
benches and the demo make genuine transcripts offline with :func:`simulate_match` (the same
engines, the same derivation, random legal bots; v2 by default, with real roll chains,
seat commitments, the event chain and, when asked, seat signatures).
:func:`replay_transcript` replays one with :mod:`games.replay`.
"""

from __future__ import annotations

import base64
import functools
import random
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import fairness
from fairness import (
    CURRENT,
    V1,
    V2,
    FairProtocol,
    canonical_ruleset,
    chain_next,
    chain_start,
    protocol_for,
    roll_chain,
    seat_sig_message,
    seed_commitment,
)
from fairness.records import Lock, lock_seats

from .base import Chance, Engine, Event, MatchContext
from .ends import NoRevealMatch, no_reveal_event, no_reveal_outcome
from .registry import find_engine
from .replay import OnEvent, replay

if TYPE_CHECKING:
    from fairness.records import Signer


def build_transcript(
    *,
    match_id: str,
    game: str,
    ruleset: str,
    server_seed: bytes,
    seats: Sequence[Mapping[str, Any]],
    events: Sequence[Event],
    result: Mapping[str, Any] | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The unsigned transcript; sign it with ``fairness.Signer.signed``."""
    doc: dict[str, Any] = {
        "protocol": V1.name,
        "match_id": match_id,
        "game": game,
        "ruleset": ruleset,
        "commitment": V1.commitment(server_seed),
        "server_seed": server_seed.hex(),
        "seats": [dict(s) for s in seats],
        "events": [dict(e) for e in events],
        "result": dict(result) if result is not None else None,
    }
    return _with_extra(doc, extra)


def _with_extra(doc: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """``doc`` with the fields of ``extra`` it does not have already."""
    return doc | {k: v for k, v in (extra or {}).items() if k not in doc}


def transcript_key(doc: Mapping[str, Any]) -> bytes | None:
    """The match key K of a transcript: its revealed seed, ids, ruleset string as given and
    the seats' client seeds (v2: and nonces) in seat order. None for a v2 transcript in
    which a seat never revealed (a ``no_reveal`` end: there is no K)."""
    return protocol_for(doc).transcript_key(doc)


def transcript_context(doc: Mapping[str, Any]) -> MatchContext | None:
    """A v2 transcript's match context: its match id and the roll-chain tips of its lock's
    seats (never of its ``seats``: fairness-v2.md §3a). None for a v1 transcript."""
    if not protocol_for(doc).signed:
        return None
    return MatchContext.of_lock(Lock.parse(doc["lock"]))


def replay_transcript(doc: Mapping[str, Any], *, on_event: OnEvent | None = None) -> Engine:
    """Replay a transcript's events (:func:`games.replay.replay`) with its own protocol,
    key and context. It checks the rules only: signatures, the lock, commitments and the
    chain are the verifier's."""
    cls = find_engine(doc["game"], doc["ruleset"], protocol=protocol_for(doc))
    return replay(
        cls,
        doc["ruleset"],
        transcript_key(doc),
        doc["events"],
        ctx=transcript_context(doc),
        on_event=on_event,
    )


def rfc3339(t: datetime) -> str:
    """A UTC time as RFC 3339 ending in ``Z`` (whole seconds)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: a locked transcript's seat fields, in order (fairness-v2.md §9)
_LOCKED_SEAT_FIELDS = ("seat", "name", "house", "client_seed", "nonce", "key", "roll_chain")


def build_locked_transcript(
    *,
    match_id: str,
    game: str,
    ruleset: str,
    server_seed: bytes,
    lock: Mapping[str, Any],
    lock_index: int,
    seats: Sequence[Mapping[str, Any]],
    events: Sequence[Event],
    chain: str,
    result: Mapping[str, Any] | None,
    created_at: str,
    ended_at: str | None,
    extra: Mapping[str, Any] | None = None,
    protocol: str = V2.name,
) -> dict[str, Any]:
    """The unsigned qahwa-fair/2 transcript (fairness-v2.md §9; ``protocol`` qahwa-fair/3
    for a sealed match, fairness-v3 §9a, the same shape); sign it with
    ``fairness.Signer.signed``. ``seats``: ``{"seat", "name", "house", "client_seed",
    "nonce", "key", "roll_chain"}`` each (``client_seed``/``nonce`` None for a seat that
    never revealed); ``events`` numbered; ``chain`` the hex head after the last event."""
    doc: dict[str, Any] = {
        "protocol": protocol,
        "match_id": match_id,
        "game": game,
        "ruleset": ruleset,
        "commitment": V2.commitment(server_seed),
        "server_seed": server_seed.hex(),
        "lock": dict(lock),
        "lock_index": lock_index,
        "seats": [{k: s[k] for k in _LOCKED_SEAT_FIELDS} for s in seats],
        "events": [dict(e) for e in events],
        "chain": chain,
        "result": dict(result) if result is not None else None,
        "created_at": created_at,
        "ended_at": ended_at,
    }
    return _with_extra(doc, extra)


def simulate_match(
    game: str,
    ruleset: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    protocol: str | FairProtocol = CURRENT,
    server_seed: bytes | None = None,
    match_id: str | None = None,
    client_seeds: Sequence[str] | None = None,
    max_actions: int = 100_000,
    resign_at: int | None = None,
    end_reason: str = "resigned",
    signer: Signer | None = None,
    keyed: bool = False,
    house: Sequence[int] = (),
    no_reveal: Sequence[int] = (),
    lock_index: int = 0,
    started: datetime | None = None,
    timed: bool = False,
    cheats: Mapping[int, str] | None = None,
) -> tuple[dict[str, Any], Engine]:
    """Play a whole match with random legal bots; return (transcript, engine).

    A ruleset with ``"deal": "sealed"`` gives a qahwa-fair/3 transcript played by the
    simulated sealed seats of :mod:`games.sealed_sim` (``cheats``: seat → one of its cheats
    that the rules let through until the hand's end, e.g. ``revoke``).

    ``seed`` drives the bots' choices (a ``random.Random``) and, when not given, the server
    seed, nonces, roll-chain secrets and seat keys too, so the same arguments give the same
    transcript. ``resign_at``: after that many actions the match ends by ``end_reason``
    (``resigned`` by seat 0; in v2 also ``timeout`` of the seat on turn, or ``expired`` with
    no seat).

    qahwa-fair/2 (the default): the lock record of §3 (seed commitments, seat keys when
    ``keyed``, roll-chain tips in tawla and mahbusa with fresh rolls; ``house`` lists house
    seats), fresh-roll values from each seat's real roll chain, the event chain of §7 and,
    when ``keyed``, every seat's signature on the events it causes. With ``signer`` the lock
    and the transcript are signed, else both are left unsigned (a placeholder lock).
    ``no_reveal``: those seats never reveal; the transcript is the single no_reveal end.
    ``timed`` (v2): every event carries its time ``at`` as a server writes it since the
    2026-12-03 revision (§7: the start two seconds after the lock, each later request a
    second after the one before, a timeout exactly at its deadline); without it, the
    transcripts made before, with no times (the same bytes as earlier versions gave).
    ``protocol=V1`` (or its name) gives exactly the v1 transcript of earlier versions.
    """
    proto = protocol_for(protocol)
    sim = _SIMS.get(proto.name)
    if sim is None:
        raise ValueError(f"simulate_match makes no {proto} transcripts")
    sim.check_options(signer is not None or keyed or bool(house) or bool(no_reveal))
    return sim(
        game,
        ruleset,
        proto=proto,
        seed=seed,
        server_seed=server_seed,
        match_id=match_id,
        client_seeds=client_seeds,
        signer=signer,
        keyed=keyed,
        house=house,
        lock_index=lock_index,
        started=started,
        timed=timed,
        cheats=cheats,
    ).run(max_actions=max_actions, resign_at=resign_at, end_reason=end_reason, no_reveal=no_reveal)


def _bytes(name: str, n: int = 32) -> bytes:
    """``n`` bytes that ``name`` fixes (a simulation's seeds, nonces and secrets)."""
    return random.Random(name).randbytes(n)


@functools.lru_cache(maxsize=64)
def _chain(match_id: str, seat: int, secret: bytes) -> tuple[bytes, ...]:
    return tuple(roll_chain(match_id, seat, secret))


def with_roll_value(
    engine: Engine, seat: int, action: dict[str, Any], chain: Sequence[bytes] | None
) -> dict[str, Any]:
    """``action`` with the seat's next roll-chain value added where a fresh roll needs one
    (``roll`` / ``roll_value`` listed without it); any other action unchanged."""
    if chain is None or not getattr(engine, "fresh", False):
        return action
    if action.get("type") not in ("roll", "roll_value") or "value" in action:
        return action
    used: list[int] = getattr(engine, "values_used")  # noqa: B009 - tawla's and mahbusa's
    return {**action, "value": chain[used[seat] + 1].hex()}  # the seat's next: c[used + 1]


class _Sim:
    """One simulated match, qahwa-fair/2 or /1 (see :func:`simulate_match`)."""

    #: what names this protocol's seeds and ids apart: v2's ("server2-") from v1's
    TAG = "2"

    @staticmethod
    def check_options(v2_only: bool) -> None:
        """Every option is this protocol's."""

    def __init__(
        self,
        game: str,
        ruleset: Mapping[str, Any] | None,
        *,
        proto: FairProtocol,
        seed: int,
        server_seed: bytes | None,
        match_id: str | None,
        client_seeds: Sequence[str] | None,
        signer: Signer | None,
        keyed: bool,
        house: Sequence[int],
        lock_index: int,
        started: datetime | None,
        timed: bool = True,
        cheats: Mapping[int, str] | None = None,
    ) -> None:
        self.game = game
        self.proto = proto
        tag = self.TAG
        self.cheats = dict(cheats or {})
        self.timed = timed
        #: the time of the request being written, and the lock's (set by run)
        self.now = self.locked_at = datetime(2026, 1, 1, tzinfo=UTC)
        self.seed = seed
        self.bots = random.Random(seed)
        if server_seed is None:
            server_seed = (
                _bytes(f"server{tag}-{seed}", proto.seed_bytes)
                if seed >= 0
                else proto.new_server_seed()
            )
        self.server_seed = server_seed
        self.cls = find_engine(game, ruleset, protocol=proto)
        self.sealed = self.cls.PROTOCOL.sealed
        self.parsed = self.cls.parse_ruleset(dict(ruleset or {}), protocol=proto)
        self.ruleset_str = canonical_ruleset(self.parsed)
        n = self.n = self.cls.seat_count(self.parsed)
        self.match_id = match_id or f"sim{tag}-{game}-{seed}"
        #: what every transcript of the match names first (with its server seed)
        self.ids: dict[str, Any] = {
            "match_id": self.match_id,
            "game": game,
            "ruleset": self.ruleset_str,
        }
        self.client_seeds = (
            list(client_seeds)
            if client_seeds is not None
            else [f"seat{s}-seed{seed}" for s in range(n)]
        )
        if len(self.client_seeds) != n:
            raise ValueError(f"{game} with this ruleset has {n} seats")
        self.nonces = [_bytes(f"nonce-{seed}-{s}") for s in range(n)]
        fresh = bool(self.parsed.get("fresh_rolls", False))
        self.chains: list[tuple[bytes, ...]] | None = (
            [_chain(self.match_id, s, _bytes(f"chain-{seed}-{s}")) for s in range(n)]
            if fresh
            else None
        )
        self.seat_signers: list[Signer] | None = None
        if keyed:
            # fairness loads its signing module (and `cryptography`) only now, on first use
            self.seat_signers = [
                fairness.Signer.from_seed_b64(
                    base64.b64encode(_bytes(f"seat-key-{seed}-{s}")).decode()
                )
                for s in range(n)
            ]
        self.signer = signer
        self.house = set(house)
        self.lock_index = lock_index
        self.t0 = started or datetime(2026, 1, 1, tzinfo=UTC)

    def run(
        self, *, max_actions: int, resign_at: int | None, end_reason: str, no_reveal: Sequence[int]
    ) -> tuple[dict[str, Any], Engine]:
        play: dict[str, Any] = {
            "max_actions": max_actions,
            "resign_at": resign_at,
            "end_reason": end_reason,
        }
        n = self.n
        seat_rows = [
            {
                "seat": s,
                "name": f"bot{s}",
                "house": s in self.house,
                "seed_commitment": seed_commitment(
                    self.match_id, s, self.nonces[s], self.client_seeds[s]
                ),
                "key": fairness.public_key_b64(self.seat_signers[s].public_key)
                if self.seat_signers is not None
                else None,
                "roll_chain": self.chains[s][0].hex() if self.chains else None,
            }
            for s in range(n)
        ]
        rs = self.parsed
        locked_at = self.t0 + timedelta(seconds=1)
        fixed = Lock(
            self.match_id,
            self.game,
            self.ruleset_str,
            V2.commitment(self.server_seed),
            lock_seats(seat_rows),
            locked_at=rfc3339(locked_at),
            reveal_by=rfc3339(locked_at + timedelta(seconds=rs.get("reveal_seconds", 0))),
            end_by=rfc3339(locked_at + timedelta(seconds=rs.get("max_seconds", 0))),
        )
        lock = fixed.sign(self.signer)
        head = chain_start(lock)
        events: list[Event] = []
        # the time of the request being written (§7): the reveals two seconds after the lock
        self.locked_at = locked_at
        self.now = locked_at + timedelta(seconds=2)

        def add(ev: Event, signer_seat: int | None = None) -> None:
            nonlocal head
            numbered: Event = {"seq": len(events), **ev}
            if self.timed:
                numbered["at"] = self.now.strftime("%Y-%m-%dT%H:%M:%S.") + (
                    f"{self.now.microsecond // 1000:03d}Z"
                )
            if signer_seat is not None and self.seat_signers is not None:
                numbered["sig"] = self.seat_signers[signer_seat].sign_bytes(
                    seat_sig_message(self.match_id, head, numbered)
                )
            head = chain_next(head, numbered)
            events.append(numbered)

        engine: Engine
        if no_reveal:
            outcome = no_reveal_outcome(self.cls, rs, list(no_reveal))
            ev = no_reveal_event(outcome.forfeited or ())
            del ev["seq"]
            add(ev)
            engine = NoRevealMatch(self.cls, rs, list(outcome.forfeited or ()))
            hidden = set(no_reveal)
        else:
            hidden = set()
            key = fixed.match_key(
                self.server_seed, list(zip(self.client_seeds, self.nonces, strict=True))
            )
            engine = self._play(key, MatchContext.of_lock(fixed), add, **play)
        assert engine.outcome is not None
        # the lock's seats with their reveals (build_locked_transcript keeps a seat's fields)
        seats = [
            {**row, "client_seed": self.client_seeds[s], "nonce": self.nonces[s].hex()}
            if s not in hidden
            else {**row, "client_seed": None, "nonce": None}
            for s, row in enumerate(seat_rows)
        ]
        doc = build_locked_transcript(
            **self.ids,
            server_seed=self.server_seed,
            lock=lock,
            lock_index=self.lock_index,
            seats=seats,
            events=events,
            chain=head.hex(),
            result=engine.outcome.to_json(),
            created_at=rfc3339(self.t0),
            ended_at=rfc3339(locked_at),
            protocol=self.cls.PROTOCOL.name,
        )
        if self.signer is not None:
            doc = self.signer.signed(doc)
        return doc, engine

    def _play(
        self,
        key: bytes,
        ctx: MatchContext | None,
        add: Callable[..., None],
        *,
        max_actions: int,
        resign_at: int | None,
        end_reason: str,
    ) -> Engine:
        """Start the match with ``key`` and ``ctx`` and play it with the bots to its end
        (or to ``resign_at``), passing every event to ``add(event, signing_seat)``."""
        chance = Chance(key)
        engine = self.cls(self.parsed, chance, ctx)
        for ev in chance.take_events():
            add(ev)
        actions = 0
        sim_seats: list[Any] = []
        if self.sealed:  # a sealed match's seats make their own keys, shuffles and shares
            from .sealed_sim import SimSeat

            sim_seats = [
                SimSeat(s, f"transcript-{self.seed}", self.cheats.get(s)) for s in range(self.n)
            ]
        while engine.outcome is None:
            if actions >= max_actions:
                raise RuntimeError(f"{self.game}: no end after {max_actions} actions")
            if resign_at is not None and actions >= resign_at:
                seat0 = {"resigned": 0, "timeout": engine.turn}.get(end_reason)
                if end_reason == "timeout":  # exactly at the deadline (§7)
                    owed = self.now if actions else self.locked_at
                    self.now = owed + timedelta(seconds=self.parsed.get("turn_seconds", 300))
                else:
                    self.now += timedelta(seconds=1)
                for ev in engine.end_match(end_reason, seat0):
                    # a resignation is the seat's own request: it signs it; a timeout or an
                    # expiry is the server's
                    add(ev, 0 if end_reason == "resigned" else None)
                break
            seat = engine.turn
            assert seat is not None
            choices = engine.bot_actions(seat)
            if not choices:
                raise RuntimeError(f"{self.game}: seat {seat} to act with no legal action")
            if sim_seats:
                made = sim_seats[seat].act(engine.view(seat), engine)
                assert made is not None
                action = made
            else:
                action = with_roll_value(
                    engine,
                    seat,
                    self.bots.choice(choices),
                    self.chains[seat] if self.chains else None,
                )
            produced = engine.apply(seat, action)
            self.now += timedelta(seconds=1)
            add(produced[0], seat)
            for ev in produced[1:]:
                add(ev)
            actions += 1
        return engine


class _SimV1(_Sim):
    """A qahwa-fair/1 match, with its seeds and ids as v1 simulations made them."""

    TAG = ""

    @staticmethod
    def check_options(v2_only: bool) -> None:
        if v2_only:
            raise ValueError("signer, keyed, house and no_reveal are qahwa-fair/2 options")

    def run(self, *, no_reveal: Sequence[int], **play: Any) -> tuple[dict[str, Any], Engine]:
        """The qahwa-fair/1 transcript of earlier versions: no lock, chain, times or
        signatures."""
        key = V1.match_key(
            self.server_seed, self.match_id, self.game, self.ruleset_str, self.client_seeds
        )
        events: list[Event] = []

        def add(ev: Event, signer_seat: int | None = None) -> None:
            events.append({"seq": len(events), **ev})

        engine = self._play(key, None, add, **play)
        assert engine.outcome is not None
        seats = [
            {"seat": s, "name": f"bot{s}", "client_seed": cs, "seed_source": "player"}
            for s, cs in enumerate(self.client_seeds)
        ]
        doc = build_transcript(
            **self.ids,
            server_seed=self.server_seed,
            seats=seats,
            events=events,
            result=engine.outcome.to_json(),
        )
        return doc, engine


#: the simulation of each protocol it makes transcripts of
_SIMS: dict[str, type[_Sim]] = {V1.name: _SimV1, V2.name: _Sim}
