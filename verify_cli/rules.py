"""The rules of ``verify`` for every protocol: qahwa-fair/1 (fairness-v1.md) and
qahwa-fair/2 (fairness-v2.md §9), with one replay-and-result check
(:func:`replay_and_check`) that each protocol calls with its own hooks.

Everything here needs only ``fairness`` and ``games`` (no ``cryptography``), like
:mod:`verify_cli.replay_core`, so the verify page can run it too. The checks that need
Ed25519 (the lock's and the transcript's server signatures, the seats' signatures, receipts)
are :mod:`verify_cli.core`'s; they use :attr:`V2State.chain` computed here.

Seats' seed commitments, keys and roll-chain tips come from the **lock**, never from the
transcript's ``seats``; a transcript whose seats differ from its lock fails ``seats``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fairness import (
    PROTOCOL,
    V1,
    V2,
    V3,
    FairnessError,
    FairProtocol,
    canonical_json,
    chain_start,
    fresh_label,
    loads_strict,
    match_key,
    parse_hex,
    parse_time_us,
    roll_step,
    seed_commitment,
)
from fairness.records import Lock, LockSeat, RecordError
from games.base import Chance, Engine, Event, MatchContext
from games.ends import no_reveal_result
from games.errors import GameError, ReplayError
from games.replay import replay
from games.sealed_base import SealedGame

from . import render
from .render import is_int

#: the protocols with qahwa-fair/2's records (lock, reveals, chain, receipts, signatures):
#: qahwa-fair/3 is qahwa-fair/2 with a sealed deal (fairness-v3 §9a)
LOCK_FIELDS = ("match_id", "game", "ruleset", "commitment")
SEAT_FIELDS = ("seat", "name", "house", "key", "roll_chain")
BOARD_FRESH = ("tawla", "mahbusa")
TURN_SECONDS = 300  # the ruleset's default (fairness-v2.md §7)
#: the revision that gave events their times (a transcript without them is older)
TIMES_REVISION = "2026-12-03"
_FRESH_BASE = re.compile(r"^g\d+/(opening|roll)/\d+$")
_HAND_SHUFFLE = re.compile(r"^h(\d+)/shuffle$")
#: how far along a seat's roll chain a value that does not follow is looked for (to say
#: "out of order" rather than "not on its chain")
ORDER_SEARCH = 256

Progress = Callable[[int, int], Any]
"""``progress(done, total)``: events replayed so far, out of the transcript's events."""


@dataclass
class V2State:
    """What the v2 rules checks found, for the checks ``core`` adds (signatures, receipts)."""

    #: the lock as :meth:`fairness.records.Lock.open` read it (set once ``lock`` passed)
    lock: Lock | None = None
    #: its seats (seed commitments, keys and roll-chain tips come from the lock only)
    seats: tuple[LockSeat, ...] = ()
    #: chain[n] for n = -1, 0, 1, …: ``chain[0]`` here is chain[-1] (the lock's hash)
    chain: list[bytes] = field(default_factory=list)
    chain_ok: bool = False
    #: each event's canonical JSON, as the chain hashed it (empty when it was not computed)
    event_json: list[bytes] = field(default_factory=list)


