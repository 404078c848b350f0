"""The one engine interface all games share.

An engine is a state machine for one match:

- ``Engine.parse_ruleset(raw)`` validates a ruleset dict, fills defaults and returns the
  normalized dict (``RulesetError`` on unknown keys or bad values). The transcript's ruleset
  string is ``fairness.canonical_ruleset(normalized)``.
- ``Engine.seat_count(ruleset)`` is the number of seats the ruleset implies.
- ``Engine(ruleset, chance)`` starts the match; every chance event is drawn through
  ``chance`` (a :class:`Chance`), with the labels of fairness-v1.md §5, at the moment the
  rules need it (never ahead of time).
- ``legal_actions(seat)`` is the complete list of actions that seat may send now, each
  exactly as it would be sent (JSON-ready dicts). Actions whose free parameter cannot be
  listed (live entropy on a roll, a cut position k) are listed in their plain form and
  documented by the engine.
- ``apply(seat, action)`` applies one action or raises an :class:`ActionError` subclass
  naming why; on an error the state is unchanged and no chance was drawn.
- ``view(seat)`` is that seat's view (``seat=None``: the public view, no hidden cards or
  tiles); it always carries ``game``, ``status``, ``turn``, ``seat`` and ``legal_actions``.
- ``outcome`` is None while the match runs, then an :class:`Outcome`.
- ``end_match(reason, seat)`` ends a running match by resignation of ``seat`` or
  abandonment.

``replay()`` rebuilds a match from a transcript's events and checks that every chance event
recomputes and every action is legal: the service and ``verify`` share it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from fairness import Stream, check_label

from .errors import (
    GameError,
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    ReplayError,
    RulesetError,
)

JSON = Any
Action = dict[str, Any]
Event = dict[str, Any]
T = TypeVar("T")

PLAYING = "playing"
FINISHED = "finished"


class Chance:
    """Every draw of a match, through the fairness stream of match key ``key``.

    Each draw is recorded as a transcript chance event; a label can be used only once.
    """

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.labels: set[str] = set()
        self._pending: list[Event] = []

    def _stream(self, label: str) -> Stream:
        check_label(label)
        if label in self.labels:
            raise ReplayError(f"chance label {label!r} used twice")
        return Stream(self.key, label)

    def _record(self, event: Event) -> None:
        # only after the draw succeeded: a draw with bad arguments uses up no label
        self.labels.add(event["label"])
        self._pending.append(event)

    def dice(self, label: str, count: int, sides: int = 6) -> list[int]:
        result = self._stream(label).dice(count, sides)
        self._record(
            {"type": "chance", "label": label, "kind": "dice",
             "args": {"count": count, "sides": sides}, "result": list(result)}
        )
        return result

    def uniform(self, label: str, n: int) -> int:
        result = self._stream(label).uniform(n)
        self._record(
            {"type": "chance", "label": label, "kind": "uniform", "args": {"n": n},
             "result": result}
        )
        return result

    def shuffle(self, label: str, items: Sequence[T]) -> list[T]:
        result = self._stream(label).shuffle(items)
        self._record(
            {"type": "chance", "label": label, "kind": "shuffle", "result": list(result)}
        )
        return result

    def take_events(self) -> list[Event]:
        """The chance events drawn since the last call, in order (without ``seq``)."""
        out, self._pending = self._pending, []
        return out


@dataclass(frozen=True)
class Outcome:
    """How a match ended.

    ``reason``: ``finished`` (played to the end), ``resigned`` or ``abandoned``.
    ``winners``: the winning seats (several for a team, or a shared first place; empty when
    nobody won). ``scores``: per side, as the game's view shows them. ``detail``: extras.
    """

    reason: str
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    detail: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = dict(self.detail)
        out.update(
            {"reason": self.reason, "winners": list(self.winners), "scores": list(self.scores)}
        )
        return out


def check_keys(
    raw: Mapping[str, Any] | None, defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Defaults filled; unknown keys and wrong JSON types rejected (bool vs int kept apart)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise RulesetError("ruleset must be a JSON object")
    unknown = sorted(set(raw) - set(defaults))
    if unknown:
        raise RulesetError(f"unknown ruleset key(s): {', '.join(unknown)}")
    out = dict(defaults)
    for key, value in raw.items():
        want = type(defaults[key])
        if want is bool:
            ok = isinstance(value, bool)
        elif want is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, want)
        if not ok:
            raise RulesetError(f"ruleset key {key!r} must be {want.__name__}, got {value!r}")
        out[key] = value
    return out


def int_in(ruleset: Mapping[str, Any], key: str, lo: int, hi: int) -> None:
    v = ruleset[key]
    if not lo <= v <= hi:
        raise RulesetError(f"ruleset key {key!r} must be {lo} to {hi}, got {v}")


def one_of(ruleset: Mapping[str, Any], key: str, allowed: Iterable[Any]) -> None:
    allowed = list(allowed)
    if ruleset[key] not in allowed:
        raise RulesetError(f"ruleset key {key!r} must be one of {allowed}, got {ruleset[key]!r}")


def target_winner(scores: Sequence[int], target: int) -> int | None:
    """The side that wins a match played to ``target``: the only side to reach it, or the
    highest of several that reach it in the same hand; None while none has (or when the
    highest are level: play on)."""
    reached = [i for i, sc in enumerate(scores) if sc >= target]
    if not reached:
        return None
    best = max(scores[i] for i in reached)
    top = [i for i in reached if scores[i] == best]
    return top[0] if len(top) == 1 else None


def action_type(action: Any, allowed: Iterable[str]) -> str:
    """The action's type after checking it is an object with a known string ``type``."""
    if not isinstance(action, dict):
        raise MalformedActionError("an action must be a JSON object")
    t = action.get("type")
    allowed = tuple(allowed)
    if not isinstance(t, str):
        raise MalformedActionError("an action needs a string 'type'")
    if t not in allowed:
        raise MalformedActionError(f"unknown action type {t!r}; expected one of {list(allowed)}")
    return t


