"""The deal machine of a sealed match (qahwa-fair/3, docs/spec/fairness-v3.md §9a and "The
conforming sealed seat"): one I/O-free state machine, run by the engine and by every seat.

A sealed hand's deal is :class:`games.sealed_hand.Deal` (the steps owed and by whom, which
final-deck positions are dealt to which seat, every key, shuffle, share, opening and revealed
key, each checked through :mod:`games.sealed_backend` before it changes anything), run by the
sealed engine (:class:`games.sealed_base.SealedGame`), which tells it what the game's rules
deal and when a hand's play is over. :class:`DealMachine` is what a seat reads of it:

- **in the engine's process** (the server, the simulated seats of :mod:`games.sealed_sim`)
  :meth:`DealMachine.of_engine` wraps the live engine: the server's views are built from it;
- **at a seat over the network** (``qahwa_client``, the house bots) :meth:`DealMachine.follow`
  builds the same engine from the match's public facts (game, canonical ruleset, seats,
  house seats, roll-chain tips: the signed lock or commit record) and :meth:`DealMachine.feed`
  applies the public event log to it, event by event, through the one replay loop
  (:class:`games.replay.Replayer`): every step's proof is verified before the seat relies on
  it. The match key is not known to a seat while the match runs, so the machine's chance
  (:class:`LogChance`) takes each draw (the first hakem or dealer) from the log's own chance
  event, checked for its label, kind, arguments and range; ``verify`` recomputes it from the
  key afterwards.

Its interface (a port, e.g. to TypeScript, follows it): ``DealMachine.follow(match_id,
game, ruleset, house, roll_tips)``, then ``feed(events)`` with the log's events in order
(those already applied are skipped by ``seq``; ReplayError at the first one the rules or a
proof refuse). The machine answers (every answer derived from the verified log, none from a
view):

==================  ========================================================================
``hand``            the hand being dealt (0 for the match's first)
``phase``           ``keys``, ``shuffles``, ``shares``, ``play``, ``reveal`` or ``over``
``owed``            the first step owed: ``{"seat", "step", "items"?}`` (None: none)
``owner(item)``     the seat an item (final-deck position) is dealt to (None: not dealt)
``dealt(seat)``     every item dealt to the seat this hand
``held(seat)``      the items in the seat's hand now (dealt, not played nor laid away)
``play_over``       the hand's play is over (its keys are owed): the only time a secret goes
``expected(seat)``  the view an honest server sends the seat (what a seat compares)
``disagreement(     the first field of a server's view that is not what ``expected`` says
 view, seat)``      (None: none)
``choices(seat,     the seat's legal actions in player form, its items named by ``own``
 own)``             (item → code): the game's own rules over a hidden hand
                    (:meth:`games.sealed_base.SealedGame.hidden_legal`)
==================  ========================================================================

The positions dealt are the game's: hokm's by :func:`games.deals.hokm_deal` (the first five
of each seat, the rest after ``trump``; two players: each draw's top card to the drawer),
qahve's and shelem's by their deals (shelem's widow to the bid winner), the dominoes' seat s
positions ``h·s … h·s+h−1`` and the k-th boneyard draw (k from 0) position ``h·seats + k``
(h: 7 in Iraqi dominoes, the hand size in Mexican Train).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fairness import V2

from .base import JSON, Action, Chance, Engine, MatchContext
from .errors import GameError, ReplayError
from .registry import find_engine
from .replay import Replayer, parse_transcript_ruleset
from .sealed_base import SealedGame
from .sealed_hand import LOG_HELD

#: the phases of a hand's deal, in order
PHASES = ("keys", "shuffles", "shares", "play", "reveal", "over")
_PHASE_OF_STEP = {"key": "keys", "shuffle": "shuffles", "share": "shares", "open": "play"}


class _NotYet(ReplayError):
    """A draw the log does not hold (yet)."""


class LogChance(Chance):
    """The chance of a seat's machine: each draw is the log's chance event at its label
    (the seat cannot draw it: the match key is revealed at the match's end), checked for its
    kind, arguments and range. A draw the log does not hold yet raises ReplayError."""

    def __init__(self) -> None:
        # the length of a sealed match's key (its engine checks it); never drawn
        super().__init__(bytes(64))
        self.log: dict[str, Mapping[str, Any]] = {}

    def know(self, events: Sequence[Any]) -> None:
        for ev in events:
            if isinstance(ev, dict) and ev.get("type") == "chance":
                label = ev.get("label")
                if isinstance(label, str) and label not in self.log:
                    self.log[label] = ev

    def _logged(self, label: str, kind: str, args: dict[str, int] | None) -> Any:
        if label in self.labels:
            raise ReplayError(f"chance label {label!r} used twice")
        ev = self.log.get(label)
        if ev is None:
            raise _NotYet(f"the log holds no chance event {label!r} yet", kind="chance")
        if ev.get("kind") != kind or ev.get("args") != args:
            raise ReplayError(f"the log's chance event {label!r} is not a {kind} draw {args}")
        return ev.get("result")

    def dice(self, label: str, count: int, sides: int = 6) -> list[int]:
        args = {"count": count, "sides": sides}
        got = self._logged(label, "dice", args)
        if (
            not isinstance(got, list)
            or len(got) != count
            or not all(type(d) is int and 1 <= d <= sides for d in got)
        ):
            raise ReplayError(f"the log's dice at {label!r} are out of range", kind="chance")
        self._drawn(label, "dice", args, list(got))
        return list(got)

    def uniform(self, label: str, n: int) -> int:
        got = self._logged(label, "uniform", {"n": n})
        if type(got) is not int or not 0 <= got < n:
            raise ReplayError(f"the log's draw at {label!r} is out of range", kind="chance")
        self._drawn(label, "uniform", {"n": n}, got)
        return got

    def shuffle(self, label: str, items: Sequence[Any]) -> list[Any]:
        got = self._logged(label, "shuffle", None)
        if not isinstance(got, list) or sorted(map(repr, got)) != sorted(map(repr, items)):
            raise ReplayError(f"the log's shuffle at {label!r} is not of its items", kind="chance")
        self._drawn(label, "shuffle", None, list(got))
        return list(got)


class DealMachine:
    """A sealed match's deal as a seat reads it (see the module's doc)."""

    def __init__(
        self,
        engine: SealedGame | None,
        start: tuple[type[Engine], dict[str, Any], LogChance, MatchContext] | None = None,
    ) -> None:
        self._engine = engine
        self._start = start  # a followed match's engine, made at its first events
        self._replayer: Replayer | None = None
        self._chance = start[2] if start is not None else None

    @classmethod
    def of_engine(cls, engine: Engine) -> DealMachine:
        """The live engine's machine (in its own process: every step was checked by it)."""
        if not isinstance(engine, SealedGame):
            raise TypeError(f"{type(engine).__name__} deals no sealed hands")
        return cls(engine)

    @classmethod
    def follow(
        cls,
        match_id: str,
        game: str,
        ruleset: str | Mapping[str, Any],
        house: Sequence[int] = (),
        roll_tips: Sequence[str | None] = (),
    ) -> DealMachine:
        """A seat's machine for a match, built from its public facts (the signed lock's or
        commit record's game, canonical ruleset, house seats and roll-chain tips); its
        events come through :meth:`feed`."""
        raw = V2.loads(ruleset) if isinstance(ruleset, str) else dict(ruleset)
        if not isinstance(raw, dict):
            raise ReplayError("the ruleset is not a JSON object", kind="ruleset")
        engine_cls = find_engine(game, raw, protocol=V2)
        if not engine_cls.PROTOCOL.sealed:
            raise ReplayError(f"the {game} ruleset deals no sealed hands", kind="ruleset")
        parsed = parse_transcript_ruleset(engine_cls, ruleset, V2)
        ctx = MatchContext(match_id, tuple(roll_tips), tuple(sorted(set(house))))
        return cls(None, (engine_cls, parsed, LogChance(), ctx))

    @property
    def engine(self) -> SealedGame:
        if self._engine is None:
            raise ReplayError("the machine has read no event of the match yet", kind="event")
        return self._engine

    # -- the log ---------------------------------------------------------------------------
    def feed(self, events: Sequence[Any]) -> None:
        """Apply the log's next ``events`` (in order, from the match's first; those already
        applied are skipped by ``seq``): ReplayError at the first one the rules refuse (a
        proof that does not verify, a step nobody owes, a draw not as the rules make it)."""
        if self._chance is not None:
            self._chance.know(events)
        if self._start is not None:
            engine_cls, parsed, chance, ctx = self._start
            try:
                engine = engine_cls(parsed, chance, ctx)
            except _NotYet:
                if events:
                    raise
                return  # the match's first draws are not in the log yet
            except GameError as exc:
                raise ReplayError(f"the match cannot start: {exc}", kind="event") from None
            assert isinstance(engine, SealedGame)
            self._engine = engine
            self._replayer = Replayer(engine, pending=chance.take_events())
            self._start = None
        rep = self._replayer
        if rep is None:
            raise ReplayError("a machine of the live engine takes no events", kind="event")
        rep.feed([ev for ev in events if not (isinstance(ev, dict) and _seq(ev) < rep.pos)])

    @property
    def started(self) -> bool:
        return self._engine is not None

    @property
    def next_seq(self) -> int:
        """The seq of the next event the machine expects (0 before the first)."""
        return self._replayer.pos if self._replayer is not None else 0

    # -- what the machine says ---------------------------------------------------------------
    @property
    def hand(self) -> int:
        return len(self.engine.sealed_hands) - 1

    @property
    def phase(self) -> str:
        e = self.engine
        if e.outcome is not None or e.sealed is None:
            return "over"
        if not e.owed:
            return "play"
        step = e.owed[0].step
        return "reveal" if step == "reveal_key" else _PHASE_OF_STEP[step]

    @property
    def owed(self) -> dict[str, JSON] | None:
        e = self.engine
        return e.owed[0].to_json() if e.owed and e.outcome is None else None

    @property
    def play_over(self) -> bool:
        """The hand's play is over: its keys are owed (the one time a secret may go)."""
        e = self.engine
        return bool(e.owed) and e.owed[0].step == "reveal_key" and e.outcome is None

    @property
    def turn(self) -> int | None:
        return self.engine.turn

    def owner(self, item: int) -> int | None:
        hand = self.engine.sealed
        return hand.owner.get(item) if hand is not None else None

    def dealt(self, seat: int) -> list[int]:
        return self.engine.held_by(seat)

    def held(self, seat: int) -> list[int]:
        """The items in the seat's hand now."""
        if self.engine.sealed is None:
            return []
        return [int(p) for p in self.engine.hands[seat] if str(p).isdigit()]

    def expected(self, seat: int) -> dict[str, JSON]:
        """The view an honest server sends ``seat`` now (the engine's part of it)."""
        return self.engine.view(seat)

    def choices(self, seat: int, own: Mapping[int, str], bot: bool = False) -> list[Action]:
        """The seat's legal actions in player form (its items by code, from ``own``); with
        ``bot``, those a random bot picks from (the engine's ``bot_actions``: qahve's
        lowest bids), what a seat's view suggests."""
        if self.engine.turn != seat or self.engine.outcome is not None:
            return []
        return self.engine.hidden_legal(seat, own, bot)

    def disagreement(self, view: Mapping[str, Any], seat: int) -> str | None:
        """What the server's ``view`` of ``seat`` says that the machine does not (None:
        nothing). Fields the server adds (version, chain, deadline, …) are not compared; the
        deck and the shares (:data:`LOG_HELD`) only when the view has them (a brief view,
        ``sealed=brief``, leaves them out: the machine holds them)."""
        want = self.expected(seat)
        for k, v in want.items():
            got = view.get(k)
            if k == "sealed" and isinstance(v, dict) and isinstance(got, dict):
                for sk, sv in v.items():
                    if sk in LOG_HELD and sk not in got:
                        continue
                    if got.get(sk) != sv:
                        return f"sealed.{sk} is {_short(got.get(sk))}, the log says {_short(sv)}"
            elif got != v:
                return f"{k} is {_short(got)}, the log says {_short(v)}"
        return None


def _seq(ev: Mapping[str, Any]) -> int:
    s = ev.get("seq")
    return s if type(s) is int else 1 << 62


def _short(v: Any, size: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= size else text[: size - 1] + "…"