def strict_equal(a: Any, b: Any) -> bool:
    """JSON equality that keeps types apart: ``3 != 3.0``, ``1 != true``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def parse_ruleset_json(text: str) -> dict[str, Any] | None:
    try:
        raw = loads_strict(text)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


# -- the lock and the seats ------------------------------------------------------------------


def check_lock(rep: Any, doc: dict[str, Any], state: V2State) -> bool:
    """``lock``: a lock record of this match; the seats as the lock lists them."""
    lock = doc["lock"]
    try:
        parsed = Lock.open(lock, None, protocols=(V2.name,))
    except RecordError as exc:
        rep.fail("lock", str(exc))
        return False
    problems = [
        f"its {name} is {render.short(lock.get(name), 40)}, the "
        f"transcript's {render.short(doc[name], 40)}"
        for name in LOCK_FIELDS
        if lock.get(name) != doc[name]
    ]
    if problems:
        rep.fail("lock", "the lock does not match the transcript: " + "; ".join(problems))
        return False
    state.lock, state.seats = parsed, parsed.seats
    keyed = sum(1 for s in parsed.seats if s.key)
    rep.ok(
        "lock",
        f"lock of this match (match_id, game, ruleset, commitment), "
        f"{len(parsed.seats)} seat(s), {keyed} keyed",
    )
    return True


def check_seats(rep: Any, doc: dict[str, Any]) -> bool:
    """``seats``: the transcript's seats are the lock's (seat, name, house, key, roll_chain)."""
    lock_seats = doc["lock"]["seats"]
    seats = doc["seats"]
    if len(seats) != len(lock_seats):
        rep.fail("seats", f"the transcript has {len(seats)} seats, its lock {len(lock_seats)}")
        return False
    for i, (s, ls) in enumerate(zip(seats, lock_seats, strict=True)):
        if not isinstance(s, dict):
            rep.fail("seats", f"seat entry {i} is not an object")
            return False
        for name in SEAT_FIELDS:
            if not strict_equal(s.get(name), ls.get(name)):
                rep.fail(
                    "seats",
                    f"seat {i}'s {name} differs from its lock: the transcript "
                    f"says {render.short(s.get(name), 50)}, the lock "
                    f"{render.short(ls.get(name), 50)}",
                    expected=ls.get(name),
                    found=s.get(name),
                )
                return False
    rep.ok("seats", "the transcript's seats are the lock's (names, house, keys, roll chains)")
    return True


def check_commitment(rep: Any, doc: dict[str, Any], proto: FairProtocol = V2) -> bytes | None:
    """``commitment``: SHA-256(server_seed) is the commitment (``proto``: the protocol,
    whose seed form it is); the seed, or None when it is unusable."""
    try:
        seed = proto.parse_server_seed(doc["server_seed"])
    except FairnessError as exc:
        rep.fail("commitment", f"server_seed is unusable: {exc}")
        return None
    calc = proto.commitment(seed)
    if calc == doc["commitment"]:
        rep.ok("commitment", f"SHA-256(server_seed) = {calc[:16]}… as committed")
    else:
        rep.fail(
            "commitment",
            "SHA-256(server_seed) is not the commitment",
            expected=calc,
            found=doc["commitment"],
        )
    return seed


def seat_seeds(rep: Any, doc: dict[str, Any]) -> list[str] | None:
    """The client seeds in seat order (None and a failure when the seat list is bad)."""
    seats = doc["seats"]
    if not all(isinstance(s, dict) for s in seats):
        rep.fail("seats", "a seat entry is not an object")
        return None
    numbers = [s.get("seat") for s in seats]
    if not all(is_int(n) for n in numbers) or sorted(numbers) != list(range(len(seats))):
        rep.fail("seats", f"seats are not numbered 0..{len(seats) - 1}: {numbers}")
        return None
    ordered = sorted(seats, key=lambda s: s["seat"])
    seeds = [s.get("client_seed") for s in ordered]
    if not all(isinstance(c, str) for c in seeds):
        rep.fail("seats", "a seat has no client seed")
        return None
    bad_src = [s["seat"] for s in ordered if s.get("seed_source") not in ("player", "server")]
    if bad_src:
        rep.fail("seats", f"seat(s) {bad_src}: seed_source must be 'player' or 'server'")
        return None
    return seeds


def revealed_seeds(
    rep: Any, doc: dict[str, Any], state: V2State
) -> tuple[list[tuple[str, str]] | None, list[int]]:
    """``reveals``: every revealed seat's client_seed and nonce match its seed_commitment in
    the lock. Returns ((client_seed, nonce) per seat, or None) and the seats that never
    revealed (null seed and nonce)."""
    pairs: list[tuple[str, str]] = []
    unrevealed: list[int] = []
    bad: list[str] = []
    for s, ls in zip(doc["seats"], state.seats, strict=True):
        cs, nonce = s.get("client_seed"), s.get("nonce")
        if cs is None and nonce is None:
            unrevealed.append(ls.seat)
            continue
        if not isinstance(cs, str) or not isinstance(nonce, str):
            bad.append(f"seat {ls.seat} has a client_seed without a nonce (or one not a string)")
            continue
        try:
            calc = seed_commitment(doc["match_id"], ls.seat, nonce, cs)
        except (FairnessError, ValueError, TypeError) as exc:
            bad.append(f"seat {ls.seat}'s reveal is unusable: {exc}")
            continue
        if calc != ls.seed_commitment:
            bad.append(
                f"seat {ls.seat}'s client_seed and nonce do not match its "
                f"seed_commitment in the lock (they give {calc[:16]}…, the lock "
                f"has {str(ls.seed_commitment)[:16]}…)"
            )
            continue
        pairs.append((cs, nonce))
    if bad:
        rep.fail("reveals", "; ".join(bad))
        return None, unrevealed
    if unrevealed:
        rep.ok(
            "reveals",
            f"{len(pairs)} seat(s) revealed seeds matching their commitments; "
            f"seat(s) {unrevealed} never revealed",
        )
        return None, unrevealed
    rep.ok(
        "reveals",
        f"all {len(pairs)} seats' client_seed and nonce match their seed_commitment in the lock",
    )
    return pairs, unrevealed


# -- fresh rolls (§6) and the drawn cut (§5) -------------------------------------------------


def _at_event(rep: Any, check: str, i: int, what: str, **values: Any) -> bool:
    """``check`` fails at event ``i`` ("event i: what"); False, for the check to return."""
    rep.fail(check, f"event {i}: {what}", seq=i, **values)
    return False


def _diagnose_value(match_id: str, seat: int, prev: bytes, raw: bytes, used: list[bytes]) -> str:
    """Why ``raw`` is not the seat's next value: a repeat, a later value, or off its chain."""
    if raw in used:
        return f"repeats its value #{used.index(raw)}"
    h = raw
    for i in range(1, ORDER_SEARCH + 2):
        h = roll_step(match_id, seat, h)
        if h == prev:
            return (
                f"is its value #{len(used) + i - 1}, not #{len(used)}: out of order "
                f"({i - 1} value(s) skipped)"
            )
    return "does not hash back to its roll-chain tip in the lock"


