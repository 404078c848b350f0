"""Shelem's quicker play, trick and scoring code does exactly what the plain code it
replaced did, and ``sort_hand`` by table lookup sorts (and fails) as its key function.

:class:`PlainShelem` is the engine with its turn, its action dispatch, its card play, its
trick closing (``close_trick``, ``Trick.winner``, ``pile_points``, ``last_trick`` made at
once) and its hand scoring (``tricks_won``, ``_taken_points``) as they were before their
quick paths. Random matches of
four and of two players are played by both side by side; before each move every card code,
malformed plays, wrong phases and wrong seats are tried on both: each must be refused with
the same error or accepted with the same draws, the engines' whole state equal after each.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

from fairness import DECK52, V1
from games import cards
from games.base import Action, Chance, only_keys
from games.cards import Phase, Trick, close_trick, follow_reason, sort_hand, suit
from games.errors import GameError, IllegalActionError
from games.registry import find_engine
from games.shelem import (
    TRICK_POINTS,
    TRICKS_PER_HAND,
    ShelemEngine,
    _card_field,
    pile_points,
)

# the rules vectors here are qahwa-fair/1's: each game's qahwa-fair/1 variant (issue 48)
ShelemEngineV1 = find_engine("shelem", protocol=V1)

ALL_CODES = [*DECK52, "JB", "JR"]


class PlainShelem(ShelemEngine):
    """The engine's play, trick and scoring code as it was before its quick paths."""

    PROTOCOL = V1  # these tests' keys are qahwa-fair/1's

    #: a plain field, set as each trick closes
    last_trick: dict[str, Any] | None = None  # type: ignore[assignment]

    @property
    def turn(self) -> int | None:
        if self.outcome is not None:
            return None
        if self.phase == Phase.BID:
            return self.bid_turn
        if self.phase == Phase.DISCARD:
            return self.hakem
        k, leader = len(self.trick.plays), self.leader
        if leader is not None and k < 4:  # _trick_order()[k], without building the list
            return (leader + k) % 4 if self.n == 4 else (leader if k % 2 == 0 else 1 - leader)
        return self._trick_order()[k]

    def _apply(self, seat: int, action: Action) -> None:
        t = action["type"]
        if t in ("bid", "pass"):
            self._apply_bid(seat, action)
        elif t == "discard":
            self._apply_discard(seat, action)
        else:
            self._apply_play(seat, action)

    def _apply_play(self, seat: int, action: Action) -> None:
        if self.phase != Phase.PLAY:
            raise self._wrong_phase("card play")
        only_keys(action, "card")
        card = _card_field(action)
        plays = self.trick.plays
        led = suit(plays[0][1]) if plays else None  # the trick's led suit
        if self.n == 2 and len(plays) >= 2:  # _pile_step()
            tops = self._tops(seat)
            if card not in tops:
                where = "in your hand" if card in self.hands[seat] else "not a face-up card"
                raise IllegalActionError(
                    f"{card} is {where}: play one of your face-up pile cards ({', '.join(tops)})"
                )
            if follow_reason(tops, card, led) is not None:
                raise IllegalActionError(
                    f"you have a face-up card of the led suit {led}: play it, not {card}"
                )
            source = Trick.PILE
        else:
            if card not in self.hands[seat]:
                raise IllegalActionError(f"{card} is not in your hand")
            # a card of the led suit (no jokers here) always follows
            if led is not None and card[1] != led:
                reason = follow_reason(self.hands[seat], card, led)
                if reason is not None:
                    raise IllegalActionError(reason)
            source = Trick.HAND
        # -- valid: mutate
        if source == Trick.PILE:
            for p in self.piles[seat]:
                if p and p[-1] == card:
                    p.pop()  # the card under it is now face up
                    break
        else:
            self.hands[seat].remove(card)
        if self.trump is None:
            self.trump = suit(card)  # the hakem's first card names trump
        self.trick.add(seat, card, source)
        if self.n == 2 and len(self.trick) == 2:
            self.revealed = True  # the other player has answered: the tops turn up
        if len(self.trick) == 4:
            self._finish_trick()

    def _finish_trick(self) -> None:
        winner, self.last_trick = close_trick(
            self.trick,
            self.tally,
            self.hand_number,
            self.trump,
            sources=self.n == 2,
            points=TRICK_POINTS + pile_points(self.trick.cards()),
        )
        self.trick = Trick(winner)
        self.leader = winner
        if self.tally.played == TRICKS_PER_HAND:
            self._score_hand()


def state(e: ShelemEngine) -> dict[str, Any]:
    """Everything the engine holds (its draws included) and what it shows."""
    skip = ("chance", "last_trick", "_closed")  # (last_trick: a field, or made from _closed)
    out = {k: v for k, v in vars(e).items() if k not in skip}
    out["last_trick"] = e.last_trick
    out["labels"] = sorted(e.chance.labels)
    out["pending"] = e.chance._pending
    out["turn"] = e.turn
    return out


def attempt(e: ShelemEngine, seat: Any, action: Any, replay: bool) -> Any:
    try:
        return ("ok", e.replay_action(seat, action) if replay else e.apply(seat, action))
    except GameError as exc:
        return ("refused", type(exc).__name__, str(exc))


