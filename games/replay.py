"""The one replay loop: a match rebuilt from its events, every event checked.

The live service's catch-up (an engine from the cache brought up to the log), ``verify``
(CLI and page) and the tests all rebuild matches here:

- :func:`replay` builds the engine from the ruleset, the key and (v2) the match context, and
  feeds it every event of a transcript;
- :class:`Replayer` feeds events to an engine that has applied every earlier one (the
  service's catch-up).

Every chance event must equal, byte for byte as canonical JSON, the one the rules draw at
that point (a die written ``3.0`` or ``true`` is not ``3``); every action must be accepted
by the rules; an end event must be one the rules accept. v2 events may carry ``sig`` (a
seat's signature) and ``at`` (the server's time, fairness-v2.md §7), both checked by the
verifier, not here, and a ``no_reveal`` end its ``seats``.
Failures raise :class:`games.errors.ReplayError` with a ``kind`` (see there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairness import (
    FairProtocol,
    SeedError,
    canonical_json,
)

from .base import FORMS, Chance, Engine, Event, MatchContext, check_protocol, variant
from .ends import NoRevealMatch
from .errors import ActionError, GameError, ReplayError, RulesetError

OnEvent = Callable[[Event, Engine], object]
"""``on_event(event, engine)``: called for every event once it is checked, with the engine
as that event left it."""

END_EVENT = "end"
#: an event's fields, by whether the protocol signs events (``FairProtocol.signed``)
_EVENT_KEYS: dict[bool, dict[str, frozenset[str]]] = {
    False: {
        "action": frozenset({"seq", "type", "seat", "action"}),
        END_EVENT: frozenset({"seq", "type", "reason", "seat"}),
    },
    True: {
        "action": frozenset({"seq", "type", "seat", "action", "sig", "at"}),
        END_EVENT: frozenset({"seq", "type", "reason", "seat", "sig", "at"}),
    },
}
_NO_REVEAL_KEYS = frozenset({"seq", "type", "reason", "seats"})
#: the fields of a v2 event that the server sets and the rules do not draw: ``at``
_V2_TIME = "at"


def _strip(ev: Mapping[str, Any], at_ok: bool = False) -> Event:
    """The event without ``seq`` (and, ``at_ok``: a v2 event, without its time ``at``)."""
    return {k: v for k, v in ev.items() if k != "seq" and not (at_ok and k == _V2_TIME)}


def _plainly_equal(a: Any, b: Any) -> bool:
    """True only when ``a`` and ``b`` are the same JSON value built of plain types alone:
    dicts with ASCII string keys, lists, ASCII strings, ints, bools and None, each of the
    same type on both sides. Such values have a canonical JSON, and it is the same for
    both; False says nothing (floats, other types, non-ASCII text: ``same_json`` decides)."""
    t = type(a)
    if t is not type(b):
        return False
    if t is dict:
        if len(a) != len(b):
            return False
        for k, x in a.items():
            if (
                type(k) is not str
                or not k.isascii()
                or k not in b
                or not _plain_leaf_equal(x, b[k])
            ):
                return False
        return True
    if t is list:
        if len(a) != len(b):
            return False
        if len(a) > 4 and a == b:
            # loosely equal (1 == 1.0 == True); plainly so when every member on both sides
            # is an int, or every one an ASCII str (a shuffle's result), compared in C
            kinds = set(map(type, a))
            if len(kinds) == 1 and kinds == set(map(type, b)):
                if int in kinds or (str in kinds and "".join(a).isascii()):
                    return True
        for x, y in zip(a, b, strict=True):
            if not _plain_leaf_equal(x, y):
                return False
        return True
    return _plain_leaf_equal(a, b)


def _plain_leaf_equal(x: Any, y: Any) -> bool:
    """``_plainly_equal`` for one member: scalars compared here, containers by recursion."""
    t = type(x)
    if t is not type(y):
        return False
    if t is int or t is bool:
        return bool(x == y)
    if t is str:
        return bool(x == y and x.isascii())
    if x is None:
        return True
    if t is dict or t is list:
        return _plainly_equal(x, y)
    return False


def same_json(a: Any, b: Any) -> bool:
    """Equal as canonical JSON (type-strict: ``3``, ``3.0`` and ``true`` all differ)."""
    if _plainly_equal(a, b):  # the usual case, without encoding either side
        return True
    try:
        return canonical_json(a) == canonical_json(b)
    except (TypeError, ValueError):
        return False


_DICE_KEYS = frozenset({"type", "label", "kind", "args", "result"})


def _same_dice(found: dict[str, Any], produced: Event, at_ok: bool = False) -> bool:
    """True when ``found`` (``seq`` aside) is plainly the dice draw ``produced``, as
    :meth:`games.base.Chance.dice` writes it (False says nothing): the usual chance event
    of the backgammon games, compared member by member without a loop."""
    if produced.keys() != _DICE_KEYS:
        return False
    pr, pg, label = produced["result"], produced["args"], produced["label"]
    if not (
        type(pr) is list
        and len(pr) == 2
        and type(pr[0]) is int
        and type(pr[1]) is int
        and type(pg) is dict
        and len(pg) == 2
        and type(pg.get("count")) is int
        and type(pg.get("sides")) is int
        and type(label) is str
        and label.isascii()
        and produced["type"] == "chance"
    ):
        return False
    r, g = found.get("result"), found.get("args")
    return (
        type(r) is list
        and len(r) == 2
        and type(r[0]) is int
        and type(r[1]) is int
        and r == pr
        and type(g) is dict
        and type(g.get("count")) is int
        and type(g.get("sides")) is int
        and g == pg
        and found.get("label") == label
        and found.get("type") == "chance"
        and found.get("kind") == "dice"
        and len(found) - ("seq" in found) - (at_ok and _V2_TIME in found) == 5
    )


def _same_event(found: dict[str, Any], produced: Event, at_ok: bool = False) -> bool:
    """``same_json(_strip(found, at_ok), produced)``, without copying ``found`` when its
    members are plainly those of ``produced`` (``seq`` and, ``at_ok``, ``at`` aside)."""
    if produced.get("kind") == "dice" and _same_dice(found, produced, at_ok):
        return True
    if len(found) - ("seq" in found) - (at_ok and _V2_TIME in found) == len(produced):
        for k, v in produced.items():
            if type(k) is not str or k == "seq" or k not in found or not k.isascii():
                break
            x = found[k]
            t = type(v)
            if type(x) is not t:
                break
            # the scalar members inline (as _plain_leaf_equal compares them), else recurse
            if t is str:
                if x != v or not v.isascii():
                    break
            elif t is int:
                if x != v:
                    break
            elif not _plainly_equal(x, v):
                break
        else:
            return True
    return same_json(_strip(found, at_ok), produced)


def _what(produced: Event) -> str:
    """What a produced event that the transcript must hold next is, for messages: a chance
    event, or the end a sealed hand's rule check writes (fairness-v3 §9a)."""
    if produced.get("type") == END_EVENT:
        return f"the end event (reason {produced.get('reason')!r}, seat {produced.get('seat')})"
    return f"chance event {produced.get('label')!r}"