def check_fresh_rolls(
    rep: Any, doc: dict[str, Any], state: V2State, ruleset: dict[str, Any] | None
) -> bool:
    """``fresh rolls``: every roll value chains to its seat's tip in §6's order, from the right
    seats, and every dice draw of a fresh-rolls match is drawn from the two values."""
    fresh = ruleset is not None and ruleset.get("fresh_rolls") is True
    refuse = partial(_at_event, rep, "fresh rolls")
    match_id = doc["match_id"]
    prev = {
        s.seat: bytes.fromhex(s.roll_chain) if s.roll_chain is not None else None
        for s in state.seats
    }
    used: dict[int, list[bytes]] = {s.seat: [] for s in state.seats}
    pending: list[tuple[int, int, str, bytes]] = []  # (seq, seat, action type, value)
    rolls = 0
    for i, ev in enumerate(doc["events"]):
        if not isinstance(ev, dict):
            continue  # the replay names it
        act = ev.get("action")
        if (
            ev.get("type") == "action"
            and isinstance(act, dict)
            and act.get("type") in ("roll", "roll_value")
        ):
            seat = ev.get("seat")
            if not fresh:
                if "value" in act:
                    return refuse(i, "a roll value in a match without fresh rolls")
                continue
            if not is_int(seat) or seat not in prev:
                continue  # the replay names it
            tip = prev[seat]
            if tip is None:
                return refuse(
                    i,
                    f"seat {seat} sends a roll value but has no roll chain in the lock",
                )
            try:
                raw = parse_hex(act.get("value"), 32, "roll value")
            except FairnessError as exc:
                return refuse(i, f"seat {seat}'s {exc}")
            if roll_step(match_id, seat, raw) != tip:
                why = _diagnose_value(match_id, seat, tip, raw, used[seat])
                return refuse(i, f"seat {seat}'s roll value {raw.hex()[:16]}… {why}")
            used[seat].append(raw)
            prev[seat] = raw
            pending.append((i, seat, str(act["type"]), raw))
            continue
        if ev.get("type") != "chance" or ev.get("kind") != "dice":
            continue
        label = ev.get("label")
        if not isinstance(label, str):
            continue
        base, bar, suffix = label.partition("|")
        if not _FRESH_BASE.match(base):
            continue
        if not fresh:
            if bar:
                return refuse(
                    i,
                    f"dice {label!r} carry a fresh-roll label in a match without fresh rolls",
                )
            continue
        opening = "/opening/" in base
        got = [(seat, t) for _, seat, t, _ in pending]
        if opening:
            ok = got == [(0, "roll_value"), (1, "roll_value")]
            want = "seat 0's then seat 1's roll_value"
        else:
            ok = (
                len(got) == 2
                and got[0][1] == "roll"
                and got[1][1] == "roll_value"
                and got[0][0] != got[1][0]
            )
            want = "the roller's roll, then the opponent's roll_value"
        if not ok:
            return refuse(
                i,
                f"dice {base!r} are not drawn from {want} (the values before it: "
                f"{got or 'none'}); every roll of a fresh-rolls match must be fresh",
            )
        expected = fresh_label(base, pending[0][3], pending[1][3])
        if label != expected:
            return refuse(
                i,
                f"dice {label!r} are not drawn at the label of the two values sent ({expected!r})",
                expected=expected,
                found=label,
            )
        rolls += 1
        pending = []
    if fresh:
        n = sum(len(v) for v in used.values())
        done = f"{rolls} fresh roll(s) from {n} values, each on its seat's roll chain in order"
        rep.ok("fresh rolls", f"{done}, sent in §6's order")
    return True