def only_keys(action: Mapping[str, Any], *keys: str) -> None:
    """Reject fields other than ``type`` and ``keys`` in an action."""
    extra = sorted(set(action) - {"type", *keys})
    if extra:
        raise MalformedActionError(
            f"unexpected field(s) {', '.join(extra)} for action {action.get('type')!r}"
        )


class Engine(ABC):
    """Base of every game engine (see the module docstring for the contract)."""

    game: ClassVar[str]
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]]
    #: inclusive (lo, hi) bounds of integer ruleset keys, checked by ``parse_ruleset``
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {}
    #: the number of seats when the ruleset has no ``players`` key
    SEATS: ClassVar[int | None] = None
    ACTION_TYPES: ClassVar[tuple[str, ...]]

    def __init__(self, ruleset: Mapping[str, Any], chance: Chance) -> None:
        self.ruleset = dict(ruleset)
        self.chance = chance
        self.n_seats = self.seat_count(self.ruleset)
        self.outcome: Outcome | None = None

    # -- ruleset ---------------------------------------------------------------------------
    @classmethod
    def parse_ruleset(cls, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate, fill defaults and check ``RULESET_RANGES``; subclasses add other checks."""
        out = check_keys(raw, cls.RULESET_DEFAULTS)
        for key, (lo, hi) in cls.RULESET_RANGES.items():
            int_in(out, key, lo, hi)
        return out

    @classmethod
    def seat_count(cls, ruleset: Mapping[str, Any]) -> int:
        """``SEATS`` for fixed-size games, else the ruleset's ``players``."""
        if cls.SEATS is not None:
            return cls.SEATS
        return int(ruleset["players"])

    # -- sides -----------------------------------------------------------------------------
    def side_of(self, seat: int) -> int:
        """The side (team) a seat plays for; every seat is its own side unless overridden."""
        return seat

    def seats_of(self, side: int) -> tuple[int, ...]:
        """The seats that play for ``side``."""
        return tuple(s for s in range(self.n_seats) if self.side_of(s) == side)

    @property
    def n_sides(self) -> int:
        return len({self.side_of(s) for s in range(self.n_seats)})

    # -- state -----------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return PLAYING if self.outcome is None else FINISHED

    @property
    @abstractmethod
    def turn(self) -> int | None:
        """The seat to act now, or None when the match has ended."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Action]: ...

    def bot_actions(self, seat: int) -> list[Action]:
        """A non-empty subset of ``legal_actions`` for random bots (tests, benches, demo).

        Engines narrow it where uniformly random choices would never end a match (qahve's
        bids); it never changes what a player may send.
        """
        return self.legal_actions(seat)

    def apply(self, seat: int, action: Action) -> None:
        """Apply one action; ActionError subclasses leave the state unchanged."""
        if self.outcome is not None:
            raise MatchOverError("the match has ended")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_seats:
            raise NotYourTurnError(f"no seat {seat!r} in this match")
        action_type(action, self.ACTION_TYPES)
        if self.turn != seat:
            raise NotYourTurnError(f"it is seat {self.turn}'s turn, not seat {seat}'s")
        self._apply(seat, action)

    @abstractmethod
    def _apply(self, seat: int, action: Action) -> None:
        """Apply a well-typed action by the seat whose turn it is."""

    @abstractmethod
    def _view(self, seat: int | None) -> dict[str, JSON]:
        """The game-specific fields of a seat's view (None: the public view)."""

    def view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {"game": self.game}
        out.update(self._view(seat))
        out.update(
            {
                "game": self.game,
                "status": self.status,
                "turn": self.turn,
                "seat": seat,
                "legal_actions": self.legal_actions(seat) if seat is not None else [],
            }
        )
        if seat is not None and self.outcome is None:
            # What a simple random bot should choose from (a subset of legal_actions).
            out["suggested_actions"] = self.bot_actions(seat) if self.turn == seat else []
        if self.outcome is not None:
            out["result"] = self.outcome.to_json()
        return out

    def finish(self, side: int, detail: Mapping[str, JSON] | None = None) -> None:
        """End the match played out: every seat of ``side`` wins, with ``side_scores()``."""
        self.outcome = Outcome("finished", self.seats_of(side), self.side_scores(),
                               dict(detail or {}))

    def end_match(self, reason: str, seat: int | None = None) -> None:
        """End a running match: ``resigned`` by ``seat`` (its side loses) or ``abandoned``."""
        if self.outcome is not None:
            raise MatchOverError("the match has ended")
        if reason == "resigned":
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_seats:
                raise NotYourTurnError(f"no seat {seat!r} in this match")
            loser = self.side_of(seat)
            winners = tuple(s for s in range(self.n_seats) if self.side_of(s) != loser)
            self.outcome = Outcome("resigned", winners, self.side_scores(),
                                   {"resigned": seat})
        elif reason == "abandoned":
            self.outcome = Outcome("abandoned", (), self.side_scores())
        else:
            raise IllegalActionError(f"unknown end reason {reason!r}")

    @abstractmethod
    def side_scores(self) -> tuple[int, ...]:
        """The match score per side now (used in the outcome of a resignation)."""

    # -- public log ------------------------------------------------------------------------
    @classmethod
    def redact(cls, event: Event) -> Event:
        """The event as the public log shows it before the reveal.

        Default: dice and uniform draws are public; shuffles hide their result.
        """
        if event.get("type") == "chance" and event.get("kind") == "shuffle":
            out = {k: v for k, v in event.items() if k != "result"}
            out["hidden"] = True
            return out
        return event


# -- replay --------------------------------------------------------------------------------

END_EVENT = "end"
_EVENT_KEYS = {
    "action": {"seq", "type", "seat", "action"},
    END_EVENT: {"seq", "type", "reason", "seat"},
}


def _strip(ev: Event) -> Event:
    return {k: v for k, v in ev.items() if k != "seq"}


def replay(
    engine_cls: type[Engine],
    ruleset: str | Mapping[str, Any],
    key: bytes,
    events: Sequence[Event],
    *,
    on_event: Callable[[Event, Engine], object] | None = None,
) -> Engine:
    """Rebuild a match from transcript events, checking each against the rules.

    ``events`` are the transcript's events in order: chance events (recomputed here and
    compared whole), ``action`` events ``{"type": "action", "seat", "action"}``, and at most
    one final ``end`` event ``{"type": "end", "reason": "resigned"|"abandoned", "seat"?}``.
    Raises ReplayError naming the first event that differs. ``on_event(event, engine)`` is
    called for every event once it is checked, with the engine as that event left it (a
    verifier reads the state it shows from there; no subclass is needed).

    Only the games' own errors (:class:`GameError`: a refused action or end) become a
    ReplayError; anything else an engine raises is a bug in the engine and propagates.
    """
    if isinstance(ruleset, str):
        try:
            raw = json.loads(ruleset)
        except ValueError:
            raise ReplayError("ruleset is not JSON") from None
    else:
        raw = dict(ruleset)
    try:
        parsed = engine_cls.parse_ruleset(raw)
    except RulesetError as exc:
        raise ReplayError(f"ruleset rejected: {exc}") from None
    chance = Chance(key)
    pos = 0

    def expect_chance(engine: Engine) -> None:
        nonlocal pos
        for produced in chance.take_events():
            if pos >= len(events):
                raise ReplayError(
                    f"transcript ends where chance event {produced['label']!r} is needed",
                    seq=None, expected=produced, found=None,
                )
            found = events[pos]
            if not isinstance(found, dict):
                raise ReplayError(
                    f"event {pos} is not an object", seq=pos, expected=produced, found=found
                )
            if _strip(found) != produced:
                label_match = found.get("label") == produced.get("label")
                what = "chance result differs" if label_match else "event differs from the replay"
                raise ReplayError(
                    f"event {found.get('seq', pos)}: {what}",
                    seq=found.get("seq", pos), expected=produced, found=_strip(found),
                )
            if found.get("seq", pos) != pos:
                raise ReplayError(f"event {pos}: seq is {found.get('seq')!r}", seq=pos)
            if on_event is not None:
                on_event(found, engine)
            pos += 1

    engine = engine_cls(parsed, chance)
    expect_chance(engine)
    while pos < len(events):
        ev = events[pos]
        if not isinstance(ev, dict):
            raise ReplayError(f"event {pos} is not an object", seq=pos)
        if ev.get("seq", pos) != pos:
            raise ReplayError(f"event {pos}: seq is {ev.get('seq')!r}", seq=pos)
        etype = ev.get("type")
        if etype == "chance":
            raise ReplayError(
                f"event {pos}: chance event {ev.get('label')!r} that the rules did not draw",
                seq=pos, expected=None, found=_strip(ev),
            )
        allowed = _EVENT_KEYS.get(str(etype))
        if allowed is not None and not set(ev) <= allowed:
            extra = sorted(set(ev) - allowed)
            raise ReplayError(
                f"event {pos}: unexpected field(s) {', '.join(map(str, extra))} on a {etype} event",
                seq=pos, found=_strip(ev),
            )
        if etype == "action":
            seat = ev.get("seat")
            try:
                engine.apply(seat, ev.get("action"))  # type: ignore[arg-type]
            except GameError as exc:
                raise ReplayError(
                    f"event {pos}: action by seat {seat} rejected: {exc}", seq=pos,
                    found=_strip(ev),
                ) from None
        elif etype == END_EVENT:
            try:
                engine.end_match(str(ev.get("reason")), ev.get("seat"))
            except GameError as exc:
                raise ReplayError(f"event {pos}: end rejected: {exc}", seq=pos) from None
        else:
            raise ReplayError(f"event {pos}: unknown event type {etype!r}", seq=pos)
        if on_event is not None:
            on_event(ev, engine)
        pos += 1
        expect_chance(engine)
    return engine