def _bad(ev: Mapping[str, Any], pos: int, what: str, kind: str = "event", **kw: Any) -> ReplayError:
    """The ReplayError "event ``pos``: ``what``" for event ``ev`` (``seq`` aside)."""
    return ReplayError(f"event {pos}: {what}", kind=kind, seq=pos, found=_strip(ev), **kw)


def _rejected(exc: GameError, pos: int, seat: Any, ev: Mapping[str, Any]) -> ReplayError:
    """The ReplayError for action event ``pos`` that the rules refused with ``exc``."""
    kind = exc.kind if isinstance(exc, ActionError) else "action"
    return _bad(ev, pos, f"action by seat {seat} rejected: {exc}", kind)


class Replayer:
    """Feeds transcript events, in order, to an engine that has applied every earlier one.

    ``next_seq`` is the seq of the next event; ``pending`` the chance events the engine has
    drawn that the events must hold next (the start's draws, for a new engine).
    ``on_event`` as in :func:`replay`.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        next_seq: int = 0,
        pending: Sequence[Event] = (),
        on_event: OnEvent | None = None,
    ) -> None:
        self.engine = engine
        self.pos = next_seq
        self.pending: list[Event] = list(pending)
        self.on_event = on_event
        self.keys = _EVENT_KEYS[engine.proto.signed]
        #: a v2 event may carry the server's time ``at`` (the verifier checks it)
        self.at_ok = engine.proto.signed

    def feed(self, events: Sequence[Any]) -> Replayer:
        """Check and apply ``events`` (the next ones of the match); returns self."""
        keys = self.keys
        on_event = self.on_event
        engine = self.engine
        for ev in events:
            pending = self.pending
            if pending and type(ev) is dict:
                # the usual chance event: equal to the draw owed, seq in place
                pos = self.pos
                seq = ev.get("seq", pos)
                if type(seq) is int and seq == pos and _same_event(ev, pending[0], self.at_ok):
                    del pending[0]
                    if on_event is not None:
                        on_event(ev, engine)
                    self.pos = pos + 1
                    continue
                self._one(ev)  # not so: the full checks (and their error)
                continue
            # the usual action event (a dict of known fields, seq in place, no draw owed) is
            # checked here as _one and _step would; everything else goes through them
            if (
                not self.pending
                and type(ev) is dict
                and ev.get("type") == "action"
                and keys["action"].issuperset(ev)
                and type(ev.get("sig", "")) is str
            ):
                pos = self.pos
                seq = ev.get("seq", pos)
                if type(seq) is int and seq == pos:
                    seat = ev.get("seat")
                    try:
                        drawn = engine.replay_action(seat, ev.get("action"))  # type: ignore[arg-type]
                    except GameError as exc:  # ActionError included
                        raise _rejected(exc, pos, seat, ev) from None
                    self.pending = drawn
                    if on_event is not None:
                        on_event(ev, engine)
                    self.pos = pos + 1
                    continue
            self._one(ev)
        return self

    def finish(self) -> Engine:
        """The engine, once the events end where the rules draw nothing more."""
        if self.pending:
            produced = self.pending[0]
            raise ReplayError(
                f"transcript ends where {_what(produced)} is needed",
                kind="truncated",
                seq=None,
                expected=produced,
                found=None,
            )
        return self.engine

    def _one(self, ev: Any) -> None:
        pos = self.pos
        if not isinstance(ev, dict):
            raise ReplayError(
                f"event {pos} is not an object",
                kind="event",
                seq=pos,
                expected=self.pending[0] if self.pending else None,
                found=ev,
            )
        seq = ev.get("seq", pos)
        if type(seq) is not int or seq != pos:
            raise _bad(ev, pos, f"seq is {ev.get('seq')!r}", "seq")
        if self.pending:
            self._chance(ev, pos)
        else:
            self._step(ev, pos)
        if self.on_event is not None:
            self.on_event(ev, self.engine)
        self.pos += 1

    def _chance(self, found: dict[str, Any], pos: int) -> None:
        produced = self.pending.pop(0)
        if not _same_event(found, produced, self.at_ok):
            if produced.get("type") == END_EVENT:
                what = f"{_what(produced)} is missing (the rules end the match here)"
            elif found.get("type") != "chance":
                what = f"chance event {produced['label']!r} is missing (the rules draw it here)"
            elif found.get("label") == produced.get("label"):
                what = "chance result differs"
            else:
                what = "event differs from the replay"
            self.pending.insert(0, produced)
            raise ReplayError(
                f"event {pos}: {what}",
                kind="chance",
                seq=pos,
                expected=produced,
                found=_strip(found, self.at_ok),
            )

    def _step(self, ev: dict[str, Any], pos: int) -> None:
        engine = self.engine
        etype = ev.get("type")
        if etype == "chance":
            what = f"chance event {ev.get('label')!r} that the rules did not draw"
            raise _bad(ev, pos, what, "chance")
        allowed = self.keys.get(etype) if isinstance(etype, str) else None
        if allowed is None:
            raise _bad(ev, pos, f"unknown event type {etype!r}")
        if not allowed.issuperset(ev):
            extra = sorted(map(str, set(ev) - allowed))
            raise _bad(ev, pos, f"unexpected field(s) {', '.join(extra)} on a {etype} event")
        if "sig" in ev and not isinstance(ev["sig"], str):
            raise _bad(ev, pos, "'sig' must be a base64 string")
        if etype == "action":
            seat = ev.get("seat")
            try:
                drawn = engine.replay_action(seat, ev.get("action"))  # type: ignore[arg-type]
            except GameError as exc:  # ActionError included
                raise _rejected(exc, pos, seat, ev) from None
        else:
            if ev.get("reason") == "no_reveal":
                what = "a no_reveal end is the only event of a match that never started"
                raise _bad(ev, pos, what, "end")
            try:
                produced = engine.end_match(ev.get("reason"), ev.get("seat"))  # type: ignore[arg-type]
            except GameError as exc:
                raise _bad(ev, pos, f"end rejected: {exc}", "end") from None
            if engine.proto.signed and not same_json(
                {k: v for k, v in ev.items() if k not in ("seq", "sig", _V2_TIME)}, produced[0]
            ):
                what = "the end event is not as the rules write it"
                raise _bad(ev, pos, what, "end", expected=produced[0])
            drawn = produced[1:]
        self.pending = drawn


def parse_transcript_ruleset(
    engine_cls: type[Engine], ruleset: str | Mapping[str, Any], protocol: str | FairProtocol
) -> dict[str, Any]:
    """The parsed ruleset of a transcript (ReplayError kind ``ruleset`` when unusable).

    v2: the string must be strict JSON and exactly ``canonical_ruleset`` of its parse, so
    that it lists every rule with its effective value (fairness-v2.md §1).
    """
    proto = check_protocol(protocol)
    if isinstance(ruleset, str):
        try:
            raw = proto.loads(ruleset)
        except ValueError as exc:
            raise ReplayError(f"ruleset is not JSON: {exc}", kind="ruleset") from None
    else:
        raw = dict(ruleset)
    try:
        parsed = engine_cls.parse_ruleset(raw, protocol=proto)
    except RulesetError as exc:
        raise ReplayError(f"ruleset rejected: {exc}", kind="ruleset") from None
    if isinstance(ruleset, str):
        FORMS[proto.name].check_canonical(parsed, ruleset)
    return parsed


def _no_reveal(
    engine_cls: type[Engine],
    parsed: Mapping[str, Any],
    events: Sequence[Any],
    on_event: OnEvent | None,
) -> Engine:
    first = events[0] if events else None
    if not isinstance(first, dict) or first.get("reason") != "no_reveal":
        raise ReplayError(
            "a transcript without a match key must be a single no_reveal end",
            kind="end",
            seq=0,
            found=first,
        )
    if set(first) - {_V2_TIME} != _NO_REVEAL_KEYS or first.get("type") != END_EVENT:
        what = "a no_reveal end is exactly {seq, type, reason, seats} (and its time at)"
        raise _bad(first, 0, what)
    seq = first.get("seq")
    if type(seq) is not int or seq != 0:
        raise _bad(first, 0, f"seq is {seq!r}", "seq")
    try:
        match = NoRevealMatch(engine_cls, parsed, first.get("seats"))
    except GameError as exc:
        raise _bad(first, 0, f"end rejected: {exc}", "end") from None
    if on_event is not None:
        on_event(first, match)
    if len(events) > 1:
        raise ReplayError(
            "event 1: nothing follows a no_reveal end", kind="event", seq=1, found=events[1]
        )
    return match


def _check_tips(
    engine_cls: type[Engine], parsed: Mapping[str, Any], ctx: MatchContext | None
) -> None:
    """A fresh-rolls match needs every seat's roll-chain tip (from the lock) as 64 hex."""
    try:
        (ctx or MatchContext("")).roll_chain_tips(engine_cls.seat_count(parsed))
    except SeedError as exc:
        raise ReplayError(f"the lock's roll chains: {exc}", kind="roll_chain") from None
    except ValueError as exc:
        raise ReplayError(str(exc), kind="roll_chain") from None