def check_cut(rep: Any, doc: dict[str, Any], ruleset: dict[str, Any] | None) -> bool:
    """``cut`` (hokm with ``"cut": true``): the cutter sends ``{"type": "cut"}`` and the cut
    is the next event, a ``uniform`` draw at ``h{h}/cut`` (§5): nobody chooses k."""
    if doc["game"] != "hokm" or ruleset is None or ruleset.get("cut") is not True:
        return True
    refuse = partial(_at_event, rep, "cut")
    hand: str | None = None
    events = doc["events"]
    cuts = 0
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        label = ev.get("label")
        if ev.get("type") == "chance" and isinstance(label, str):
            m = _HAND_SHUFFLE.match(label)
            if m:
                hand = m.group(1)
            elif label.endswith("/cut"):
                prev = events[i - 1] if i else None
                pact = prev.get("action") if isinstance(prev, dict) else None
                if not (isinstance(pact, dict) and pact.get("type") == "cut"):
                    return refuse(i, f"cut draw {label!r} without a cut action before it")
            continue
        act = ev.get("action")
        if ev.get("type") != "action" or not isinstance(act, dict):
            continue
        if act.get("type") == "tap":
            return refuse(i, "a tap (no cut); qahwa-fair/2 always draws the cut")
        if act.get("type") != "cut":
            continue
        if set(act) != {"type"}:
            extra = {k: v for k, v in act.items() if k != "type"}
            return refuse(
                i,
                f"a cut with a chosen k ({render.short(extra, 40)}); "
                "qahwa-fair/2 draws the cut, nobody chooses it",
                found=act,
            )
        nxt = events[i + 1] if i + 1 < len(events) else None
        want = f"h{hand}/cut"
        if not (
            isinstance(nxt, dict)
            and nxt.get("type") == "chance"
            and nxt.get("kind") == "uniform"
            and nxt.get("label") == want
        ):
            return refuse(i, f"the cut is not followed by its draw (uniform at {want!r})")
        cuts += 1
    rep.ok("cut", f"{cuts} cut(s), each drawn (uniform at h{{h}}/cut), none chosen")
    return True


# -- the event chain (§7) --------------------------------------------------------------------


def check_chain(rep: Any, doc: dict[str, Any], state: V2State) -> None:
    """``chain``: chain[-1] = SHA-256(canonical lock), chain[n] over each event, to ``chain``."""
    try:
        h = chain_start(doc["lock"])
        out = [h]
        encoded = []
        sha256 = hashlib.sha256
        for ev in doc["events"]:
            if not isinstance(ev, dict):
                rep.fail("chain", "an event is not an object: the chain cannot be computed")
                return
            # fairness.chain_next(h, ev), keeping the event's canonical JSON for the
            # transcript's signature (tests/verify/test_verify_fast_paths.py holds them equal)
            data = canonical_json(ev)
            h = sha256(h + data).digest()
            out.append(h)
            encoded.append(data)
    except (TypeError, ValueError) as exc:
        rep.fail("chain", f"the chain cannot be computed: {exc}")
        return
    state.chain = out
    state.event_json = encoded
    if h.hex() == doc["chain"]:
        state.chain_ok = True
        rep.ok(
            "chain",
            f"chain over the lock and {len(out) - 1} events = "
            f"{doc['chain'][:16]}… as the transcript says",
        )
    else:
        rep.fail(
            "chain",
            "the event chain recomputed from the lock and the events is not the transcript's chain",
            expected=h.hex(),
            found=doc["chain"],
        )


# -- times (§7) ------------------------------------------------------------------------------


_EVENT_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _plain_event_time(a: Any, days: dict[str, bool]) -> bool:
    """``a`` is an event time of §7's shape (``2026-12-03T21:30:00.123Z``) naming a real
    instant (each date checked once, in ``days``); False says only "not plainly"."""
    if type(a) is not str or len(a) != 24 or _EVENT_AT.fullmatch(a) is None:
        return False
    if not (a[11:13] <= "23" and a[14:16] <= "59" and a[17:19] <= "59"):
        return False
    day = a[:10]
    ok = days.get(day)
    if ok is None:
        try:
            parse_time_us(day + "T00:00:00.000Z", event=True)
            ok = True
        except ValueError:
            ok = False
        days[day] = ok
    return ok


