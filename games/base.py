"""The one engine interface all games share.

An engine is a state machine for one match:

- ``Engine.parse_ruleset(raw, protocol=CURRENT)`` validates a ruleset dict, fills
  defaults and returns the normalized dict (``RulesetError`` on unknown keys or bad values);
  ``protocol=V1`` (or its name) parses a qahwa-fair/1 ruleset exactly as v1 did. The transcript's
  ruleset string is ``fairness.canonical_ruleset(normalized)``.
- ``Engine.seat_count(ruleset)`` is the number of seats the ruleset implies.
- ``Engine(ruleset, chance, ctx=None)`` starts the match; every chance event is drawn
  through ``chance`` (a :class:`Chance`), with the labels of fairness-v1.md §5, at the
  moment the rules need it (never ahead of time). The protocol (``engine.proto``, a
  :class:`fairness.FairProtocol`) is the class's ``PROTOCOL``: a game's module class plays
  qahwa-fair/2, :func:`games.registry.find_engine` gives its qahwa-fair/1 and sealed
  (qahwa-fair/3) variants; the key must be that protocol's length. ``ctx`` (a
  :class:`MatchContext`) carries what v2's fresh rolls check values against.
- ``legal_actions(seat)`` is the complete list of actions that seat may send now, each
  exactly as it would be sent (JSON-ready dicts). Actions whose free parameter cannot be
  listed (live entropy on a roll, a cut position k) are listed in their plain form and
  documented by the engine.
- ``apply(seat, action)`` applies one action and returns the events it produced (the
  action event, then the chance events drawn), or raises an :class:`ActionError` subclass
  naming why; on an error the state is unchanged and no chance was drawn.
- ``view(seat)`` is that seat's view (``seat=None``: the public view, no hidden cards or
  tiles); it always carries ``game``, ``status``, ``turn``, ``seat`` and ``legal_actions``.
- ``outcome`` is None while the match runs, then an :class:`Outcome`.
- ``end_match(reason, seats)`` ends a running match other than by play and returns its
  end event: v2 ``resigned`` / ``timeout`` (one seat forfeits) or ``expired``; v1
  ``resigned`` or ``abandoned``.

:mod:`games.replay` rebuilds a match from a transcript's events and checks that every
chance event recomputes and every action is legal: the service, ``verify`` and the tests
share it.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from fairness import (
    CURRENT,
    V1,
    V2,
    V3,
    FairProtocol,
    Stream,
    StreamKey,
    canonical_ruleset,
    parse_hex,
    protocol_for,
)
from fairness import PROTOCOLS as _PROTOCOLS

from .errors import (
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    ReplayError,
    RulesetError,
)

if TYPE_CHECKING:
    from fairness.records import Lock

JSON = Any
Action = dict[str, Any]
Event = dict[str, Any]
Hands = Sequence[Sequence[str]]
T = TypeVar("T")

PLAYING = "playing"
FINISHED = "finished"

#: the rules every v2 ruleset lists (fairness-v2.md §1, §3, §7), with their defaults and
#: bounds in seconds: a seat's time to act, the time to reveal after the lock, the longest
#: a match may run after the lock
V2_RULESET_DEFAULTS: Mapping[str, int] = {
    "turn_seconds": 300,
    "reveal_seconds": 120,
    "max_seconds": 86_400,
}
V2_RULESET_RANGES: Mapping[str, tuple[int, int]] = {
    "turn_seconds": (1, 7 * 86_400),
    "reveal_seconds": (1, 7 * 86_400),
    "max_seconds": (1, 366 * 86_400),
}
#: the end reasons in which one seat forfeits
ONE_SEAT_ENDS = ("resigned", "timeout")


def check_protocol(protocol: str | FairProtocol) -> FairProtocol:
    """The protocol ``protocol`` names, else RulesetError."""
    try:
        return protocol_for(protocol)
    except ValueError:
        raise RulesetError(
            f"unknown protocol {protocol!r}; known: {', '.join(_PROTOCOLS)}"
        ) from None


@dataclass(frozen=True)
class MatchContext:
    """What an engine knows about its match beyond the ruleset and the key (v2).

    ``match_id``: the match's id (roll-chain values hash it in, sealed proofs are bound to
    it); ``roll_tips``: each seat's roll-chain tip ``c[0]`` from the lock, as hex (None for a
    seat without a chain); ``house``: the house seats (a sealed deal's shuffle order,
    fairness-v3 §5 and §9a).
    """

    match_id: str
    roll_tips: tuple[str | None, ...] = ()
    house: tuple[int, ...] = ()

    @classmethod
    def of_lock(cls, lock: Lock) -> MatchContext:
        """The context a lock fixes: its match id, its seats' roll-chain tips and its house
        seats."""
        return cls(lock.match_id, lock.roll_tips, tuple(s.seat for s in lock.seats if s.house))

    def roll_chain_tips(self, n: int) -> list[bytes]:
        """The ``n`` seats' roll-chain tips, which a match with fresh rolls checks values
        against (ValueError when the context has not one for each seat, SeedError when one
        is not 64 hex)."""
        if len(self.roll_tips) != n:
            raise ValueError(
                "a match with fresh rolls needs every seat's roll-chain tip from the lock"
            )
        return [
            parse_hex(t, 32, f"seat {s}'s roll-chain tip") for s, t in enumerate(self.roll_tips)
        ]


class Chance:
    """Every draw of a match, through the fairness stream of match key ``key``.

    Each draw is recorded as a transcript chance event; a label can be used only once.
    """

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.labels: set[str] = set()
        self._pending: list[Event] = []
        self._keyed: StreamKey | None = None  # made at the first draw

    def _key(self, label: str) -> StreamKey:
        """The match key's HMAC states for a draw at ``label``, not used before."""
        if label in self.labels:  # (a label is recorded only once it has drawn)
            raise ReplayError(f"chance label {label!r} used twice")
        if self._keyed is None:
            self._keyed = StreamKey(self.key)
        return self._keyed

    def _stream(self, label: str) -> Stream:
        return Stream(self._key(label), label)  # which checks the label (LabelError)

    def _record(self, event: Event) -> None:
        # only after the draw succeeded: a draw with bad arguments uses up no label
        self.labels.add(event["label"])
        self._pending.append(event)

    def _drawn(self, label: str, kind: str, args: dict[str, int] | None, result: JSON) -> None:
        """Record the draw ``kind`` at ``label`` (``args``: its arguments, if any)."""
        event: Event = {"type": "chance", "label": label, "kind": kind}
        if args is not None:
            event["args"] = args
        event["result"] = result
        self._record(event)

    def dice(self, label: str, count: int, sides: int = 6) -> list[int]:
        # StreamKey.dice: the usual draw without building a Stream (it checks the label)
        result = self._key(label).dice(label, count, sides)
        self._drawn(label, "dice", {"count": count, "sides": sides}, list(result))
        return result

    def uniform(self, label: str, n: int) -> int:
        result = self._stream(label).uniform(n)
        self._drawn(label, "uniform", {"n": n}, result)
        return result

    def shuffle(self, label: str, items: Sequence[T]) -> list[T]:
        result = self._stream(label).shuffle(items)
        self._drawn(label, "shuffle", None, list(result))
        return result

    def add(self, event: Event) -> None:
        """An event the rules write after an action, with its draws (a sealed hand's end)."""
        self._pending.append(event)

    def take_events(self) -> list[Event]:
        """The chance events drawn since the last call, in order (without ``seq``)."""
        out, self._pending = self._pending, []
        return out

    def mark(self) -> int:
        """A position in the pending draws, for :meth:`take_since`."""
        return len(self._pending)

    def take_since(self, mark: int) -> list[Event]:
        """The draws made since ``mark``; earlier pending draws stay for ``take_events``."""
        pending = self._pending
        if len(pending) == mark:  # nothing drawn
            return []
        out = pending[mark:]
        del pending[mark:]
        return out


