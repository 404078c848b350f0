"""A hand's sealed record (docs/spec/fairness-v3.md §9) verified as §10 says (by
games.sealed_hand.verify_hand, which feeds it into the deal machine): keys, the shuffle
chain in its order, shares, openings, revealed keys, and the whole deck opened at the end;
every changed or missing part refused with words."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from games.sealed_backend import SealedStepError
from games.sealed_hand import verify_hand
from sealed.demo import simulated_hand

MATCH = "m-hand"
ITEMS = [r + s for s in "SH" for r in "9TJQKA"]  # 12 cards
SEATS = 4
HOUSE = (1, 3)


def build() -> tuple[dict[str, Any], list[str]]:
    """A hand of four seats (1 and 3 the house's): item i dealt to seat i mod 4, items 0..3
    opened by their owners, every key revealed."""
    return simulated_hand(MATCH, 3, "hokm", ITEMS, SEATS, HOUSE, opened=4)


ENTRY, LEARNT = build()


def test_a_whole_hand_verifies_and_opens() -> None:
    v = verify_hand(MATCH, ENTRY, SEATS, HOUSE)
    assert v.order == tuple(LEARNT)
    assert sorted(LEARNT) == sorted(ITEMS)
    assert v.opened == {i: LEARNT[i] for i in range(4)}


def test_before_the_keys_are_revealed_the_deck_stays_closed() -> None:
    e = copy.deepcopy(ENTRY)
    e["revealed"] = e["revealed"][:3]
    v = verify_hand(MATCH, e, SEATS, HOUSE)
    assert v.order is None and len(v.opened) == 4


def _flip_b64(text: str, pos: int) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[pos % len(raw)] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def _flip_hex(text: str) -> str:
    raw = bytearray(bytes.fromhex(text))
    raw[5] ^= 0x10
    return raw.hex()


TAMPERS: dict[str, tuple[str, Any]] = {
    "a key": (
        "key proof|key of seat|proof of knowledge",
        lambda e: e["keys"][2].update(key=_flip_hex(e["keys"][2]["key"])),
    ),
    "a key proof": ("proof", lambda e: e["keys"][0].update(proof=_flip_hex(e["keys"][0]["proof"]))),
    "a deck": (
        "shuffle proof|point",
        lambda e: e["shuffles"][1].update(deck=_flip_b64(e["shuffles"][1]["deck"], 700)),
    ),
    "a shuffle proof": (
        "shuffle proof|point|scalar",
        lambda e: e["shuffles"][3].update(proof=_flip_b64(e["shuffles"][3]["proof"], 99)),
    ),
    "the shuffle order": ("in that order", lambda e: e["shuffles"].reverse()),
    "a missing shuffle": ("in that order", lambda e: e["shuffles"].pop()),
    "a share": ("share", lambda e: e["shares"][5].update(share=_flip_hex(e["shares"][5]["share"]))),
    "a share proof": (
        "share",
        lambda e: e["shares"][7].update(proof=_flip_hex(e["shares"][7]["proof"])),
    ),
    "a share's item": (
        "share of seat",
        lambda e: e["shares"][9].update(item=(e["shares"][9]["item"] + 1) % 12),
    ),
    "a share's seat": (
        "share of seat|second share",
        lambda e: e["shares"][9].update(seat=(e["shares"][9]["seat"] + 1) % 4),
    ),
    "an opening's code": (
        "do not open",
        lambda e: e["openings"][1].update(code="2C" if e["openings"][1]["code"] != "2C" else "3C"),
    ),
    "an opening without its owner's share": (
        "no share of seats",
        lambda e: e["shares"].remove(
            next(s for s in e["shares"] if s["item"] == 0 and s["seat"] == 0)
        ),
    ),
    "a revealed key": (
        "does not match",
        lambda e: e["revealed"][1].update(secret=e["revealed"][2]["secret"]),
    ),
    "the items": ("shuffle proof", lambda e: e["items"].reverse()),
    "the game": ("shuffle proof", lambda e: e.update(game="qahve")),
    "the hand": ("proof", lambda e: e.update(hand=4)),
    "a field too many": ("exactly the fields", lambda e: e.update(extra=1)),
    "non-canonical base64": (
        "base64",
        lambda e: e["shuffles"][0].update(deck=e["shuffles"][0]["deck"] + "\n"),
    ),
    "uppercase hex": ("hex", lambda e: e["keys"][1].update(key=e["keys"][1]["key"].upper())),
}


@pytest.mark.parametrize("what", sorted(TAMPERS))
def test_a_changed_part_is_refused(what: str) -> None:
    match, change = TAMPERS[what]
    e = copy.deepcopy(ENTRY)
    change(e)
    with pytest.raises(SealedStepError, match=match):
        verify_hand(MATCH, e, SEATS, HOUSE)


def test_another_match_or_house_is_refused() -> None:
    with pytest.raises(SealedStepError, match="proof"):
        verify_hand("m-other", ENTRY, SEATS, HOUSE)
    with pytest.raises(SealedStepError, match="in that order"):
        verify_hand(MATCH, ENTRY, SEATS, ())