def check_times(
    rep: Any,
    doc: dict[str, Any],
    turns: tuple[list[int | None], Callable[[], int | None]] | None,
) -> None:
    """``times`` (fairness-v2.md §7, times): every event's ``at`` is a time, none before
    the previous one's (nor the lock's ``locked_at``), and a timeout's ``at`` is at least
    its deadline: the owing seat owes the step from the ``at`` of the event before the
    timeout (the lock's ``locked_at`` when no action came before it) plus the ruleset's
    ``turn_seconds``. The owing seat is the one on turn (``turns``: the seat on turn after
    each event, and how to find the first; None when the events did not replay).

    A transcript whose events carry no ``at`` was made before the revision: its times and
    timeouts are reported as not checked, and nothing else changes."""
    events = doc["events"]
    timeouts = [
        i
        for i, ev in enumerate(events)
        if isinstance(ev, dict) and ev.get("type") == "end" and ev.get("reason") == "timeout"
    ]
    timed = [isinstance(ev, dict) and "at" in ev for ev in events]
    if not any(timed):
        rep.skip(
            "times",
            "not checked: the events carry no times (a transcript made before the "
            f"{TIMES_REVISION} revision)" + ("; its timeout is not checked" if timeouts else ""),
        )
        return
    first = timed.index(True)
    try:
        locked = parse_time_us(doc["lock"].get("locked_at"))
    except ValueError as exc:
        rep.fail("times", f"the lock's locked_at is not a time: {exc}")
        return
    # Event times have one fixed shape (milliseconds, Z), so they compare as text in time
    # order: each is checked for its shape and compared with the one before as a string;
    # only the few a check needs are turned into numbers.
    days: dict[str, bool] = {}
    prev_text: str | None = None
    for i in range(first, len(events)):
        ev = events[i]
        if not timed[i]:
            rep.fail(
                "times",
                f"event {i} carries no time at, but event {first} and those after it do",
                seq=i,
            )
            return
        a = ev["at"]
        if not _plain_event_time(a, days):
            try:
                parse_time_us(a, event=True)
                raise ValueError(f"{a!r} is not a time")  # pragma: no cover - shape differs
            except ValueError as exc:
                rep.fail("times", f"event {i}: at {exc}", seq=i, found=a)
                return
        if prev_text is None:
            t = parse_time_us(a, event=True)
            if t < locked:
                rep.fail(
                    "times",
                    f"event {i}'s at {a} is before the lock's locked_at {render.when(locked)}: "
                    "times never decrease along the chain",
                    seq=i,
                    expected=f"at or after {render.when(locked)}",
                    found=a,
                )
                return
        elif a < prev_text:
            rep.fail(
                "times",
                f"event {i}'s at {a} is before event {i - 1}'s at {prev_text}: "
                "times never decrease along the chain",
                seq=i,
                expected=f"at or after {prev_text}",
                found=a,
            )
            return
        prev_text = a
    ruleset = parse_ruleset_json(doc["ruleset"]) or {}
    turn_s = ruleset.get("turn_seconds", TURN_SECONDS)
    if not is_int(turn_s):
        rep.fail("times", f"the ruleset's turn_seconds is not a whole number: {turn_s!r}")
        return
    notes: list[str] = []
    unchecked: list[str] = []
    for n in timeouts:
        ev = events[n]
        t_end = parse_time_us(ev["at"], event=True)
        acted = any(isinstance(e, dict) and e.get("type") == "action" for e in events[:n])
        if acted:
            if not timed[n - 1]:
                unchecked.append(f"event {n} (event {n - 1} carries no time)")
                continue
            since = parse_time_us(events[n - 1]["at"], event=True)
            from_what = f"event {n - 1}'s at {render.when(since)}"
        else:
            since, from_what = locked, f"the lock's locked_at {render.when(locked)}"
        seat = ev.get("seat")
        if turns is not None:
            after, start = turns
            owing = after[n - 1] if 0 < n <= len(after) else start() if n == 0 else None
            if owing is not None and seat != owing:
                rep.fail(
                    "times",
                    f"event {n}: a timeout of seat {seat}, but seat {owing} owed the next step",
                    seq=n,
                    expected=owing,
                    found=seat,
                )
                return
        due = since + turn_s * 1_000_000
        if t_end < due:
            early = (due - t_end) / 1_000_000
            rep.fail(
                "times",
                f"event {n}: seat {seat}'s timeout at {render.when(t_end)} is {early:g} s before its "
                f"deadline {render.when(due)} ({from_what} + turn_seconds {turn_s} s): signed proof "
                "that the server declared the timeout early",
                seq=n,
                expected=f"at or after {render.when(due)}",
                found=ev.get("at"),
            )
            return
        notes.append(f"seat {seat}'s timeout at {render.when(t_end)}, deadline {render.when(due)}")
    head = (
        f"{len(events) - first} event time(s) in order from the lock's locked_at"
        if first == 0
        else f"events {first}-{len(events) - 1} carry times, in order (events before "
        f"{first} none: made before the {TIMES_REVISION} revision)"
    )
    tail = "".join(f"; {x}: at or after it" for x in notes) + "".join(
        f"; the timeout at {x} not checked" for x in unchecked
    )
    rep.ok("times", head + tail)


