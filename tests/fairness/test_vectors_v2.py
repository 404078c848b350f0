"""Derived qahwa-fair/2 known answers for every game's labels (``tests/vectors/*_v2.json``).

Each file holds what a game's engine deals, cuts or rolls from the spec's match key (the K
of fairness-v2.md §10, used for every game only to keep the list short, as the spec does):
the deal or opening exactly as the engine makes it. The files were written once from the
code (``python tests/fairness/test_vectors_v2.py --write``); the tests recompute them and check each
against the spec's own vectors where they overlap (the first cards and tiles of each
shuffle, the dealer, the drawn cut, the dice and the fresh roll).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from fairness import V2, fresh_label, roll_chain
from games.base import Chance, Engine, MatchContext
from games.registry import engine_class

VECTORS = Path(__file__).parents[1] / "vectors"
SPEC_SEED = bytes(range(64))
SPEC_SEATS = [
    ("alice-seed", bytes(0xA0 + i % 16 for i in range(32))),
    ("bob-seed", bytes(0xB0 + i % 16 for i in range(32))),
]
SPEC_K = (
    "3999c615a24c97f0baf7c1091cfa88d7ca8d6ba6c838b6b63e3fd8f27824f934"
    "8e74dc7223feb2453861e2c13a214a262550553e27c281730e7c3af33639d260"
)
SOURCE = (
    'fairness-v2.md §10: K of m-0002 (tawla, {"cube":true,"match_length":5}, '
    "alice-seed / bob-seed), used for every game's labels"
)


def spec_key() -> bytes:
    k = V2.match_key(SPEC_SEED, "m-0002", "tawla", '{"cube":true,"match_length":5}', SPEC_SEATS)
    assert k.hex() == SPEC_K
    return k


def new(game: str, ruleset: dict[str, Any], ctx: MatchContext | None = None) -> Engine:
    cls = engine_class(game)
    return cls(cls.parse_ruleset(ruleset), Chance(spec_key()), ctx)


def draws(e: Engine) -> list[dict[str, Any]]:
    return e.chance.take_events()


# -- derivations: what each engine does with the spec's K ---------------------------------------


def derive_iraqi_domino() -> dict[str, Any]:
    cases = []
    for players in (4, 3, 2):
        e = new("iraqi_domino", {"players": players})
        (shuffle,) = draws(e)
        v = e.view(0)
        cases.append(
            {
                "ruleset": {"players": players},
                "label": shuffle["label"],
                "hands": [e.view(s)["hand"] for s in range(players)],
                "pile": v["pile"],
                "turn": e.turn,
            }
        )
    return {"source": SOURCE, "key": SPEC_K, "shuffle": shuffle["result"], "cases": cases}


def derive_mexican_train() -> dict[str, Any]:
    cases = []
    for players in (4, 6):
        e = new("mexican_train", {"players": players})
        (shuffle,) = draws(e)
        cases.append(
            {
                "ruleset": {"players": players},
                "label": shuffle["label"],
                "hands": [e.view(s)["hand"] for s in range(players)],
                "pile": e.view(0)["pile"],
                "turn": e.turn,
            }
        )
    return {"source": SOURCE, "key": SPEC_K, "shuffle": shuffle["result"], "cases": cases}


def derive_hokm() -> dict[str, Any]:
    cases = []
    for players in (4, 3, 2):
        e = new("hokm", {"players": players})
        hakem, shuffle = draws(e)
        cutter = e.turn
        assert cutter is not None
        produced = e.apply(cutter, {"type": "cut"})
        hk = e.view(None)["hakem"]
        e.apply(hk, {"type": "trump", "suit": "S"})
        cases.append(
            {
                "ruleset": {"players": players},
                "hakem_draw": hakem["result"],
                "hakem": hk,
                "cutter": cutter,
                "shuffle": shuffle["result"],
                "cut_event": produced[1],
                "k": e.view(None)["cut"],
                "hands": [e.view(s)["hand"] for s in range(players)],
            }
        )
    return {"source": SOURCE, "key": SPEC_K, "cases": cases}


def derive_qahve() -> dict[str, Any]:
    e = new("qahve", {})
    dealer, shuffle = draws(e)
    return {
        "source": SOURCE,
        "key": SPEC_K,
        "dealer_event": dealer,
        "dealer": e.view(None)["dealer"],
        "shuffle": shuffle["result"],
        "hands": [e.view(s)["hand"] for s in range(4)],
        "turn": e.turn,
    }


def derive_shelem() -> dict[str, Any]:
    cases = []
    for players in (4, 2):
        e = new("shelem", {"players": players})
        dealer, shuffle = draws(e)
        cases.append(
            {
                "ruleset": {"players": players},
                "dealer_event": dealer,
                "shuffle": shuffle["result"],
                "hands": [e.view(s)["hand"] for s in range(players)],
                "turn": e.turn,
            }
        )
    return {"source": SOURCE, "key": SPEC_K, "cases": cases}


def spec_chains() -> list[list[bytes]]:
    secrets = [bytes(0xC0 + i % 16 for i in range(32)), bytes(0xD0 + i % 16 for i in range(32))]
    return [roll_chain("m-0002", s, secrets[s]) for s in (0, 1)]


def derive_tawla() -> dict[str, Any]:
    out: dict[str, Any] = {
        "source": SOURCE + "; roll chains of §10 (secrets 0xC0.., 0xD0..)",
        "key": SPEC_K,
    }
    chains = spec_chains()
    ctx = MatchContext("m-0002", tuple(c[0].hex() for c in chains))
    for game in ("tawla", "mahbusa"):
        plain = new(game, {"fresh_rolls": False})
        opening = draws(plain)
        fresh = new(game, {}, ctx)
        events: list[dict[str, Any]] = []
        while fresh.view(None)["phase"] == "opening":
            for seat in (0, 1):
                k = fresh.view(None)["values_used"][seat]
                events += fresh.apply(
                    seat, {"type": "roll_value", "value": chains[seat][k + 1].hex()}
                )
        out[game] = {
            "plain_opening": opening,
            "plain_turn": plain.turn,
            "fresh_opening": events,
            "fresh_turn": fresh.turn,
            "fresh_view_opening": fresh.view(None)["opening"],
        }
    return out


def derive_rng() -> dict[str, Any]:
    e = new("rng", {})
    sent = [
        {"type": "draw", "kind": "dice", "count": 2, "sides": 6},
        {"type": "draw", "kind": "uniform", "n": 4},
        {"type": "draw", "kind": "shuffle", "n": 10},
    ]
    return {"source": SOURCE, "key": SPEC_K, "draws": [e.apply(0, a)[1] for a in sent]}


DERIVE = {
    "iraqi_domino_deal_v2.json": derive_iraqi_domino,
    "mexican_train_deal_v2.json": derive_mexican_train,
    "hokm_deal_v2.json": derive_hokm,
    "qahve_deal_v2.json": derive_qahve,
    "shelem_deal_v2.json": derive_shelem,
    "tawla_opening_v2.json": derive_tawla,
    "rng_draws_v2.json": derive_rng,
}


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text("utf-8"))


@pytest.mark.parametrize("name", sorted(DERIVE))
def test_engines_reproduce_the_v2_vectors(name: str) -> None:
    assert json.loads(json.dumps(DERIVE[name]())) == load(name)


def test_every_game_has_a_v2_vector() -> None:
    covered = {
        "iraqi_domino",
        "mexican_train",
        "hokm",
        "qahve",
        "shelem",
        "tawla",
        "mahbusa",
        "rng",
    }
    from games import GAME_IDS

    assert covered == set(GAME_IDS)


# -- the overlap with the spec's own vectors (fairness-v2.md §10) --------------------------------


def test_vectors_agree_with_the_spec() -> None:
    dom = load("iraqi_domino_deal_v2.json")
    assert dom["shuffle"][:7] == "1-3 0-3 5-5 4-6 2-5 3-3 2-6".split()
    assert sorted(dom["cases"][0]["hands"][0]) == sorted(dom["shuffle"][:7])  # seat 0: [0, 7)
    train = load("mexican_train_deal_v2.json")
    assert (
        train["shuffle"][:15]
        == ("1-2 4-10 3-8 6-10 8-10 10-10 7-8 7-10 1-1 7-7 3-12 2-10 6-12 0-1 3-9").split()
    )
    hokm = load("hokm_deal_v2.json")["cases"][0]
    assert hokm["shuffle"][:13] == "7C AC 3S 8S 5H 2D 9H 8D QH AS JC AH 6H".split()
    assert hokm["cut_event"] == {
        "type": "chance",
        "label": "h0/cut",
        "kind": "uniform",
        "args": {"n": 51},
        "result": 7,
    }
    assert hokm["k"] == 8  # k = 1 + u
    qahve = load("qahve_deal_v2.json")
    assert qahve["dealer_event"]["result"] == 1 == qahve["dealer"]
    assert qahve["shuffle"][:13] == "7C AC 5S TS 7H 3D JH 9D AH JR JC 3S 8H".split()
    shelem = load("shelem_deal_v2.json")["cases"][0]
    assert shelem["dealer_event"]["label"] == "dealer" and shelem["dealer_event"]["result"] == 1
    tawla = load("tawla_opening_v2.json")
    for game in ("tawla", "mahbusa"):
        first = tawla[game]["plain_opening"][0]
        assert (first["label"], first["result"]) == ("g0/opening/0", [1, 2])
    # the fresh opening: seat 0's value 0, then seat 1's, dice at the fresh label
    chains = spec_chains()
    assert chains[0][1].hex() == (
        "45bba2e9c7bd9d91eff3ed896a901f8a9dd5ca8f01e005da2c26c24a73d8c267"
    )
    assert chains[1][1].hex() == (
        "bcaa14f3bf49355c0cc34e802c86851e87e753cd62f28efbcf777f8cfed78fb2"
    )
    fresh = tawla["tawla"]["fresh_opening"]
    assert [ev["action"]["value"] for ev in fresh[:2]] == [chains[0][1].hex(), chains[1][1].hex()]
    assert fresh[2]["label"] == fresh_label("g0/opening/0", chains[0][1], chains[1][1])
    # the spec's roll vector uses the same values: only the label before '|' differs
    assert fresh[2]["label"].split("|")[1] == (
        "4406efb7f3fffc0db04b39d6542d1b187a75c7536d4d19896ef8c7348e7f8537"
    )


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    for fname, fn in DERIVE.items():
        (VECTORS / fname).write_text(json.dumps(fn(), indent=1, ensure_ascii=False) + "\n", "utf-8")
        print("wrote", fname)
