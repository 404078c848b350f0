"""``verify stats``: were my dice unusual? Statistics over a player's own verified transcripts.

For the player's seat (``--seat N`` or ``--name NAME``; every seat when neither is given),
over every transcript that verifies:

- **dice faces** (tawla, mahbusa): each face of the player's dice, openings included —
  chi-square against 1/6 each (df 5), when every face expects at least 5;
- **doubles**: doubles among the player's rolls (openings excluded: one die each) — an
  exact two-sided binomial test against 1/6;
- **pips**: pips per roll (a double counts four times its face) — a z-test of the mean
  against 49/6 with the exact variance;
- **first-hand strength**: the player's hand of the first deal of each match — high-card
  points (A 4, K 3, Q 2, J 1, jokers 4) in hokm, qahve and shelem, doubles in iraqi_domino and
  mexican_train — a z-test of the total against the exact mean and variance of a hand drawn
  at random from that deck.

The p-values are corrected for the number of tests shown (Holm), so "unusual at p = …,
which happens by chance to about one player in N" is honest about having looked at several
things. Works on qahwa-fair/1 and /2 transcripts alike: it reads the chance events and who
rolled (the seat of the last ``roll`` action, or die i = seat i for an opening).

This module is the statistics only (standard library, ``fairness`` and ``games``), so that the
verify page runs it on Pyodide (:func:`browser_stats`); the command is ``stats_cli``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairness import DECK52, DECK_QAHVE
from games.deals import deal_tiles, first_ace_seat, hokm_deal, hokm_deck, qahve_deal, shelem_layout
from games.mexican_train import hand_size

from .certify.statistics import binomial_two_sided, chi_square, holm, normal_two_sided
from .inputs import InputError, parse_json

ALPHA = 0.01
DICE_GAMES = ("tawla", "mahbusa")
CARD_POINTS = {"A": 4, "K": 3, "Q": 2, "J": 1}
IRAQI_HAND = 7
#: pips of a roll of two dice: a + b, or 4a for a double; mean and variance over 36 rolls
_ROLL_PIPS = [4 * a if a == b else a + b for a in range(1, 7) for b in range(1, 7)]
PIPS_MEAN = sum(_ROLL_PIPS) / 36
PIPS_VAR = sum((p - PIPS_MEAN) ** 2 for p in _ROLL_PIPS) / 36


def card_points(card: str) -> int:
    if card in ("JB", "JR"):
        return 4
    return CARD_POINTS.get(card[0], 0)


def tile_doubles(tile: str) -> int:
    a, b = tile.split("-")
    return 1 if a == b else 0


@dataclass
class Hand:
    game: str
    score: int
    mean: float
    var: float


@dataclass
class Tally:
    faces: Counter[int] = field(default_factory=Counter)
    rolls: list[tuple[int, int]] = field(default_factory=list)
    hands: list[Hand] = field(default_factory=list)
    games: Counter[str] = field(default_factory=Counter)


def _hand_moments(deck: Sequence[str], size: int, value: Any) -> tuple[float, float]:
    """Mean and variance of Σ value(card) over a hand of ``size`` drawn without replacement
    from ``deck``."""
    vals = [value(c) for c in deck]
    n = len(vals)
    mu = sum(vals) / n
    var = sum((v - mu) ** 2 for v in vals) / n
    return size * mu, size * var * (n - size) / (n - 1)


def _label(ev: Mapping[str, Any]) -> str:
    return str(ev.get("label", "")).split("|", 1)[0]


def _chance(events: Sequence[Mapping[str, Any]], label: str) -> Mapping[str, Any] | None:
    return next((ev for ev in events if ev.get("type") == "chance" and _label(ev) == label), None)


def first_hand(doc: Mapping[str, Any], seat: int) -> tuple[list[str], list[str]] | None:
    """The player's hand of the match's first deal, as the game deals it, and the deck it
    was dealt from (None when the transcript has no first deal)."""
    game = doc.get("game")
    events: list[Mapping[str, Any]] = [e for e in doc.get("events", []) if isinstance(e, dict)]
    n = len(doc.get("seats", []))
    try:
        ruleset = json.loads(doc.get("ruleset") or "{}")
    except ValueError:
        ruleset = {}
    if game in ("iraqi_domino", "mexican_train"):
        ev = _chance(events, "r0/shuffle")
        if ev is None:
            return None
        size = IRAQI_HAND if game == "iraqi_domino" else hand_size(n)
        hands, _ = deal_tiles(ev["result"], n, size)
        return list(hands[seat]), list(ev["result"])
    if game not in ("hokm", "qahve", "shelem"):
        return None
    ev = _chance(events, "h0/shuffle")
    if ev is None:
        return None
    deck = list(ev["result"])
    if game in ("qahve", "shelem"):
        dealer = _chance(events, "dealer")
        if dealer is None:
            return None
        if game == "qahve":
            return qahve_deal(deck, int(dealer["result"]))[seat], list(DECK_QAHVE)
        return shelem_layout(deck, int(dealer["result"]), n).hands[seat], list(DECK52)
    hakem_ev = _chance(events, "hakem")
    k = _hokm_cut(events, ev, ruleset)
    if hakem_ev is None or k is None:
        return None
    hakem = first_ace_seat(hakem_ev["result"], n)
    return hokm_deal(deck[k:] + deck[:k], hakem, n).full(seat), hokm_deck(n)


def _first_hand(doc: Mapping[str, Any], seat: int) -> Hand | None:
    got = first_hand(doc, seat)
    if got is None:
        return None
    hand, deck = got
    value = tile_doubles if doc.get("game") in ("iraqi_domino", "mexican_train") else card_points
    mean, var = _hand_moments(deck, len(hand), value)
    return Hand(str(doc.get("game")), sum(value(c) for c in hand), mean, var)


def _hokm_cut(
    events: Sequence[Mapping[str, Any]], shuffle_ev: Mapping[str, Any], ruleset: Mapping[str, Any]
) -> int | None:
    """Hand 0's cut: 0 for none or a tap, ``k`` of a v1 cut, ``1 + u`` of v2's drawn cut."""
    if ruleset.get("cut") is False:
        return 0
    drawn = _chance(events, "h0/cut")
    if drawn is not None:
        return 1 + int(drawn["result"])
    seen = False
    for ev in events:
        if ev is shuffle_ev:
            seen = True
        elif seen and ev.get("type") == "action":
            action = ev.get("action") or {}
            if action.get("type") == "tap":
                return 0
            if action.get("type") == "cut" and isinstance(action.get("k"), int):
                return int(action["k"])
    return None


def tally(docs: Sequence[Mapping[str, Any]], seat: int | None, name: str | None) -> Tally:
    """Count the player's dice and first hands over the transcripts."""
    t = Tally()
    for doc in docs:
        seats = doc.get("seats", [])
        mine: set[int]
        if name is not None:
            mine = {s.get("seat", i) for i, s in enumerate(seats) if s.get("name") == name}
        elif seat is not None:
            mine = {seat} if seat < len(seats) else set()
        else:
            mine = set(range(len(seats)))
        if not mine:
            continue
        game = str(doc.get("game"))
        t.games[game] += 1
        if game in DICE_GAMES:
            roller: int | None = None
            for ev in doc.get("events", []):
                if not isinstance(ev, dict):
                    continue
                if ev.get("type") == "action" and (ev.get("action") or {}).get("type") == "roll":
                    roller = ev.get("seat")
                elif ev.get("type") == "chance" and ev.get("kind") == "dice":
                    dice = [int(d) for d in ev.get("result", [])]
                    if "/opening/" in _label(ev):
                        for s, d in enumerate(dice):
                            if s in mine:
                                t.faces[d] += 1
                    elif roller in mine and len(dice) == 2:
                        t.faces.update(dice)
                        t.rolls.append((dice[0], dice[1]))
                    roller = None
        else:
            for s in sorted(mine):
                hand = _first_hand(doc, s)
                if hand is not None:
                    t.hands.append(hand)
    return t