# -- replay ----------------------------------------------------------------------------------


def check_no_reveal(
    rep: Any,
    doc: dict[str, Any],
    cls: type[Engine],
    unrevealed: list[int],
    ruleset: dict[str, Any] | None,
) -> None:
    """A match some seat never revealed: one ``no_reveal`` end naming exactly those seats,
    no chance event, and the forfeit result of ``games.ends``."""
    events = doc["events"]
    want = {"seq": 0, "type": "end", "reason": "no_reveal", "seats": unrevealed}
    if len(events) != 1 or not (
        isinstance(events[0], dict)
        and strict_equal({k: v for k, v in events[0].items() if k != "at"}, want)
    ):
        rep.fail(
            "replay",
            f"seat(s) {unrevealed} never revealed, so the events must be the "
            f"one no_reveal end naming them and no chance event",
            expected=[want],
            found=events,
        )
        rep.skip("result", "not checked: the events are not a no_reveal end")
        return
    rep.ok("replay", f"no_reveal: seat(s) {unrevealed} forfeit; no chance event was drawn")
    try:
        parsed = cls.parse_ruleset(ruleset if ruleset is not None else {}, protocol=V2)
        calc = json.loads(json.dumps(no_reveal_result(cls, parsed, unrevealed)))
    except GameError as exc:
        rep.fail("result", f"the ruleset is refused: {exc}")
        return
    if cls.seat_count(parsed) != len(doc["seats"]):
        rep.fail(
            "seats", f"the ruleset has {cls.seat_count(parsed)} seats, the lock {len(doc['seats'])}"
        )
    check_result(rep, doc, calc, "the no_reveal result")


def check_rules_v1(
    rep: Any, doc: dict[str, Any], cls: type[Engine], *, progress: Progress | None = None
) -> tuple[render.DrawContext, None]:
    """qahwa-fair/1: commitment, match key, replay, result into ``rep``; the draws seen."""
    ctx = render.DrawContext(doc, rep.computed)
    seed = check_commitment(rep, doc, V1)
    seeds = seat_seeds(rep, doc)
    key: bytes | None = None
    if seed is not None and seeds is not None:
        try:
            key = match_key(seed, doc["match_id"], doc["game"], doc["ruleset"], seeds)
            rep.ok("match key", f"K = {key.hex()[:16]}… from {len(seeds)} client seed(s)")
        except FairnessError as exc:
            rep.fail("match key", f"cannot compute K: {exc}")
    if key is None:
        rep.skip("replay", "not replayed: no match key")
    else:
        seats = None if seeds is None else (len(seeds), "the transcript")
        replay_and_check(rep, doc, cls, key, ctx, PROTOCOL, progress=progress, seats=seats)
    if not any(c["name"] == "result" for c in rep.checks):
        rep.skip("result", "not checked: the events did not replay")
    return ctx, None


def _not_replayed(rep: Any, why: str) -> None:
    """``replay`` and ``result`` skipped: ``why``."""
    rep.skip("replay", f"not replayed: {why}")
    rep.skip("result", "not checked: the events did not replay")


class SeededDeal:
    """The checks a transcript's deal adds to qahwa-fair/2's: none for a deal from the seeds
    (the replay draws it)."""

    def skip(self, rep: Any, why: str) -> None:
        """The deal's check skipped: ``why``."""

    def replayed(self, rep: Any, doc: dict[str, Any], engine: Engine | None) -> None:
        """The deal checked once the events replayed (``engine`` None: they did not)."""


class SealedDeal(SeededDeal):
    """qahwa-fair/3's sealed deal: every step, proof and opening (:func:`check_sealed`)."""

    def skip(self, rep: Any, why: str) -> None:
        rep.skip("sealed", f"not checked: {why}")

    def replayed(self, rep: Any, doc: dict[str, Any], engine: Engine | None) -> None:
        check_sealed(rep, doc, engine)


