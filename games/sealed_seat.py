"""The conforming sealed seat (qahwa-fair/3, docs/spec/fairness-v3.md "The conforming sealed
seat"), written once for every seat that plays a sealed deal: ``qahwa_client``'s seat
handles (and so the house bots of ``qahwa house``) and the simulated seats of
:mod:`games.sealed_sim`.

The seat derives everything it sends from its own deal machine
(:class:`games.sealed_deal.DealMachine`) over events it has verified, never from a view's
``owed``, ``dealt``, ``hand`` or ``legal_actions``:

- which step it owes, and whether it owes one at all, is its machine's ``owed``;
- the items it shares are the machine's owed items, each dealt to another seat;
- its hand is the machine's ``held`` items, named by what it learnt from the others' shares;
- its legal plays are the game's rules over its hidden hand (the machine's ``choices``);
- its key goes only when its machine says the hand's play is over (``reveal_key`` owed);
- no rule asks a seat for an ``open`` step: it never makes one.

A view of the seat's turn is compared with what the machine says an honest server sends
(:meth:`DealMachine.disagreement`); a view that disagrees, a step its machine does not owe
and a log whose steps do not verify are refused with :class:`SeatRefused` and reported to
``on_dispute(kind, message, evidence)`` (``qahwa_client`` keeps them as the seat's disputes).
The secrets and what is made with them are :class:`sealed.seat.SeatSecrets`, which refuses a
share of the seat's own item and the key before the hand's end by itself too.

A seat in the engine's own process (:mod:`games.sealed_sim`) runs the live engine's machine
(:meth:`DealMachine.of_engine`); a seat over the network builds its machine from the match's
signed public facts and feeds it the public log (:meth:`SealedSeat.follow`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Self

import sealed
from sealed.seat import SealedKeys, SeatSecrets

from .base import Action
from .errors import GameError
from .sealed_backend import decoded_deck
from .sealed_deal import DealMachine

Dispute = Callable[[str, str, dict[str, Any]], object]


class SeatRefused(Exception):
    """The seat refuses: the log or the view is not what its own machine says, or what it is
    asked would give away an item or its key. Evidence against the server."""


class SealedSeat:
    """One seat's sealed side of a match: its machine, its secrets, its hand (no I/O)."""

    #: what the seat raises when it refuses (qahwa_client raises its own kind)
    refused: ClassVar[type[Exception]] = SeatRefused
    #: what it raises for a player's mistake (a card it does not hold, …)
    error: ClassVar[type[Exception]] = ValueError

    def __init__(
        self,
        machine: DealMachine,
        match_id: str,
        seat: int,
        keys: SealedKeys | None = None,
        rng: sealed.Randomness | None = None,
        on_dispute: Dispute | None = None,
    ) -> None:
        self.machine = machine
        self.match_id = match_id
        self.seat = seat
        self.secrets = SeatSecrets(match_id, seat, keys, rng)
        self.keys = self.secrets.keys
        self.on_dispute = on_dispute
        #: per hand, this seat's items learnt: item → code
        self.own: dict[int, dict[int, str]] = {}
        self._deck: tuple[int, bytes, sealed.Deck] | None = None  # (hand, bytes, decoded)
        self._table: tuple[int, dict[bytes, str]] | None = None

    @classmethod
    def follow(
        cls,
        match_id: str,
        seat: int,
        game: str,
        ruleset: str | Mapping[str, Any],
        house: Sequence[int] = (),
        roll_tips: Sequence[str | None] = (),
        **kw: Any,
    ) -> Self:
        """A seat over the network: its machine built from the match's public facts."""
        try:
            machine = DealMachine.follow(match_id, game, ruleset, house, roll_tips)
        except GameError as exc:
            why = f"match {match_id}: not a sealed match this seat can follow: {exc}"
            raise cls.refused(why) from None
        return cls(machine, match_id, seat, **kw)

    @property
    def seen(self) -> int:
        """The seq of the last event the machine applied."""
        return self.machine.next_seq - 1

    # -- refusals ----------------------------------------------------------------------------
    def refuse(self, kind: str, message: str, evidence: dict[str, Any]) -> Exception:
        """The refusal to raise, reported as a dispute first."""
        text = f"match {self.match_id}, seat {self.seat}: {message}"
        if self.on_dispute is not None:
            self.on_dispute(kind, text, evidence)
        return self.refused(text)

    # -- the log -----------------------------------------------------------------------------
    def take_events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """The log's events (those after :attr:`seen` are applied): every step verified by
        the machine; a step that does not verify is refused (``sealed_log`` dispute)."""
        try:
            self.machine.feed(list(events))
        except GameError as exc:
            raise self.refuse(
                "sealed_log",
                f"the log does not verify under the rules: {exc}",
                {"events": [dict(e) for e in events]},
            ) from None

    # -- this seat's hand ----------------------------------------------------------------------
    def _decoded(self) -> sealed.Deck:
        hand = self.machine.engine.sealed
        assert hand is not None
        if self._deck is None or self._deck[0] != hand.number or self._deck[1] is not hand.deck:
            self._deck = (hand.number, hand.deck, decoded_deck(hand.deck))
        return self._deck[2]

    def own_items(self) -> dict[int, str]:
        """This seat's items of the hand it has learnt (item → code): every item its machine
        says is dealt to it, once every other seat's share of it is in the log."""
        m = self.machine
        hand = m.engine.sealed
        if hand is None:
            return {}
        own = self.own.setdefault(hand.number, {})
        mine = m.dealt(self.seat)
        if len(own) == len(mine) or len(hand.shuffled) != m.engine.n_seats:
            return own
        if self._table is None or self._table[0] != hand.number:
            self._table = (hand.number, sealed.item_table(hand.game, hand.items))
        deck = self._decoded()
        n = m.engine.n_seats
        for i in mine:
            got = hand.shares.get(i, {})
            if i not in own and all(s in got for s in range(n) if s != self.seat):
                others = [got[s] for s in range(n) if s != self.seat]
                own[i] = self.secrets.learn(hand.number, deck[i], others, self._table[1])
        return own

    # -- the view --------------------------------------------------------------------------------
    def check_view(self, raw: Mapping[str, Any]) -> None:
        """A view of this seat's turn (as the server sent it) against the machine: what an
        honest server sends then (``sealed_view`` dispute when it disagrees)."""
        m = self.machine
        if (
            not m.started
            or raw.get("turn") != self.seat
            or raw.get("status") != "playing"
            or m.engine.outcome is not None
        ):
            return
        why = m.disagreement(raw, self.seat)
        if why is not None:
            raise self.refuse(
                "sealed_view",
                f"the view disagrees with the log: {why}",
                {"view": dict(raw), "log_seq": self.seen},
            )

    def view(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The seat's view: its hand by code and its legal actions in player form, both from
        its machine (the view's ``hand`` and ``legal_actions`` are not believed)."""
        m = self.machine
        if not m.started:
            return {**raw, "legal_actions": [], "suggested_actions": []}
        self.check_view(raw)
        own = self.own_items()
        out = dict(raw)
        held = m.held(self.seat)
        out["hand_items"] = held
        out["hand"] = [own[i] for i in held if i in own]
        drawn = raw.get("drawn")
        if isinstance(drawn, int) and drawn in own and m.owner(drawn) == self.seat:
            out["drawn_card"] = own[drawn]
        mine = raw.get("turn") == self.seat
        out["legal_actions"] = m.choices(self.seat, own) if mine else []
        if "suggested_actions" in raw:  # the bot's choices, from the machine as the legal ones
            out["suggested_actions"] = m.choices(self.seat, own, bot=True) if mine else []
        return out

    def listed(self) -> list[Action]:
        """The rules' listed actions with this seat's items named, before any rule over its
        hidden hand (a simulated cheat's choices)."""
        e = self.machine.engine
        own = self.own_items()
        out: list[Action] = []
        for a in e.legal_actions(self.seat):
            if a.get("type") == "play" and "item" in a:
                code = own.get(int(a["item"]))
                if code is not None:
                    named: Action = {"type": "play", e.ITEM_FIELD: code}
                    named.update((k, v) for k, v in a.items() if k not in ("type", "item"))
                    out.append(named)
            else:
                out.append(dict(a))
        return out

    # -- what is sent ------------------------------------------------------------------------------
    def wire(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """What is sent for a player-form ``action``: the deal step its machine says this seat
        owes, with its proofs, or the play with its opening; anything its machine does not
        allow now is refused (a ``sealed_step`` dispute for a deal step it does not owe)."""
        m = self.machine
        act = dict(action)
        e = m.engine
        if e.turn != self.seat or e.outcome is not None:
            raise self.error(f"seat {self.seat} is not on turn (by the log)")
        owed = e.owed[0] if e.owed else None
        hand = e.sealed
        assert hand is not None
        if act.get("type") == "sealed":
            step = act.get("step")
            if owed is None or owed.step != step or step == "open":
                raise self.refuse(
                    "sealed_step",
                    f"asked for a sealed {step!r} step its machine does not owe (owed: {m.owed})",
                    {"asked": act, "owed": m.owed, "log_seq": self.seen},
                )
            if set(act) == {"type", "step"}:
                return self._step(step, owed.items)
            # a step the player made itself: sent as it is, if it gives nothing away
            shares = act.get("shares")
            if step == "share" and (
                not isinstance(shares, list)
                or [x.get("item") if isinstance(x, dict) else None for x in shares]
                != list(owed.items)
            ):
                raise self.refuse(
                    "sealed_step",
                    f"asked to send shares of items other than those owed ({list(owed.items)})",
                    {"asked": act, "owed": m.owed, "log_seq": self.seen},
                )
            if step == "reveal_key" and not m.play_over:
                raise self.refuse(
                    "sealed_step",
                    "asked to send its key before the hand's play is over",
                    {"asked": act, "owed": m.owed, "log_seq": self.seen},
                )
            return act
        if owed is not None:
            raise self.error(f"the deal is under way: seat {self.seat} owes its {owed.step!r}")
        if act.get("type") == "play" and "item" not in act:
            # a play of a card or tile this seat holds, unopened (whether the rules over the
            # hidden hand allow it is the engine's to check, at once or at the hand's end)
            own = self.own_items()
            code = act.get(e.ITEM_FIELD)
            found = [i for i in m.held(self.seat) if own.get(i) == code]
            if not found or found[0] in hand.opened:
                raise self.error(f"{code!r} is not in seat {self.seat}'s hand")
            item = found[0]
            opening = self.secrets.opening(
                hand.number, item, self._decoded()[item], m.dealt(self.seat)
            )
            return {**act, **opening}
        if "share" in act or "secret" in act or "code" in act:
            raise self.refuse(
                "sealed_step",
                f"asked to send {act} (an opening or a secret its machine does not call for)",
                {"asked": act, "log_seq": self.seen},
            )
        return act

    def _step(self, step: Any, items: Sequence[int]) -> dict[str, Any]:
        m = self.machine
        hand = m.engine.sealed
        assert hand is not None
        if step == "key":
            return self.secrets.key_step(hand.number)
        if step == "shuffle":
            assert hand.hand_key is not None
            return self.secrets.shuffle_step(hand.number, hand.hand_key, self._decoded())
        if step == "share":
            mine = m.dealt(self.seat)
            deck = self._decoded()
            shares = [self.secrets.share(hand.number, i, deck[i], mine) for i in items]
            return {"type": "sealed", "step": "share", "shares": shares}
        if step == "reveal_key":
            return self.secrets.reveal(hand.number, m.play_over)
        raise self.refuse(
            "sealed_step",
            f"no rule asks a seat for a sealed {step!r} step",
            {"step": step, "items": list(items), "log_seq": self.seen},
        )
