"""The known answers of docs/spec/fairness-v3.md §11, computed from the spec's fixed inputs
(``python tests/sealed_vectors.py`` writes tests/vectors/fairness_v3.json; the tests load
that file and recompute it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import sealed

OUT = Path(__file__).resolve().parent / "vectors" / "fairness_v3.json"
MATCH = "m-0003"
GAME = "hokm"
CODES = ["AS", "KH", "QD"]


def compute() -> dict[str, Any]:
    items = [("hokm", "AS"), ("hokm", "2C"), ("iraqi_domino", "6-6"), ("mexican_train", "12-12")]
    keys = [
        sealed.make_key(sealed.Context(MATCH, 0, s), sealed.FixedRandomness(f"key{s}".encode()))
        for s in (0, 1)
    ]
    P = sealed.hand_key([k.P for k in keys])
    ctx0 = sealed.Context(MATCH, 0, 0)
    deck_in = sealed.starting_deck(GAME, CODES)
    psi = sealed.permutation(len(CODES), sealed.FixedRandomness(b"shuffle"))
    deck_out, proof = sealed.shuffle(ctx0, P, deck_in, sealed.FixedRandomness(b"shuffle"))
    target = deck_out[0]
    shares = [
        sealed.make_share(
            sealed.Context(MATCH, 0, s),
            keys[s].x,
            target,
            sealed.FixedRandomness(f"share{s}".encode()),
        )
        for s in (0, 1)
    ]
    opened = CODES[psi[0]]
    return {
        "spec": "docs/spec/fairness-v3.md §11",
        "item_points": [
            {"game": g, "code": c, "point": sealed.item_point(g, c).hex()} for g, c in items
        ],
        "generators": [{"i": i, "point": sealed.generator(i).hex()} for i in range(4)],
        "match_id": MATCH,
        "hand": 0,
        "keys": [
            {
                "seat": s,
                "randomness": f"key{s}",
                "x": keys[s].x.hex(),
                "P": keys[s].P.hex(),
                "proof": keys[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "hand_key": P.hex(),
        "shuffle": {
            "seat": 0,
            "game": GAME,
            "codes": CODES,
            "randomness": "shuffle",
            "psi": psi,
            "deck_in": sealed.encode_deck(deck_in).hex(),
            "deck_out": sealed.encode_deck(deck_out).hex(),
            "proof": proof.encode().hex(),
        },
        "shares": [
            {
                "seat": s,
                "item": 0,
                "randomness": f"share{s}",
                "D": shares[s].D.hex(),
                "proof": shares[s].proof.encode().hex(),
            }
            for s in (0, 1)
        ],
        "opening": {"item": 0, "code": opened, "point": sealed.item_point(GAME, opened).hex()},
    }


if __name__ == "__main__":
    text = json.dumps(compute(), indent=1, ensure_ascii=False) + "\n"
    if sys.argv[1:] == ["--check"]:
        raise SystemExit(0 if OUT.read_text("utf-8") == text else 1)
    OUT.write_text(text, "utf-8")