def replay(
    engine_cls: type[Engine],
    ruleset: str | Mapping[str, Any],
    key: bytes | None,
    events: Sequence[Any],
    *,
    protocol: str | FairProtocol | None = None,
    ctx: MatchContext | None = None,
    on_event: OnEvent | None = None,
) -> Engine:
    """Rebuild a match from its transcript events, checking each against the rules.

    ``ruleset``: the transcript's string (or a dict); ``key``: the match key K (32 bytes for
    qahwa-fair/1, 64 for qahwa-fair/2; None only for a v2 match that ended ``no_reveal``,
    which has no K); ``ctx``: the match id and the roll-chain tips from the lock (v2 with
    fresh rolls). ``events``: chance events (recomputed here and compared whole), action
    events and at most one final end event. Raises ReplayError naming the first event that
    differs; ``on_event(event, engine)`` is called for every event once it is checked.

    ``protocol``: the transcript's (or the match row's); ``engine_cls`` becomes its variant of
    it (:func:`games.base.variant`). When None, ``engine_cls`` carries it (``PROTOCOL``).

    Only the games' own errors become a ReplayError; anything else an engine raises is a
    bug in the engine and propagates.
    """
    if protocol is not None:
        engine_cls = variant(engine_cls, protocol)
    proto = engine_cls.PROTOCOL
    parsed = parse_transcript_ruleset(engine_cls, ruleset, proto)
    if key is None:
        if not proto.signed:
            raise ValueError("only a qahwa-fair/2 no_reveal transcript has no match key")
        return _no_reveal(engine_cls, parsed, events, on_event)
    if len(key) != proto.key_bytes:
        raise ValueError(f"a {proto} match key is {proto.key_bytes} bytes, got {len(key)}")
    if parsed.get("fresh_rolls"):  # a rule of qahwa-fair/2 and later (v1 parses refuse it)
        _check_tips(engine_cls, parsed, ctx)
    chance = Chance(key)
    try:
        # an engine without fresh rolls needs no context (and may not take one)
        engine = engine_cls(parsed, chance, ctx) if ctx is not None else engine_cls(parsed, chance)
    except ActionError as exc:
        raise ReplayError(f"the match cannot start: {exc}", kind=exc.kind) from None
    return Replayer(engine, pending=chance.take_events(), on_event=on_event).feed(events).finish()