def wrong_plays(e: ShelemEngine, rng: random.Random) -> list[Any]:
    """Plays a client might send that are refused, and moves of the other phases (which
    are refused in the play; in those phases the move is a bot's)."""
    card = rng.choice(DECK52)
    out: list[Any] = [
        {"type": "play"},
        {"type": "play", "card": rng.choice(["JB", "JR", "as", "1S", "", "ASS"])},
        {"type": "play", "card": rng.choice([5, None, ["AS"], True])},
        {"type": "play", "card": card, "extra": 1},
        {"card": card, "type": "play", "from": "hand"},
    ]
    if e.phase == Phase.PLAY:
        hand = e.hands[e.turn] if e.turn is not None else []
        out += [
            {"type": "pass"},
            {"type": "bid", "amount": 150},
            {"type": "discard", "cards": hand[:4]},
        ]
    return out


def play_both(players: int, seed: int, moves: int) -> tuple[int, int, int]:
    """Random matches (one after another) played on both engines; returns the card plays
    made, the tricks closed and the matches played to their end."""
    rng = random.Random(f"{players}-{seed}")
    ruleset = ShelemEngine.parse_ruleset({"players": players, "target": 250})
    made = tricks = ended = 0
    fast: ShelemEngine | None = None
    plain: ShelemEngine | None = None
    for _ in range(moves):
        if fast is None or plain is None or fast.outcome is not None:
            ended += fast is not None
            key = hashlib.sha256(f"fast-{players}-{seed}-{ended}".encode()).digest()
            fast, plain = ShelemEngineV1(ruleset, Chance(key)), PlainShelem(ruleset, Chance(key))
            assert state(fast) == state(plain)
        seat = fast.turn
        assert seat is not None
        tries: list[tuple[Any, Any]] = [
            (rng.choice([s for s in range(players) if s != seat] + [-1, players]), None)
        ]
        tries += [(seat, a) for a in rng.sample(wrong_plays(fast, rng), 4)]
        if fast.phase == Phase.PLAY:
            legal = fast.legal_actions(seat)
            # every card code, the legal ones among them, in a random order: the first
            # one accepted is the move
            tries += [(seat, {"type": "play", "card": c}) for c in rng.sample(DECK52, 52)]
            tries.insert(rng.randrange(1, len(tries)), (seat, rng.choice(legal)))
        else:
            tries.append((seat, rng.choice(fast.bot_actions(seat))))
        for who, action in tries:
            if action is None:
                action = rng.choice(fast.bot_actions(seat))
            replay = rng.random() < 0.5
            got = attempt(fast, who, action, replay)
            assert got == attempt(plain, who, action, replay), (who, action)
            assert state(fast) == state(plain), (who, action)
            if got[0] == "ok":
                if action["type"] == "play":
                    made += 1
                    tricks += fast.trick.plays == []
                break
        else:
            raise AssertionError("no move was accepted")
        if rng.random() < 0.05 or fast.outcome is not None:
            for s in [None, *range(players)]:
                assert fast.view(s) == plain.view(s)
    return made, tricks, ended


@pytest.mark.parametrize("players", [4, 2])
@pytest.mark.parametrize("seed", range(3))
def test_play_trick_and_score_are_the_plain_ones(players: int, seed: int) -> None:
    made, tricks, ended = play_both(players, seed, moves=2000)
    assert made > 1200 and tricks > 300 and ended >= 1


def test_the_quick_trick_winner_is_the_plain_one_on_every_kind_of_trick() -> None:
    """Random tricks of four cards (trump led, trumped, off-suit, no trump yet) closed by
    both engines from the same position."""
    rng = random.Random(5)
    ruleset = ShelemEngine.parse_ruleset({"players": 4, "target": 400})
    for i in range(3000):
        fast = ShelemEngineV1(ruleset, Chance(bytes(32)))
        plain = PlainShelem(ruleset, Chance(bytes(32)))
        leader = rng.randrange(4)
        trump = rng.choice([*cards.SUITS, None])
        picked = rng.sample(DECK52, 4)
        if rng.random() < 0.5:  # many cards of one suit
            same = [c for c in DECK52 if c[1] == picked[0][1]]
            picked = rng.sample(same, rng.randint(2, 4)) + picked
            picked = list(dict.fromkeys(picked))[:4]
        for e in (fast, plain):
            e.trick = Trick(leader, [((leader + k) % 4, c) for k, c in enumerate(picked)])
            e.trick.sources = [Trick.HAND] * 4
            e.trump, e.leader, e.hakem, e.high_bid = trump, leader, 0, 100
            e._finish_trick()
        assert state(fast) == state(plain), (i, picked, trump)


def plain_hand_order(c: str) -> tuple[int, int]:
    """``sort_hand``'s key before its table."""
    if cards.is_joker(c):
        return (-1, -cards.JOKERS.index(c))
    return (cards.SUITS.index(c[1]), -cards.rank(c))


def sorted_or_error(hand: list[Any], sort: Any) -> Any:
    try:
        return ("ok", sort(hand))
    except Exception as exc:  # the very same error as the plain key's
        return ("error", type(exc).__name__, str(exc))


def test_sort_hand_sorts_and_fails_as_the_plain_key() -> None:
    rng = random.Random(3)
    odd: list[Any] = ["AX", "ZS", "ASx", "", "A", "as", 5, None, ["AS"], ("A", "S"), "1S"]
    for _ in range(3000):
        hand: list[Any] = rng.sample(ALL_CODES, rng.randint(0, 16))
        if rng.random() < 0.2:
            hand.insert(rng.randint(0, len(hand)), rng.choice(odd))
        want = sorted_or_error(list(hand), lambda h: sorted(h, key=plain_hand_order))
        assert sorted_or_error(list(hand), sort_hand) == want, hand
        assert sorted_or_error(list(hand), lambda h: sort_hand(iter(h))) == want, hand