@dataclass(frozen=True)
class Outcome:
    """How a match ended.

    ``reason``: ``finished`` (played to the end); v1 ``resigned`` or ``abandoned``; v2
    ``resigned``, ``timeout``, ``expired``, ``no_reveal`` or ``chain_exhausted``.
    ``winners``: the winning seats (several for a team, or a shared first place; empty when
    nobody won). ``scores``: per side, as the game's view shows them. ``detail``: extras.
    ``forfeited``: the seats that forfeited (v2; None in a v1 match, whose result has no
    ``status`` or ``forfeited``).
    """

    reason: str
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    detail: Mapping[str, JSON] = field(default_factory=dict)
    forfeited: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = dict(self.detail)
        if self.forfeited is not None:
            out.update({"status": FINISHED, "forfeited": list(self.forfeited)})
        out.update(reason=self.reason, winners=list(self.winners), scores=list(self.scores))
        return out


def check_keys(raw: Mapping[str, Any] | None, defaults: Mapping[str, Any]) -> dict[str, Any]:
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
        if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
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


def json_copy(value: T) -> T:
    """A deep copy of a JSON value (dicts, lists, str, int, float, bool, None), much
    cheaper than ``copy.deepcopy``; anything else in it is copied by ``copy.deepcopy``."""
    try:
        return _json_copy(value)  # type: ignore[no-any-return]
    except RecursionError:  # nested too deeply (or a cycle): deepcopy copes or says why
        return copy.deepcopy(value)