def check_rules_v2(
    rep: Any,
    doc: dict[str, Any],
    cls: type[Engine],
    *,
    progress: Progress | None = None,
    deal: SeededDeal = SeededDeal(),
) -> tuple[render.DrawContext, V2State]:
    """Every rules check of a v2 transcript into ``rep`` (see the module doc), with its
    ``deal``'s (a qahwa-fair/3 transcript's: :class:`SealedDeal`)."""
    state = V2State()
    ctx = render.DrawContext(doc)
    ruleset = parse_ruleset_json(doc["ruleset"])
    lock_ok = check_lock(rep, doc, state)
    seats_ok = lock_ok and check_seats(rep, doc)
    seed = check_commitment(rep, doc)
    if not seats_ok:
        why = "the seats do not stand as the lock lists them"
        rep.skip("reveals", f"not checked: {why}")
        _not_replayed(rep, why)
        deal.skip(rep, why)
        check_chain(rep, doc, state)
        check_times(rep, doc, None)
        return ctx, state
    pairs, unrevealed = revealed_seeds(rep, doc, state)
    check_chain(rep, doc, state)
    if unrevealed:
        check_no_reveal(rep, doc, cls, unrevealed, ruleset)
        deal.skip(rep, "the match never started (nothing was dealt)")
        check_times(rep, doc, None)
        return ctx, state
    key: bytes | None = None
    if seed is not None and pairs is not None and state.lock is not None:
        try:
            key = state.lock.match_key(seed, pairs)
            rep.ok(
                "match key",
                f"K = {key.hex()[:16]}… (HMAC-SHA512) from {len(pairs)} "
                "seat(s)' client seeds and nonces",
            )
        except (FairnessError, TypeError) as exc:
            rep.fail("match key", f"cannot compute K: {exc}")
    if doc["game"] in BOARD_FRESH:
        check_fresh_rolls(rep, doc, state, ruleset)
    check_cut(rep, doc, ruleset)
    if key is None:
        _not_replayed(rep, "no match key")
        deal.skip(rep, "the events did not replay")
        check_times(rep, doc, None)
        return ctx, state
    mctx = MatchContext(
        doc["match_id"],
        tuple(s.roll_chain for s in state.seats),
        tuple(s.seat for s in state.seats if s.house),
    )
    turns: list[int | None] = []  # the seat on turn after each event, as the rules say
    chance_seen: dict[int, Any] = {}

    def observe(ev: Event, live: Engine) -> None:
        turns.append(live.turn)
        seq = ev.get("seq")
        if ev.get("type") == "chance" and is_int(seq):
            rep.computed[seq] = (ev.get("result"), True)
            chance_seen[seq] = ev.get("result")

    def first_turn() -> int | None:
        """The seat on turn before any event (the rules' start, drawn again)."""
        parsed = cls.parse_ruleset(loads_strict(doc["ruleset"]), protocol=V2)
        return cls(parsed, Chance(key), mctx).turn

    def replayed(engine: Engine | None) -> None:
        deal.replayed(rep, doc, engine)
        if engine is None:
            rep.skip("result", "not checked: the events did not replay")
            check_times(rep, doc, None)
        else:
            check_times(rep, doc, (turns, first_turn))

    replay_and_check(
        rep,
        doc,
        cls,
        key,
        ctx,
        V2.name,
        progress=progress,
        mctx=mctx,
        seats=(len(state.seats), "the lock"),
        observe=observe,
        replayed=replayed,
        chance_count=lambda: len(chance_seen),
    )
    return ctx, state


#: the actions of a sealed match that carry a proof (a deal step, or a play with its opening)
def _sealed_action(ev: Any) -> dict[str, Any] | None:
    act = ev.get("action") if isinstance(ev, dict) and ev.get("type") == "action" else None
    if isinstance(act, dict) and (act.get("type") == "sealed" or "share" in act):
        return act
    return None


def check_sealed(rep: Any, doc: dict[str, Any], engine: Engine | None) -> None:
    """``sealed``: every key, shuffle, share, opening and revealed key of every hand verified
    (by the replay, through the engine), every hand whose keys were all revealed opened whole,
    its deal recomputed and its rules over hidden hands checked. When the replay stopped at a
    sealed step, this row says which proof failed."""
    if engine is None:
        failed = next((f for f in reversed(rep.failures) if f["check"] == "replay"), None)
        seq = failed["seq"] if failed is not None else None
        events = doc["events"]
        ev = events[seq] if is_int(seq) and 0 <= seq < len(events) else None
        act = _sealed_action(ev)
        if failed is not None and act is not None and isinstance(ev, dict):
            what = (
                f"its sealed {act.get('step')!r} step"
                if act.get("type") == "sealed"
                else f"the opening its {act.get('type')!r} carries"
            )
            why = str(failed["message"]).rpartition("rejected: ")[2]
            rep.fail(
                "sealed",
                f"event {seq}: seat {ev.get('seat')}: {what} is refused: {why}",
                seq=seq,
                found=act,
            )
        else:
            rep.skip("sealed", "not checked: the events did not replay")
        return
    if not isinstance(engine, SealedGame):
        rep.fail("sealed", "the engine of this transcript deals no sealed hands")
        return
    hands = engine.sealed_hands
    count = {name: sum(len(h[name]) for h in hands) for name in ("keys", "shuffles", "shares")}
    opened = sum(len(h["openings"]) for h in hands)
    whole = sum(1 for h in hands if len(h["revealed"]) == engine.n_seats)
    cut = len(hands) - whole
    rep.ok(
        "sealed",
        f"{len(hands)} hand(s): {count['keys']} keys, {count['shuffles']} shuffle proofs, "
        f"{count['shares']} shares and {opened} openings verified; {whole} hand(s) opened "
        "whole with the revealed keys, the deal and the rules over hidden hands rechecked"
        + (
            f" ({cut} hand cut short by the match's end before its keys were revealed)"
            if cut
            else ""
        ),
    )