def analyse(t: Tally) -> dict[str, Any]:
    """The tests, their Holm-corrected p-values and the plain sentence."""
    tests: list[dict[str, Any]] = []
    n_dice = sum(t.faces.values())
    if n_dice:
        observed = [t.faces.get(f, 0) for f in range(1, 7)]
        test: dict[str, Any] = {
            "name": "dice faces",
            "n": n_dice,
            "observed": observed,
            "expected": [n_dice / 6] * 6,
        }
        if n_dice >= 30:
            cs = chi_square(observed, [n_dice / 6] * 6)
            test.update(statistic=cs.statistic, df=cs.df, p_value=cs.p_value, method="chi-square")
        else:
            test.update(p_value=None, method=f"too few dice for a test ({n_dice}; 30 needed)")
        tests.append(test)
    if t.rolls:
        n = len(t.rolls)
        doubles = sum(1 for a, b in t.rolls if a == b)
        tests.append(
            {
                "name": "doubles",
                "n": n,
                "observed": doubles,
                "expected": n / 6,
                "p_value": binomial_two_sided(doubles, n, 1 / 6),
                "method": "exact binomial",
            }
        )
        pips = sum(4 * a if a == b else a + b for a, b in t.rolls)
        z = (pips - n * PIPS_MEAN) / math.sqrt(n * PIPS_VAR)
        tests.append(
            {
                "name": "pips",
                "n": n,
                "observed": pips / n,
                "expected": PIPS_MEAN,
                "statistic": z,
                "p_value": normal_two_sided(z),
                "method": "z-test of the mean pips per roll",
            }
        )
    for kind, games, what in (
        ("cards", ("hokm", "qahve", "shelem"), "high-card points: A 4, K 3, Q 2, J 1, jokers 4"),
        ("dominoes", ("iraqi_domino", "mexican_train"), "doubles"),
    ):
        hands = [h for h in t.hands if h.game in games]
        if not hands:
            continue
        score = sum(h.score for h in hands)
        mean = sum(h.mean for h in hands)
        var = sum(h.var for h in hands)
        z = (score - mean) / math.sqrt(var) if var > 0 else 0.0
        tests.append(
            {
                "name": f"first-hand strength ({kind})",
                "n": len(hands),
                "observed": score / len(hands),
                "expected": mean / len(hands),
                "statistic": z,
                "p_value": normal_two_sided(z),
                "method": f"z-test of {what} per first hand",
            }
        )
    adjusted = iter(holm([x["p_value"] for x in tests if x.get("p_value") is not None]))
    for x in tests:
        if x.get("p_value") is not None:
            x["p_adjusted"] = next(adjusted)
    worst = min((x["p_adjusted"] for x in tests if "p_adjusted" in x), default=None)
    return {
        "tests": tests,
        "p_min_adjusted": worst,
        "sentence": sentence(worst),
        "unusual": worst is not None and worst < ALPHA,
    }


