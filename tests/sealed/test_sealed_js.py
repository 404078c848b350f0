"""A second verifier of qahwa-fair/3 (qahwa_page/static/sealed-verify.js: the verify page's
bundle of clients/ts's src/verify/sealed.ts over src/sealed/, the TypeScript seat's own
cryptography, with the @noble/curves and @noble/hashes clients/ts locks) agrees with the
Python package ``sealed`` on the spec's vectors and on random cases: keys, shuffles, shares
and openings, each as made and with one random field or byte changed, accepted or refused
alike.

Skips only without node (under CI=true conftest makes that a failure)."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import sealed
from sealed.group import mul, s_add, sub

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "sealed_js" / "run.mjs"
MODULE = ROOT / "qahwa_page" / "static" / "sealed-verify.js"
TS = ROOT / "clients" / "ts"
NODE = shutil.which("node")
VECTORS = json.loads((ROOT / "tests" / "vectors" / "fairness_v3.json").read_text("utf-8"))
CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]


def test_the_bundle_carries_the_locked_noble_packages() -> None:
    """The bundle is built from clients/ts, whose lock holds @noble/curves and @noble/hashes
    at exact versions with integrity hashes; the licence travels with the copy."""
    pkg = json.loads((TS / "package.json").read_text("utf-8"))
    lock = json.loads((TS / "package-lock.json").read_text("utf-8"))
    for name in ("@noble/curves", "@noble/hashes"):
        version = pkg["dependencies"][name]
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        entry = lock["packages"][f"node_modules/{name}"]
        assert entry["version"] == version and entry["integrity"].startswith("sha512-")
    assert any("noble-curves - MIT License" in p.read_text("utf-8") for p in _module_files())


def _module_files() -> list[Path]:
    """The verifier module and the chunks it imports (shared with play.js: one copy of the
    @noble libraries in a /play tab that frames /verify)."""
    text = MODULE.read_text("utf-8")
    return [
        MODULE,
        *(MODULE.parent / n for n in re.findall(r'from\s*"\./(chunk-[A-Z0-9]+\.js)"', text)),
    ]


def test_the_verifier_module_imports_only_its_chunks_beside_it() -> None:
    """The module imports nothing but the chunks of its own build, beside it under /static
    (relative: no import map, no other origin, nothing loaded later)."""
    files = _module_files()
    assert len(files) > 1 and all(p.is_file() for p in files), files
    for p in files:
        text = p.read_text("utf-8")
        assert "import(" not in text, p.name
        for spec in re.findall(r'\b(?:from|import)\s*"([^"]+)"', text):
            assert re.fullmatch(r"\./chunk-[A-Z0-9]+\.js", spec), (p.name, spec)


@pytest.fixture(scope="module")
def node_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if NODE is None:
        pytest.skip("node not installed")
    work = tmp_path_factory.mktemp("sealed-js")

    def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        path = work / "cases.json"
        path.write_text(json.dumps(cases))
        assert NODE is not None
        proc = subprocess.run(
            [NODE, str(RUNNER), str(MODULE), str(path)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        out: list[dict[str, Any]] = json.loads(proc.stdout)
        assert len(out) == len(cases)
        return out

    return run


def _ctx(c: sealed.Context) -> dict[str, Any]:
    return {"match_id": c.match_id, "hand": c.hand, "seat": c.seat}


# -- the Python side's verdict on each case --------------------------------------------------


def python_verdict(case: dict[str, Any]) -> bool:
    h = bytes.fromhex
    ctx = sealed.Context(**case["ctx"]) if "ctx" in case else None
    try:
        if case["kind"] == "key":
            assert ctx is not None
            sealed.verify_key(ctx, h(case["P"]), sealed.KeyProof.decode(h(case["proof"])))
        elif case["kind"] == "revealed":
            sealed.check_revealed(h(case["P"]), h(case["x"]), 0)
        elif case["kind"] == "shuffle":
            assert ctx is not None
            d_in = sealed.decode_deck(h(case["deck_in"]))
            d_out = sealed.decode_deck(h(case["deck_out"]), len(d_in))
            sealed.verify_shuffle(
                ctx,
                h(case["P"]),
                d_in,
                d_out,
                sealed.ShuffleProof.decode(h(case["proof"]), len(d_in)),
            )
        elif case["kind"] == "share":
            assert ctx is not None
            c = sealed.decode_deck(h(case["A"]) + h(case["B"]))[0]
            sealed.verify_share(
                ctx,
                h(case["P"]),
                c,
                sealed.Share(h(case["D"]), sealed.ShareProof.decode(h(case["proof"]))),
            )
        elif case["kind"] == "opening":
            assert ctx is not None
            c = sealed.decode_deck(h(case["A"]) + h(case["B"]))[0]
            shares = [
                sealed.Share(h(s["D"]), sealed.ShareProof.decode(h(s["proof"])))
                for s in case["shares"]
            ]
            sealed.check_opening(
                case["game"], case["code"], c, ctx, [h(k) for k in case["keys"]], shares
            )
        else:
            raise AssertionError(case["kind"])
    except sealed.SealedError:
        return False
    return True


# -- random cases ---------------------------------------------------------------------------


def _flip(hexstr: str, rng: random.Random) -> str:
    b = bytearray(bytes.fromhex(hexstr))
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return b.hex()


def random_cases(seed: int) -> list[dict[str, Any]]:
    """One table: keys, a chain of shuffles, shares and openings; each case as made and once
    with one random field (a byte of a value, or a context field) changed."""
    rng = random.Random(seed)
    seats = rng.randint(2, 4)
    n = rng.randint(1, 9)
    game = rng.choice(["hokm", "iraqi_domino"])
    codes = rng.sample(CARDS, n)
    ctx = sealed.Context(f"m-js-{seed}", rng.randrange(5), 0)
    fr = lambda tag: sealed.FixedRandomness(f"{seed}/{tag}".encode())  # noqa: E731
    keys = [sealed.make_key(ctx.for_seat(s), fr(f"key{s}")) for s in range(seats)]
    P = sealed.hand_key([k.P for k in keys])
    made: list[dict[str, Any]] = []
    for s, k in enumerate(keys):
        made.append(
            {
                "kind": "key",
                "ctx": _ctx(ctx.for_seat(s)),
                "P": k.P.hex(),
                "proof": k.proof.encode().hex(),
            }
        )
        made.append({"kind": "revealed", "P": k.P.hex(), "x": k.x.hex()})
    deck = sealed.starting_deck(game, codes)
    for s in range(seats):
        out, proof = sealed.shuffle(ctx.for_seat(s), P, deck, fr(f"shuffle{s}"))
        made.append(
            {
                "kind": "shuffle",
                "ctx": _ctx(ctx.for_seat(s)),
                "P": P.hex(),
                "deck_in": sealed.encode_deck(deck).hex(),
                "deck_out": sealed.encode_deck(out).hex(),
                "proof": proof.encode().hex(),
            }
        )
        deck = out
    item = rng.randrange(n)
    c = deck[item]
    shares = [
        sealed.make_share(ctx.for_seat(s), keys[s].x, c, fr(f"share{s}")) for s in range(seats)
    ]
    for s, sh in enumerate(shares):
        made.append(
            {
                "kind": "share",
                "ctx": _ctx(ctx.for_seat(s)),
                "P": keys[s].P.hex(),
                "A": c.A.hex(),
                "B": c.B.hex(),
                "D": sh.D.hex(),
                "proof": sh.proof.encode().hex(),
            }
        )
    x = keys[0].x
    for k in keys[1:]:
        x = s_add(x, k.x)
    m = sub(c.B, mul(x, c.A))
    code = next(cd for cd in codes if sealed.item_point(game, cd) == m)
    opening = {
        "kind": "opening",
        "game": game,
        "code": code,
        "A": c.A.hex(),
        "B": c.B.hex(),
        "ctx": _ctx(ctx),
        "keys": [k.P.hex() for k in keys],
        "shares": [{"D": s.D.hex(), "proof": s.proof.encode().hex()} for s in shares],
    }
    made.append(opening)
    made.append({**opening, "code": rng.choice([cd for cd in CARDS if cd != code])})
    cases = list(made)
    for case in made:
        t = json.loads(json.dumps(case))
        fields = [f for f in t if f not in ("kind", "game", "code", "keys", "shares")]
        field = rng.choice(fields)
        if field == "ctx":
            which = rng.choice(["match_id", "hand", "seat"])
            t["ctx"][which] = t["ctx"][which] + "x" if which == "match_id" else t["ctx"][which] + 1
        else:
            t[field] = _flip(t[field], rng)
        cases.append(t)
    return cases


def test_the_spec_vectors_agree(node_run: Any) -> None:
    cases: list[dict[str, Any]] = [
        {"kind": "item", "game": p["game"], "code": p["code"]} for p in VECTORS["item_points"]
    ]
    cases += [{"kind": "generator", "i": g["i"]} for g in VECTORS["generators"]]
    cases.append({"kind": "hand_key", "keys": [k["P"] for k in VECTORS["keys"]]})
    out = node_run(cases)
    want = [p["point"] for p in VECTORS["item_points"]] + [
        g["point"] for g in VECTORS["generators"]
    ]
    want.append(VECTORS["hand_key"])
    assert [o["value"] for o in out] == want
    assert sealed.generator(0).hex() == want[4]


@pytest.mark.parametrize("seed", range(12))
def test_random_cases_agree(node_run: Any, seed: int) -> None:
    cases = random_cases(seed)
    py = [python_verdict(c) for c in cases]
    js = node_run(cases)
    half = len(cases) // 2
    # as made: all accepted but the opening to another code; changed: all refused
    assert py[:half] == [True] * (half - 1) + [False]
    assert py[half:] == [False] * half
    for case, p, j in zip(cases, py, js, strict=True):
        assert j["ok"] == p, (case["kind"], j)


def test_a_whole_hand_agrees(node_run: Any) -> None:
    """A hand's §9 record (tests/sealed/test_sealed_hand.py's) as made, before the keys are
    revealed, and with each of its changes: the same verdict, the same deck opened."""
    import copy

    from games.sealed_backend import SealedStepError
    from games.sealed_hand import verify_hand
    from tests.sealed.test_sealed_hand import ENTRY, HOUSE, MATCH, SEATS, TAMPERS

    closed = copy.deepcopy(ENTRY)
    closed["revealed"] = closed["revealed"][:3]
    entries = [ENTRY, closed]
    for _, change in TAMPERS.values():
        e = copy.deepcopy(ENTRY)
        change(e)
        entries.append(e)
    entries.append(ENTRY)  # for another match
    matches = [MATCH] * (len(entries) - 1) + ["m-other"]
    out = node_run(
        [
            {"kind": "hand", "match_id": m, "entry": e, "seats": SEATS, "house": list(HOUSE)}
            for m, e in zip(matches, entries, strict=True)
        ]
    )
    for m, e, j in zip(matches, entries, out, strict=True):
        try:
            v = verify_hand(m, e, SEATS, HOUSE)
        except SealedStepError:
            assert not j["ok"], j
            continue
        assert j["ok"], j
        assert j["value"]["order"] == (list(v.order) if v.order is not None else None)
        assert {int(k): c for k, c in j["value"]["opened"].items()} == v.opened
    assert out[0]["ok"] and out[1]["ok"]
    assert sum(1 for o in out if not o["ok"]) == len(TAMPERS) + 1


def _vector_cases(v: dict[str, Any]) -> list[dict[str, Any]]:
    """A hand's vectors (§11's hand 0 or hand 1) as cases: keys, revealed keys, the
    shuffle, the shares and the opening."""
    m, hand = v["match_id"], v["hand"]

    def ctx(s: int) -> dict[str, Any]:
        return {"match_id": m, "hand": hand, "seat": s}

    sh = v["shuffle"]
    item = sh["deck_out"][:128]  # item 0: A || B, hex
    cases: list[dict[str, Any]] = []
    for k in v["keys"]:
        cases.append({"kind": "key", "ctx": ctx(k["seat"]), "P": k["P"], "proof": k["proof"]})
        cases.append({"kind": "revealed", "P": k["P"], "x": k["x"]})
    cases.append(
        {
            "kind": "shuffle",
            "ctx": ctx(sh["seat"]),
            "P": v["hand_key"],
            "deck_in": sh["deck_in"],
            "deck_out": sh["deck_out"],
            "proof": sh["proof"],
        }
    )
    for s in v["shares"]:
        cases.append(
            {
                "kind": "share",
                "ctx": ctx(s["seat"]),
                "P": v["keys"][s["seat"]]["P"],
                "A": item[:64],
                "B": item[64:],
                "D": s["D"],
                "proof": s["proof"],
            }
        )
    cases.append(
        {
            "kind": "opening",
            "game": sh["game"],
            "code": v["opening"]["code"],
            "A": item[:64],
            "B": item[64:],
            "ctx": ctx(0),
            "keys": [k["P"] for k in v["keys"]],
            "shares": [{"D": s["D"], "proof": s["proof"]} for s in v["shares"]],
        }
    )
    return cases


def test_the_new_vectors_agree(node_run: Any) -> None:
    """Issue 46's vectors: hand 1 (and hand 1's proofs refused under hand 0's context), the
    52-card shuffle, and each negative vector refused, by both verifiers."""
    hand1 = _vector_cases(VECTORS["hand1"])
    replayed = [
        {**c, "ctx": {**c["ctx"], "hand": 0}}
        for c in hand1
        if c["kind"] in ("key", "shuffle", "share")
    ]
    s52 = VECTORS["shuffle52"]
    big = {
        "kind": "shuffle",
        "ctx": {"match_id": s52["match_id"], "hand": s52["hand"], "seat": s52["seat"]},
        "P": s52["P"],
        "deck_in": s52["deck_in"],
        "deck_out": s52["deck_out"],
        "proof": s52["proof"],
    }
    hand0 = _vector_cases(VECTORS)
    negative: list[dict[str, Any]] = []
    for neg in VECTORS["negative"]:
        path, value = neg["path"], neg["value"]
        head, _, field = path.rpartition(".")
        name, _, index = head.partition("[")
        seat = int(index.rstrip("]")) if index else VECTORS["shuffle"]["seat"]
        kind = {"keys": "revealed" if field == "x" else "key", "shuffle": "shuffle"}.get(
            name, "share"
        )
        case = next(
            c
            for c in hand0
            if c["kind"] == kind
            and ("ctx" not in c or c["ctx"]["seat"] == seat)
            and (kind != "revealed" or c["P"] == VECTORS["keys"][seat]["P"])
        )
        key = {"proof": "proof", "P": "P", "x": "x", "deck_out": "deck_out", "D": "D"}[field]
        negative.append({**case, key: value})
    cases = hand1 + replayed + [big] + negative
    js = node_run(cases)
    py = [python_verdict(c) for c in cases]
    assert py == [True] * len(hand1) + [False] * len(replayed) + [True] + [False] * len(negative)
    for case, p, j in zip(cases, py, js, strict=True):
        assert j["ok"] == p, (case["kind"], j)