def replay_and_check(
    rep: Any,
    doc: dict[str, Any],
    cls: type[Engine],
    key: bytes,
    ctx: render.DrawContext,
    protocol: str,
    *,
    progress: Progress | None,
    mctx: MatchContext | None = None,
    seats: tuple[int, str] | None = None,
    observe: Callable[[Event, Engine], None] | None = None,
    replayed: Callable[[Engine | None], None] | None = None,
    chance_count: Callable[[], int] | None = None,
) -> None:
    """``replay`` and ``result``, the same for every protocol: every event through the rules
    from ``key``, then the outcome against the transcript's. The protocol's hooks: ``seats``
    (how many seats, and where that number comes from), ``observe`` (each event as replayed),
    ``replayed`` (the engine once the events replayed, None when they were refused) and
    ``chance_count`` (the chance results recomputed; by default the draws ``ctx`` saw). An
    error in the engine itself is a failed replay with neither a result nor ``replayed``."""
    events: list[Any] = doc["events"]
    total = len(events)
    step = max(1, total // 50)
    done = 0

    def on_event(ev: Event, live: Engine) -> None:
        nonlocal done
        if observe is not None:
            observe(ev, live)
        ctx.observe(ev, live)
        if progress is not None:
            done += 1
            if done % step == 0:
                progress(done, total)

    try:
        engine = replay(
            cls, doc["ruleset"], key, events, protocol=protocol, ctx=mctx, on_event=on_event
        )
    except ReplayError as exc:
        if (
            exc.seq is not None
            and isinstance(exc.expected, dict)
            and isinstance(exc.found, dict)
            and exc.expected.get("label") == exc.found.get("label")
        ):
            rep.computed[exc.seq] = (exc.expected.get("result"), False)
        rep.fail(
            "replay",
            render.describe_replay_error(exc, events),
            seq=exc.seq,
            expected=exc.expected,
            found=exc.found,
        )
        if replayed is not None:
            replayed(None)
        return
    except Exception as exc:  # not a refused event: a bug in the engine itself
        rep.fail(
            "replay",
            f"the rules engine failed (a bug in qahwa, not a verdict on the "
            f"transcript): {exc.__class__.__name__}: {exc}",
        )
        if replayed is not None:
            rep.skip("result", "not checked: the events did not replay")
        return
    if seats is not None and engine.n_seats != seats[0]:
        rep.fail("seats", f"the ruleset has {engine.n_seats} seats, {seats[1]} {seats[0]}")
    if replayed is not None:
        replayed(engine)
    n_chance = ctx.total if chance_count is None else chance_count()
    rep.ok(
        "replay",
        f"{total} events replayed: {n_chance} chance results recomputed, every action legal",
    )
    if engine.outcome is None:
        rep.fail("result", "the events end before the match is over")
        return
    # as JSON (tuples in an outcome's detail are lists in the transcript)
    calc = json.loads(json.dumps(engine.outcome.to_json()))
    check_result(rep, doc, calc, "the replayed result")


def check_result(rep: Any, doc: dict[str, Any], calc: Any, what: str) -> None:
    """``result``: ``calc`` (the result the rules give, as JSON) is the transcript's."""
    if strict_equal(calc, doc.get("result")):
        rep.ok("result", render.result_text(calc, doc))
    else:
        rep.fail(
            "result",
            f"{what} differs from the transcript's",
            expected=calc,
            found=doc.get("result"),
        )


#: every protocol ``verify`` knows, newest first, and its rules checks (which return the draws
#: seen and, for v2, what the signature checks need); its transcript's fields are
#: :data:`fairness.records.TRANSCRIPT_FIELDS`'. qahwa-fair/3 (fairness-v3 §9a, §10): every
#: check of qahwa-fair/2, the sealed deal's steps verified as the replay applies them (the
#: engine refuses a step whose proof, share, opening or revealed key does not verify), then
#: :func:`check_sealed`.
RULES: dict[str, Callable[..., tuple[render.DrawContext, V2State | None]]] = {
    V3.name: partial(check_rules_v2, deal=SealedDeal()),
    V2.name: check_rules_v2,
    PROTOCOL: check_rules_v1,
}