def one_in(p: float) -> str:
    n = 1 / p if p > 0 else math.inf
    if n == math.inf:
        return "more than 10^300"
    if n < 1e9:
        return f"{round(n):,}"
    return f"10^{math.log10(n):.0f}"


def sentence(p: float | None) -> str:
    if p is None:
        return "nothing to test: no dice or dealt hands of this player in these transcripts"
    if p >= ALPHA:
        return "nothing unusual"
    return f"unusual at p = {p:.2g}, which happens by chance to about one player in {one_in(p)}"


def browser_stats(text: str, seat: int | None = None) -> str:
    """What the verify page's worker asks for once a transcript checked out: :func:`analyse`
    of that one match, for ``seat`` (every seat when None), as JSON ``{"status": "ok",
    "seat", **analyse}``, or ``{"status": "unusable", "reason"}``."""
    try:
        doc = parse_json(text)
    except InputError as exc:
        return json.dumps({"status": "unusable", "reason": str(exc)})
    if isinstance(doc, dict) and "protocol" not in doc and isinstance(doc.get("transcript"), dict):
        doc = doc["transcript"]
    if not isinstance(doc, dict):
        return json.dumps({"status": "unusable", "reason": "not a transcript"})
    return json.dumps({"status": "ok", "seat": seat, **analyse(tally([doc], seat, None))})