def _json_copy(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return {k: _json_copy(x) for k, x in v.items()}
    if t is list:
        return [_json_copy(x) for x in v]
    if t is str or t is int or t is bool or t is float or v is None:
        return v
    return copy.deepcopy(v)


class Shared(dict[str, Any]):
    """A part of a view that every view of the same state shares, read only (a sealed
    deal's public state, the same for every seat): a JSON object whose encoding is made
    once (:meth:`encoded`), not again at every answer that shows it. Nothing may change it
    once made; a changed state makes a new one. ``parts``: the :class:`Encodings` of the states
    before it (one deal's), whose encodings of the values it still holds (the same objects)
    it writes again."""

    __slots__ = ("_text", "_parts", "_less")

    def __init__(
        self, value: Mapping[str, Any] | None = None, parts: Encodings | None = None, **kw: Any
    ) -> None:
        super().__init__(value or {}, **kw)
        self._parts = parts

    def encoded(self, dumps: Callable[[Any], str]) -> str:
        """``dumps(self)``, made on first use with this ``dumps`` and kept."""
        text: tuple[Callable[[Any], str], str] | None = getattr(self, "_text", None)
        if text is None or text[0] is not dumps:
            parts: Encodings | None = getattr(self, "_parts", None)
            text = self._text = (dumps, dumps(self) if parts is None else parts.encode(self, dumps))
        return text[1]

    def without(self, keys: frozenset[str]) -> Shared:
        """This object less ``keys`` (itself when it has none of them): one object, and one
        encoding, per state and ``keys``, as this one is, its values' texts kept from state
        to state as this one's are (:meth:`Encodings.less`)."""
        if keys.isdisjoint(self):
            return self
        less: tuple[frozenset[str], Shared] | None = getattr(self, "_less", None)
        if less is None or less[0] != keys:
            parts: Encodings | None = getattr(self, "_parts", None)
            rest = {k: v for k, v in self.items() if k not in keys}
            less = self._less = (keys, Shared(rest, parts.less(keys) if parts else None))
        return less[1]


class Table(dict[str, Any]):
    """A JSON object of rows, read only (a sealed deal's shares: item → seat → D), that says
    how it was made: from the table ``base``, every row but those of ``changed`` (new or
    replaced) the same as there, under the same key; or afresh (``base`` None).
    :class:`Encodings` writes it from its base's text, encoding only the rows that changed (and
    then forgets the base)."""

    __slots__ = ("base", "changed")

    def __init__(
        self,
        rows: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
        base: Table | None = None,
        changed: Iterable[str] = (),
    ) -> None:
        super().__init__(rows)
        self.base = base
        self.changed = tuple(changed)


class Encodings:
    """The encodings of the larger values of successive :class:`Shared` states (one sealed
    deal's: its deck, its items, its :class:`Table` of shares), so that a new state's
    encoding writes each value an earlier one holds too (the same object: values are read
    only) as the text made for it then, and a table made from an earlier one from that
    one's text and its changed rows. The text is ``dumps(state)``'s, for a ``dumps`` that
    writes compact JSON in an object's own key order (checked once per ``dumps``: any other
    is used whole)."""

    __slots__ = ("_dumps", "_compact", "_texts", "_keys", "_less")

    #: an array at least this long is kept by itself (a string: LONG)
    LARGE = 8
    LONG = 128

    def __init__(self) -> None:
        self._dumps: Callable[[Any], str] | None = None
        self._compact = False
        #: by id: a value written last and its text; for a table, also its members'
        #: texts ('"key":row') and each key's position among them
        self._texts: dict[int, _Text] = {}
        self._keys: dict[str, str] = {}
        self._less: dict[frozenset[str], Encodings] = {}

    def less(self, keys: frozenset[str]) -> Encodings:
        """The encodings of these states less ``keys`` (:meth:`Shared.without`): their own,
        so that writing one form does not forget the other's texts."""
        got = self._less.get(keys)
        if got is None:
            got = self._less[keys] = Encodings()
        return got

    def encode(self, obj: Mapping[str, Any], dumps: Callable[[Any], str]) -> str:
        """``dumps(obj)``, its larger values' texts taken from the last encoding that wrote
        them (kept until an encoding no longer writes them)."""
        same = self._dumps is dumps
        if not same:
            self._compact = _compact(dumps)
        if not self._compact:
            return dumps(obj)
        before = self._texts if same else {}
        keys = self._keys if same and len(self._keys) < 4096 else {}
        now: dict[int, _Text] = {}

        def key(k: str) -> str:
            got = keys.get(k)
            if got is None:
                got = keys[k] = dumps(k)
            return got

        if any(type(k) is not str for k in obj):
            return dumps(obj)

        def text_of(v: Any) -> str | None:
            if not _large(v):
                return None
            got = before.get(id(v))
            if got is None or got[0] is not v:
                got = _table(v, before, key, dumps) if type(v) is Table else (v, dumps(v), None)
            now[id(v)] = got
            return got[1]

        text = spliced_json(obj, text_of, dumps, key)
        self._dumps, self._texts, self._keys = dumps, now, keys
        return text


def spliced_json(
    obj: Mapping[str, Any],
    text_of: Callable[[Any], str | None],
    dumps: Callable[[Any], str],
    key: Callable[[str], str],
) -> str:
    """``dumps(obj)`` for a ``dumps`` that writes compact JSON in an object's own key order:
    each value ``text_of`` gives a text for written as that text (its key as ``key`` writes
    it), the members between two such values encoded together."""
    out: list[str] = []
    plain: dict[str, Any] = {}
    for k, v in obj.items():
        text = text_of(v)
        if text is None:
            plain[k] = v
            continue
        if plain:
            out.append(dumps(plain)[1:-1])
            plain = {}
        out.append(f"{key(k)}:{text}")
    if plain:
        out.append(dumps(plain)[1:-1])
    return "{" + ",".join(out) + "}"


#: a value, its text and, for a table, its members' texts and each key's position
_Text = tuple[Any, str, "tuple[list[str], dict[str, int]] | None"]


def _table(
    t: Table, before: dict[int, _Text], key: Callable[[str], str], dumps: Callable[[Any], str]
) -> _Text:
    """A table's text: from its base's members (written last), with the changed rows
    encoded; else each row encoded."""
    base = t.base
    t.base = None  # read once: the tables before it need not live on
    made = before.get(id(base)) if base is not None else None
    if made is not None and made[0] is base and made[2] is not None:
        was, at = made[2]
        if len(t) == len(was):  # the same keys in the same order: the changed rows replaced
            members = list(was)
            for k in t.changed:
                members[at[k]] = f"{key(k)}:{dumps(t[k])}"
            return (t, "{" + ",".join(members) + "}", (members, at))
        changed = set(t.changed)
        members = [f"{key(k)}:{dumps(row)}" if k in changed else was[at[k]] for k, row in t.items()]
    else:
        members = [f"{key(k)}:{dumps(row)}" for k, row in t.items()]
    at = {k: i for i, k in enumerate(t)}
    return (t, "{" + ",".join(members) + "}", (members, at))


def _large(v: Any) -> bool:
    """A value kept by itself: a table, a long array or string (an object other than a
    table is made anew for each state: it is encoded with the values around it)."""
    t = type(v)
    if t is list:
        return len(v) >= Encodings.LARGE
    return t is Table or (t is str and len(v) >= Encodings.LONG)


def _compact(dumps: Callable[[Any], str]) -> bool:
    """Whether ``dumps`` writes compact JSON in an object's own key order (so an object's
    text is its members' texts joined by commas in braces)."""
    probe = {"b": [1, {"a": "x"}], "a": None}
    return dumps(probe) == '{"b":[1,{"a":"x"}],"a":null}'


def check_seat(seat: Any, n_seats: int) -> int:
    """``seat`` when it is a seat of a match of ``n_seats`` seats, else NotYourTurnError."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n_seats:
        raise NotYourTurnError(f"no seat {seat!r} in this match")
    return seat


def action_type(action: Any, allowed: Iterable[str]) -> str:
    """The action's type after checking it is an object with a known string ``type``."""
    if not isinstance(action, dict):
        raise MalformedActionError("an action must be a JSON object")
    t = action.get("type")
    if type(t) is str and type(allowed) is tuple and t in allowed:  # the usual case
        return t
    allowed = tuple(allowed)
    if not isinstance(t, str):
        raise MalformedActionError("an action needs a string 'type'")
    if t not in allowed:
        raise MalformedActionError(f"unknown action type {t!r}; expected one of {list(allowed)}")
    return t


def only_keys(action: Mapping[str, Any], *keys: str) -> None:
    """Reject fields other than ``type`` and ``keys`` in an action."""
    for k in action:
        if k != "type" and k not in keys:
            break
    else:
        return  # the usual case: nothing else
    extra = sorted(set(action) - {"type", *keys})
    if extra:
        raise MalformedActionError(
            f"unexpected field(s) {', '.join(extra)} for action {action.get('type')!r}"
        )


class Engine(ABC):
    """Base of every game engine (see the module docstring for the contract)."""

    game: ClassVar[str]
    #: the protocol this class's matches are played under (its variant, with its ``deal``:
    #: :func:`games.registry.find_engine`)
    PROTOCOL: ClassVar[FairProtocol] = CURRENT
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]]
    #: inclusive (lo, hi) bounds of integer ruleset keys, checked by ``parse_ruleset``
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {}
    #: ruleset keys limited to the values listed, checked by ``parse_ruleset`` after the ranges
    RULESET_CHOICES: ClassVar[Mapping[str, tuple[Any, ...]]] = {}
    #: ruleset keys only qahwa-fair/1 has (a v2 ruleset naming one is refused)
    RULESET_V1_ONLY: ClassVar[tuple[str, ...]] = ()
    #: ruleset keys only qahwa-fair/2 has beyond :data:`V2_RULESET_DEFAULTS`, with defaults
    RULESET_V2_EXTRA: ClassVar[Mapping[str, Any]] = {}
    #: whether v2 rulesets of this game list the timing rules (plain sessions do not)
    V2_TIMING: ClassVar[bool] = True
    #: the number of seats when the ruleset has no ``players`` key
    SEATS: ClassVar[int | None] = None
    #: four seats play as two sides of partners, seats 0 & 2 and 1 & 3 (:meth:`seat_sides`)
    PARTNERS: ClassVar[bool] = False
    ACTION_TYPES: ClassVar[tuple[str, ...]]
    #: the match score per side, in the games that keep it so (:meth:`side_scores`)
    scores: list[int]
    #: the cards a test position (:meth:`position`) may deal: a card game's deck
    DECK: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self, ruleset: Mapping[str, Any], chance: Chance, ctx: MatchContext | None = None
    ) -> None:
        if len(chance.key) != self.PROTOCOL.key_bytes:
            raise RulesetError(
                f"a {self.PROTOCOL.records} match key is {self.PROTOCOL.key_bytes} bytes, "
                f"got {len(chance.key)}"
            )
        self.ruleset = dict(ruleset)
        self.chance = chance
        self.ctx = ctx
        self.n_seats = self.seat_count(self.ruleset)
        self._sides = self.seat_sides(self.ruleset)
        self._outcome: Outcome | None = None
        self._start_match()

    def _start_match(self) -> None:  # noqa: B027 - optional: NoRevealMatch starts bare
        """The game's own state and the match's first draws, as its rules start it (called
        once, at the end of ``__init__``; by default nothing)."""

    @property
    def proto(self) -> FairProtocol:
        """The match's protocol: its class's (:attr:`PROTOCOL`)."""
        return self.PROTOCOL

    @property
    def protocol(self) -> str:
        """The name of :attr:`proto`."""
        return self.proto.name

    @property
    def outcome(self) -> Outcome | None:
        """None while the match runs, then how it ended."""
        return self._outcome

    @outcome.setter
    def outcome(self, value: Outcome | None) -> None:
        self._outcome = value if value is None else FORMS[self.proto.name].outcome(value)

    # -- ruleset ---------------------------------------------------------------------------
    @classmethod
    def parse_ruleset(
        cls, raw: Mapping[str, Any] | None, *, protocol: str | FairProtocol = CURRENT
    ) -> dict[str, Any]:
        """Validate, fill defaults and check ``RULESET_RANGES``; subclasses add other checks.

        ``protocol``: qahwa-fair/2 (the default) lists every v2 rule, ``turn_seconds``,
        ``reveal_seconds`` and ``max_seconds`` included, and refuses v1-only keys
        (``live_entropy``); qahwa-fair/1 parses exactly as v1 did.
        """
        form = FORMS[check_protocol(protocol).name]
        defaults = form.defaults(cls)
        out = check_keys(form.given(cls, raw, defaults), defaults)
        for ranges in (cls.RULESET_RANGES, form.ranges(cls)):
            for key, (lo, hi) in ranges.items():
                int_in(out, key, lo, hi)
        for key, allowed in cls.RULESET_CHOICES.items():
            one_of(out, key, allowed)
        return out

    @classmethod
    def seat_count(cls, ruleset: Mapping[str, Any]) -> int:
        """``SEATS`` for fixed-size games, else the ruleset's ``players``."""
        if cls.SEATS is not None:
            return cls.SEATS
        return int(ruleset["players"])

    @classmethod
    def position(
        cls, ruleset: Mapping[str, Any] | None, chance: Chance, *, hands: Hands, **setup: Any
    ) -> Self:
        """A hand at the start of a trick in the play phase of a card game (a test or puzzle
        position, as python-chess builds a ``Board`` from a FEN): the match starts as usual
        from ``chance``, then the hand in play is replaced by ``hands`` (one per seat,
        distinct cards of :attr:`DECK`) and the game's ``setup`` (its :meth:`_place`). Its
        draws are dropped, so the position is not a replayable transcript."""
        e = cls(cls.parse_ruleset(ruleset), chance)
        chance.take_events()
        every = [c for h in hands for c in h]
        if (
            len(hands) != e.n_seats
            or len(set(every)) != len(every)
            or not all(isinstance(c, str) and c in cls.DECK for c in every)
        ):
            raise ValueError(f"a position needs {e.n_seats} hands of distinct {cls.game} cards")
        e._place([list(h) for h in hands], **setup)
        return e

    def _place(self, hands: list[list[str]], *args: Any, **setup: Any) -> None:
        """:meth:`position`'s part that is the game's own: ``hands`` (checked) in play, with
        the game's ``setup`` (its keyword arguments)."""
        raise NotImplementedError(f"{self.game} has no test positions")

    def _shuffled(self, label: str, items: list[str]) -> list[str]:
        """A hand's or round's deck: ``items`` shuffled at ``label`` (a sealed engine deals
        positions of the seats' own shuffle instead, games.sealed_base)."""
        return self.chance.shuffle(label, items)

    # -- sides -----------------------------------------------------------------------------
    @classmethod
    def seat_sides(cls, ruleset: Mapping[str, Any]) -> tuple[int, ...]:
        """The side (team) of each seat for this ruleset: every seat is its own side, but
        for four seats of a game with :attr:`PARTNERS`."""
        n = cls.seat_count(ruleset)
        return tuple(s % 2 if cls.PARTNERS and n == 4 else s for s in range(n))

    def side_of(self, seat: int) -> int:
        """The side (team) a seat plays for: :meth:`seat_sides` (a game with teams overrides
        that classmethod, so the side is known before any engine exists)."""
        return self._sides[seat]

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
    def turn(self) -> int | None:
        """The seat to act now (that owes the next step), or None when the match has ended."""
        return None if self._outcome is not None else self._turn()

    def _turn(self) -> int | None:
        """:attr:`turn` while the match runs (the game's rules)."""
        raise NotImplementedError

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may send now: none but on its turn while the match runs."""
        if self._outcome is not None or seat != self._turn():
            return []
        return self._legal(seat)

    def _legal(self, seat: int) -> list[Action]:
        """:meth:`legal_actions` of the seat on turn (the game's rules)."""
        raise NotImplementedError

    def bot_actions(self, seat: int) -> list[Action]:
        """A non-empty subset of ``legal_actions`` for random bots (tests, benches, demo).

        Engines narrow it where uniformly random choices would never end a match (qahve's
        bids); it never changes what a player may send.
        """
        return self.legal_actions(seat)

    def apply(self, seat: int, action: Action, sig: str | None = None) -> list[Event]:
        """Apply one action; return the events it produced, without ``seq``: the action
        event ``{"type": "action", "seat", "action"}`` (the action exactly as sent; with the
        seat's ``sig`` when given), then the chance events drawn, in order. ActionError
        subclasses leave the state unchanged.
        """
        self._check_action(seat, action)
        event: Event = {"type": "action", "seat": seat, "action": json_copy(action)}
        if sig is not None:
            event["sig"] = sig
        mark = self.chance.mark()
        self._apply(seat, action)
        return [event, *self.chance.take_since(mark)]

    def replay_action(self, seat: int, action: Action) -> list[Event]:
        """:meth:`apply` for an action a transcript already holds (:mod:`games.replay`):
        the same checks, errors and state change, but only the chance events drawn are
        returned (the action event is the transcript's own, so it is not copied)."""
        t = action.get("type") if type(action) is dict else None
        if not (
            self.outcome is None
            and type(seat) is int
            and 0 <= seat < self.n_seats
            and type(t) is str
            and t in self.ACTION_TYPES
            and self.turn == seat
        ):
            self._check_action(seat, action)  # raises the error (else every check held)
        chance = self.chance
        mark = chance.mark()
        self._apply(seat, action)
        return chance.take_since(mark)

    def _check_action(self, seat: int, action: Action) -> None:
        """What :meth:`apply` checks before the game's own rules."""
        if self.outcome is not None:
            raise MatchOverError("the match has ended")
        check_seat(seat, self.n_seats)
        action_type(action, self.ACTION_TYPES)
        turn = self.turn
        if turn != seat:
            raise NotYourTurnError(f"it is seat {turn}'s turn, not seat {seat}'s")

    @abstractmethod
    def _apply(self, seat: int, action: Action) -> None:
        """Apply a well-typed action by the seat whose turn it is."""

    @abstractmethod
    def _view(self, seat: int | None) -> dict[str, JSON]:
        """The game-specific fields of a seat's view (None: the public view)."""

    def view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {"game": self.game, **self._view(seat)}
        out.update(
            game=self.game,
            status=self.status,
            turn=self.turn,
            seat=seat,
            legal_actions=self.legal_actions(seat) if seat is not None else [],
        )
        if seat is not None and self.outcome is None:
            # What a simple random bot should choose from (a subset of legal_actions).
            out["suggested_actions"] = self.bot_actions(seat) if self.turn == seat else []
        if self.outcome is not None:
            out["result"] = self.outcome.to_json()
        return out

    def finish(self, side: int, detail: Mapping[str, JSON] | None = None) -> None:
        """End the match played out: every seat of ``side`` wins, with ``side_scores()``."""
        self.outcome = Outcome(
            "finished", self.seats_of(side), self.side_scores(), dict(detail or {})
        )

    def finish_at_target(self, target: int, detail: Mapping[str, JSON]) -> bool:
        """End the match played out once a side has won it by reaching ``target``
        (:func:`target_winner` of :meth:`side_scores`, with ``detail``); whether it has."""
        side = target_winner(self.side_scores(), target)
        if side is not None:
            self.finish(side, detail)
        return side is not None

    # -- ends other than play ----------------------------------------------------------------
    def _seat_list(self, reason: str, seats: int | Sequence[int] | None) -> tuple[int, ...]:
        if seats is None:
            out: tuple[Any, ...] = ()
        elif isinstance(seats, int) and not isinstance(seats, bool):
            out = (seats,)
        elif isinstance(seats, (list, tuple)):
            out = tuple(seats)
        else:
            raise NotYourTurnError(f"no seat {seats!r} in this match")
        for s in out:
            check_seat(s, self.n_seats)
        want = 1 if reason in ONE_SEAT_ENDS else 0
        if len(out) != want:
            raise IllegalActionError(
                f"an end by {reason!r} names {'one seat' if want else 'no seat'}, got {list(out)}"
            )
        return out

    def end_match(
        self, reason: str, seats: int | Sequence[int] | None = None, sig: str | None = None
    ) -> list[Event]:
        """End a running match other than by play; return the end event (without ``seq``;
        with the resigning seat's ``sig`` when given).

        qahwa-fair/2 (fairness-v2.md §7): ``resigned`` or ``timeout`` by one seat, which
        forfeits — its side gets the worst result the rules allow now (:meth:`forfeit_scores`)
        and every other side shares the win —, or ``expired``: no winner. qahwa-fair/1:
        ``resigned`` by ``seat`` (its side loses, the result as v1 had it) or ``abandoned``
        (no winner). A refused call (unknown reason, bad seat, match over) changes nothing.
        """
        if self.outcome is not None:
            raise MatchOverError("the match has ended")
        return FORMS[self.proto.name].end(self, reason, seats, sig)

    def _end_v2(
        self, reason: str, seats: int | Sequence[int] | None, sig: str | None
    ) -> list[Event]:
        """qahwa-fair/2's ends (fairness-v2.md §7)."""
        reasons = self.proto.end_reasons
        if not isinstance(reason, str) or reason not in reasons:
            raise IllegalActionError(
                f"unknown end reason {reason!r}; expected one of {list(reasons)}"
            )
        listed = self._seat_list(reason, seats)
        event: Event = {"type": "end", "reason": reason}
        if listed:
            event["seat"] = listed[0]
        if sig is not None:
            event["sig"] = sig
        self._forfeit(reason, listed)
        return [event]

    def _end_v1(self, reason: str, seats: int | Sequence[int] | None) -> list[Event]:
        """qahwa-fair/1's ends, exactly as v1 had them (v1 transcripts replay unchanged)."""
        seat = seats[0] if isinstance(seats, (list, tuple)) and len(seats) == 1 else seats
        if reason == "resigned":
            seat = check_seat(seat, self.n_seats)
            loser = self.side_of(seat)
            winners = tuple(s for s in range(self.n_seats) if self.side_of(s) != loser)
            self.outcome = Outcome("resigned", winners, self.side_scores(), {"resigned": seat})
            return [{"type": "end", "reason": "resigned", "seat": seat}]
        if reason == "abandoned":
            self.outcome = Outcome("abandoned", (), self.side_scores())
            return [{"type": "end", "reason": "abandoned"}]
        raise IllegalActionError(f"unknown end reason {reason!r}")

    def _forfeit(self, reason: str, seats: Sequence[int]) -> None:
        """The v2 outcome of an end in which ``seats`` forfeit (none: ``expired`` or
        ``chain_exhausted``, no winner)."""
        lost = {self.side_of(s) for s in seats}
        winners = (
            tuple(s for s in range(self.n_seats) if self.side_of(s) not in lost) if seats else ()
        )
        winning_sides = sorted({self.side_of(s) for s in winners})
        scores = self.forfeit_scores(winning_sides) if seats else self.side_scores()
        self.outcome = Outcome(
            reason, winners, tuple(scores), self.forfeit_detail(), forfeited=tuple(sorted(seats))
        )

    def forfeit_scores(self, winning_sides: Sequence[int]) -> tuple[int, ...]:
        """The score per side when the other sides forfeit and ``winning_sides`` share the
        win: by default the score as it stands (a game whose rules give a forfeit a value,
        as tawla's, overrides this)."""
        return self.side_scores()

    def forfeit_detail(self) -> dict[str, JSON]:
        """Extra result fields of an end other than by play (default none)."""
        return {}

    @classmethod
    def no_reveal_scores(
        cls, ruleset: Mapping[str, Any], winning_sides: Sequence[int]
    ) -> tuple[int, ...]:
        """The score per side of a match that never started because seats did not reveal
        (``games.ends.no_reveal_result``): zero for every side unless a game overrides it."""
        return (0,) * len(set(cls.seat_sides(ruleset)))

    def side_scores(self) -> tuple[int, ...]:
        """The match score per side now (used in the outcome of a resignation): by default
        the game's ``scores``, one per side."""
        return tuple(self.scores)

    # -- public log ------------------------------------------------------------------------
    @classmethod
    def redact(cls, event: Event) -> Event:
        """The event as the public log shows it before the reveal.

        Default: dice and uniform draws are public; shuffles hide their result; a
        ``discard`` action (cards laid away face down, in hokm and shelem) shows only how
        many cards it lays away.
        """
        if event.get("type") == "chance" and event.get("kind") == "shuffle":
            out = {k: v for k, v in event.items() if k != "result"}
            out["hidden"] = True
            return out
        action = event.get("action")
        if (
            event.get("type") == "action"
            and isinstance(action, dict)
            and action.get("type") == "discard"
            and "discard" in cls.ACTION_TYPES
        ):
            cards = action.get("cards")
            count = len(cards) if isinstance(cards, list) else 0
            return {**event, "action": {"type": "discard", "count": count}, "hidden": True}
        return event


class Form:
    """What a match of qahwa-fair/2 (and of every later protocol) does differently from one
    of qahwa-fair/1, for any engine: its ruleset's rules, its result's shape and its ends.
    One instance per protocol in :data:`FORMS`; an engine asks its protocol's, never ``if
    v1``."""

    def defaults(self, cls: type[Engine]) -> dict[str, Any]:
        """Every rule of ``cls``'s rulesets with its default value: no v1-only rule, the
        v2 ones, and the timing rules (``turn_seconds``, ``reveal_seconds``, ``max_seconds``)
        unless the engine has none (``V2_TIMING``)."""
        out = {k: v for k, v in cls.RULESET_DEFAULTS.items() if k not in cls.RULESET_V1_ONLY}
        out.update(cls.RULESET_V2_EXTRA)
        out.update(self.ranges_of(V2_RULESET_DEFAULTS, cls))
        return out

    def ranges(self, cls: type[Engine]) -> Mapping[str, tuple[int, int]]:
        """The ranges of the timing rules (when the engine has them)."""
        return self.ranges_of(V2_RULESET_RANGES, cls)

    @staticmethod
    def ranges_of(rules: Mapping[str, Any], cls: type[Engine]) -> Mapping[str, Any]:
        return rules if cls.V2_TIMING else {}

    def given(
        self, cls: type[Engine], raw: Mapping[str, Any] | None, defaults: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The ruleset ``raw`` as its keys are checked: the default deal (fairness-v3 §9a),
        which a seeded engine does not list, left out; RulesetError for a v1-only rule."""
        if not isinstance(raw, Mapping):
            return raw
        if "deal" not in defaults and raw.get("deal") == "seeded":
            raw = {k: v for k, v in raw.items() if k != "deal"}
        old = sorted(k for k in raw if k in cls.RULESET_V1_ONLY)
        if old:
            raise RulesetError(
                f"ruleset key(s) {', '.join(old)} belong to qahwa-fair/1 only; "
                "qahwa-fair/2 has no live entropy (its rolls are fresh rolls)"
            )
        return raw

    def check_canonical(self, parsed: Mapping[str, Any], ruleset: str) -> None:
        """A transcript's ruleset string is exactly ``canonical_ruleset`` of its parse, so
        that it lists every rule with its effective value (fairness-v2.md §1); else
        ReplayError ``ruleset``."""
        canon = canonical_ruleset(dict(parsed))
        if canon != ruleset:
            raise ReplayError(
                "ruleset is not canonical: a qahwa-fair/2 ruleset lists every rule with its "
                "value, keys sorted, compact",
                kind="ruleset",
                expected=canon,
                found=ruleset,
            )

    def outcome(self, value: Outcome) -> Outcome:
        """Every v2 result has v2's shape (status, forfeited), however the rules ended it."""
        return dataclasses.replace(value, forfeited=()) if value.forfeited is None else value

    def end(
        self, engine: Engine, reason: str, seats: int | Sequence[int] | None, sig: str | None
    ) -> list[Event]:
        return engine._end_v2(reason, seats, sig)


class FormV1(Form):
    """qahwa-fair/1 (read-only matches, old transcripts): its rulesets, results and ends
    exactly as v1 had them."""

    def defaults(self, cls: type[Engine]) -> dict[str, Any]:
        return dict(cls.RULESET_DEFAULTS)

    def ranges(self, cls: type[Engine]) -> Mapping[str, tuple[int, int]]:
        return {}

    def given(
        self, cls: type[Engine], raw: Mapping[str, Any] | None, defaults: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        return raw

    def check_canonical(self, parsed: Mapping[str, Any], ruleset: str) -> None:
        """A qahwa-fair/1 ruleset string is taken as given."""

    def outcome(self, value: Outcome) -> Outcome:
        return value

    def end(
        self, engine: Engine, reason: str, seats: int | Sequence[int] | None, sig: str | None
    ) -> list[Event]:
        return engine._end_v1(reason, seats)


class FormV3(Form):
    """qahwa-fair/3: qahwa-fair/2's, dealt sealed — only by an engine whose rulesets say
    ``"deal": "sealed"``."""

    def given(
        self, cls: type[Engine], raw: Mapping[str, Any] | None, defaults: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        if "deal" not in defaults:
            raise RulesetError(
                f"protocol {V3.name} deals sealed (ruleset 'deal': 'sealed'); "
                f"this engine deals from the seeds (qahwa-fair/2)"
            )
        return super().given(cls, raw, defaults)


#: each protocol's :class:`Form`, by name
FORMS: dict[str, Form] = {V1.name: FormV1(), V2.name: Form(), V3.name: FormV3()}


E = TypeVar("E", bound=Engine)


@functools.cache
def variant(cls: type[E], protocol: str | FairProtocol) -> type[E]:
    """``cls`` as a match of ``protocol`` (a row's, a record's or a transcript's name) plays
    it: ``cls`` itself when ``protocol`` is its ``PROTOCOL`` or the name its records carry
    (a sealed class and qahwa-fair/2), its qahwa-fair/1 subclass for a current-protocol
    class and qahwa-fair/1; RulesetError for any other pairing."""
    proto = check_protocol(protocol)
    if proto is cls.PROTOCOL or proto.name == cls.PROTOCOL.records:
        return cls
    if proto is not V1 or cls.PROTOCOL is not CURRENT:
        raise RulesetError(f"{cls.__name__} plays {cls.PROTOCOL}, not {proto}")
    attrs = {"PROTOCOL": V1, "__module__": cls.__module__, "__doc__": cls.__doc__}
    return type(cls.__name__, (cls,), attrs)
