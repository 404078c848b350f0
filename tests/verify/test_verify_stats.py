"""verify stats: statistics over a player's own verified transcripts (issue 25)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fairness import PROTOCOL, PROTOCOL_V2, V2, match_key
from games.registry import engine_class
from games.replay import replay
from games.transcript import simulate_match
from tests.support import serving
from tests.verify.test_verify_cli_helpers import SIGNER, full_match, keys_doc, run
from verify_cli.main import app
from verify_cli.stats import (
    PIPS_MEAN,
    PIPS_VAR,
    analyse,
    browser_stats,
    first_hand,
    sentence,
    tally,
)


def v1_match(game: str, ruleset: dict[str, Any], seed: int) -> dict[str, Any]:
    """A genuine qahwa-fair/1 transcript (v1 transcripts verify forever)."""
    doc, _ = simulate_match(game, ruleset, seed=seed, protocol=PROTOCOL)
    return doc


def tawla(seed: int) -> dict[str, Any]:
    return v1_match("tawla", {"match_length": 3}, seed)


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("tx")
    out = []
    for i in range(6):
        p = d / f"tawla-{i}.json"
        p.write_text(json.dumps(SIGNER.signed(tawla(100 + i))), encoding="utf-8")
        out.append(str(p))
    for game, rs in (
        ("hokm", {}),
        ("qahve", {}),
        ("iraqi_domino", {}),
        ("mexican_train", {"rounds": 1}),
        ("shelem", {}),
    ):
        doc = v1_match(game, rs, 7)
        p = d / f"{game}.json"
        p.write_text(json.dumps(SIGNER.signed(doc)), encoding="utf-8")
        out.append(str(p))
    keys = d / "keys.json"
    keys.write_text(json.dumps(keys_doc()), encoding="utf-8")
    out.append(str(keys))
    return out


def test_genuine_transcripts_are_nothing_unusual(genuine: list[str]) -> None:
    *files, keys = genuine
    for seat in ("0", "1"):
        res = run("stats", "--seat", seat, "--key", keys, *files)
        assert res.exit_code == 0, res.output
        assert f"{len(files)} transcript(s), seat {seat}" in res.stdout
        assert "Verdict: nothing unusual." in res.stdout
        assert "without a signature check" not in res.stdout
    out = json.loads(run("stats", "--seat", "0", "--key", keys, "--json", *files).stdout)
    names = [t["name"] for t in out["tests"]]
    assert names == [
        "dice faces",
        "doubles",
        "pips",
        "first-hand strength (cards)",
        "first-hand strength (dominoes)",
    ]
    assert out["sentence"] == "nothing unusual" and out["unusual"] is False
    assert all(0 < t["p_value"] <= t["p_adjusted"] <= 1 for t in out["tests"])


def test_without_a_key_it_says_the_signature_was_not_checked(genuine: list[str]) -> None:
    res = run("stats", "--seat", "0", genuine[0])
    assert res.exit_code == 0
    assert "1 without a signature check" in res.stdout


def _plant_doubles(doc: dict[str, Any], seat: int, count: int) -> dict[str, Any]:
    """Make ``count`` of ``seat``'s rolls in a row double sixes (the derivation no longer
    agrees, so the transcript fails verification)."""
    doc = copy.deepcopy(doc)
    roller = None
    planted = 0
    for ev in doc["events"]:
        if ev["type"] == "action" and ev["action"].get("type") == "roll":
            roller = ev["seat"]
        elif ev["type"] == "chance" and ev["kind"] == "dice" and "/roll/" in ev["label"]:
            if roller == seat and planted < count:
                ev["result"] = [6, 6]
                planted += 1
    assert planted == count
    return doc


def test_a_planted_run_of_doubles_is_flagged(tmp_path: Path) -> None:
    doc = tawla(100)
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(_plant_doubles(doc, 0, 14)), encoding="utf-8")
    res = run("stats", "--seat", "0", "--no-verify", str(path))
    assert res.exit_code == 0, res.output
    assert "NOT verified" in res.stdout
    assert "Verdict: unusual at p = " in res.stdout
    assert "which happens by chance to about one player in " in res.stdout
    out = json.loads(run("stats", "--seat", "0", "--no-verify", "--json", str(path)).stdout)
    doubles = next(t for t in out["tests"] if t["name"] == "doubles")
    assert doubles["p_adjusted"] < 0.01 and out["unusual"] is True
    # the other seat's dice were not touched
    other = run("stats", "--seat", "1", "--no-verify", str(path))
    assert "Verdict: nothing unusual." in other.stdout
    # verified (the default), the tampered transcript is excluded, and that is exit 1
    res = run("stats", "--seat", "0", str(path))
    assert res.exit_code == 1
    assert "excluded, failed verification" in res.stdout
    assert "0 transcript(s)" in res.stdout


def test_rolls_are_attributed_to_the_roller() -> None:
    doc = tawla(101)
    all_dice = sum(
        len(e["result"]) for e in doc["events"] if e["type"] == "chance" and e["kind"] == "dice"
    )
    t0, t1 = tally([doc], 0, None), tally([doc], 1, None)
    both = tally([doc], None, None)
    assert sum(t0.faces.values()) + sum(t1.faces.values()) == all_dice
    assert both.faces == t0.faces + t1.faces
    assert len(t0.rolls) + len(t1.rolls) == len(both.rolls) > 0
    # by name
    name0 = doc["seats"][0]["name"]
    assert tally([doc], None, name0).faces == t0.faces


def _v2_shaped(doc: dict[str, Any]) -> dict[str, Any]:
    """A v1 tawla transcript rewritten in v2's event shapes (fairness-v2.md §6): each roll
    action carries its value, the opponent's roll_value follows, labels are fresh."""
    events: list[dict[str, Any]] = []
    roller = None
    for ev in doc["events"]:
        ev = dict(ev)
        if ev["type"] == "action" and ev["action"].get("type") == "roll":
            roller = ev["seat"]
            ev["action"] = {"type": "roll", "value": "11" * 32}
            events.append(ev)
            events.append(
                {
                    "type": "action",
                    "seat": 1 - roller,
                    "action": {"type": "roll_value", "value": "22" * 32},
                }
            )
            continue
        if ev["type"] == "chance" and ev["kind"] == "dice":
            if "/opening/" in ev["label"]:
                events.append(
                    {
                        "type": "action",
                        "seat": 0,
                        "action": {"type": "roll_value", "value": "33" * 32},
                    }
                )
                events.append(
                    {
                        "type": "action",
                        "seat": 1,
                        "action": {"type": "roll_value", "value": "44" * 32},
                    }
                )
            ev["label"] += "|" + hashlib.sha256(ev["label"].encode()).hexdigest()
        events.append(ev)
    return {**doc, "protocol": "qahwa-fair/2", "events": events}


def test_v2_event_shapes_count_the_same() -> None:
    doc = tawla(102)
    v2 = _v2_shaped(doc)
    for seat in (0, 1):
        a, b = tally([doc], seat, None), tally([v2], seat, None)
        assert a.faces == b.faces and a.rolls == b.rolls


def _sim(game: str, rs: dict[str, Any], seed: int, protocol: str) -> dict[str, Any]:
    doc, _ = simulate_match(game, rs, seed=seed, protocol=protocol)
    return doc


def _engine_first_hands(doc: dict[str, Any]) -> list[list[str]]:
    """Each seat's hand right after the match's first deal, from a replay of the
    transcript through the engine (games.replay)."""
    cls = engine_class(doc["game"])
    seats = doc["seats"]
    if doc["protocol"] == PROTOCOL_V2:
        key = V2.match_key(
            doc["server_seed"],
            doc["match_id"],
            doc["game"],
            doc["ruleset"],
            [(s["client_seed"], s["nonce"]) for s in seats],
        )
    else:
        key = match_key(
            bytes.fromhex(doc["server_seed"]),
            doc["match_id"],
            doc["game"],
            doc["ruleset"],
            [s["client_seed"] for s in seats],
        )
    first: list[list[str]] = []

    def on_event(ev: Any, engine: Any) -> None:
        if not first and all(engine.hands[s] for s in range(len(seats))):
            first.extend(list(h) for h in engine.hands)

    replay(cls, doc["ruleset"], key, doc["events"], protocol=doc["protocol"], on_event=on_event)
    return first


@pytest.mark.parametrize("protocol", [PROTOCOL, PROTOCOL_V2])
@pytest.mark.parametrize(
    "game,rs",
    [
        ("hokm", {}),
        ("hokm", {"players": 3}),
        ("hokm", {"players": 2}),
        ("qahve", {}),
        ("shelem", {}),
        ("shelem", {"players": 2}),
        ("iraqi_domino", {}),
        ("mexican_train", {"rounds": 1, "players": 6}),
    ],
)
def test_first_hand_is_the_engines_deal(game: str, rs: dict[str, Any], protocol: str) -> None:
    """The hand stats reads from a transcript is the hand the engine dealt (v1's chosen
    cut or tap, v2's drawn cut)."""
    for seed in range(2):
        doc = _sim(game, rs, seed, protocol)
        dealt = _engine_first_hands(doc)
        n = len(doc["seats"])
        assert len(dealt) == n
        for seat in range(n):
            got = first_hand(doc, seat)
            assert got is not None
            hand, deck = got
            if game == "hokm":  # the first five, the rest after trump is named
                assert hand[: len(dealt[seat])] == dealt[seat]
                assert len(hand) == {4: 13, 3: 17, 2: 5}[n]
            else:
                assert sorted(hand) == sorted(dealt[seat])
            assert set(hand) <= set(deck)


def test_v2_transcripts_count_every_die_once(tmp_path: Path) -> None:
    docs = [_sim("tawla", {"match_length": 3}, 200 + i, PROTOCOL_V2) for i in range(3)]
    assert all(d["protocol"] == PROTOCOL_V2 for d in docs)
    all_dice = sum(
        len(e["result"])
        for d in docs
        for e in d["events"]
        if e["type"] == "chance" and e["kind"] == "dice"
    )
    t0, t1 = tally(docs, 0, None), tally(docs, 1, None)
    assert sum(t0.faces.values()) + sum(t1.faces.values()) == all_dice
    assert t0.rolls and t1.rolls
    files = []
    for i, d in enumerate(docs):
        files.append(str(tmp_path / f"v2-{i}.json"))
        Path(files[-1]).write_text(json.dumps(d), encoding="utf-8")
    res = run("stats", "--seat", "0", "--no-verify", *files)
    assert res.exit_code == 0, res.output
    assert "Verdict: nothing unusual." in res.stdout
    planted = tmp_path / "v2-planted.json"
    planted.write_text(json.dumps(_plant_doubles(docs[0], 0, 14)), encoding="utf-8")
    res = run("stats", "--seat", "0", "--no-verify", str(planted))
    assert "Verdict: unusual at p = " in res.stdout


def test_sentences_and_moments() -> None:
    assert sentence(0.5) == "nothing unusual"
    assert sentence(0.001) == (
        "unusual at p = 0.001, which happens by chance to about one player in 1,000"
    )
    assert sentence(2e-12).endswith("one player in 10^12")
    assert sentence(None).startswith("nothing to test")
    assert PIPS_MEAN == pytest.approx(49 / 6)
    assert PIPS_VAR > 0
    assert analyse(tally([], 0, None))["tests"] == []


@pytest.fixture
def server(genuine: list[str]) -> Iterator[str]:
    docs = {
        f"/v1/matches/m{i}/transcript": Path(f).read_bytes() for i, f in enumerate(genuine[:-1])
    }
    docs["/v1/keys"] = json.dumps(keys_doc()).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = docs.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            data = body or b'{"error": {"code": "not_found", "message": "no"}}'
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as url:
        yield url


def test_from_a_server(server: str, genuine: list[str]) -> None:
    ids = [a for i in range(len(genuine) - 1) for a in ("--match", f"m{i}")]
    res = run("stats", "--server", server, "--seat", "0", *ids)
    assert res.exit_code == 0, res.output
    assert f"{len(genuine) - 1} transcript(s), seat 0" in res.stdout
    assert "without a signature check" not in res.stdout  # keys came from the server
    assert "Verdict: nothing unusual." in res.stdout
    res = run("stats", "--server", server, "--seat", "0", "--match", "nope")
    assert res.exit_code == 2


@pytest.mark.parametrize(
    "args,message",
    [
        (["--seat", "0"], "give transcript files or URLs"),
        (["--match", "x", "f.json"], "--match needs --server"),
        (["--seat", "0", "--name", "a", "f.json"], "--seat or --name"),
        (["/nonexistent.json"], "cannot read"),
    ],
)
def test_unusable_input_is_exit_2(args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["stats", *args])
    assert res.exit_code == 2
    assert message in res.output


def test_browser_stats_is_the_cli_analysis_of_one_match() -> None:
    doc = full_match("tawla")
    got = json.loads(browser_stats(json.dumps({"transcript": doc}), 1))
    want = analyse(tally([doc], 1, None))
    assert got["status"] == "ok" and got["seat"] == 1
    assert got["tests"] == json.loads(json.dumps(want["tests"]))
    assert got["sentence"] == want["sentence"]
    assert json.loads(browser_stats("[1, 2"))["status"] == "unusable"
    assert json.loads(browser_stats("[1, 2]")) == {
        "status": "unusable",
        "reason": "not a transcript",
    }
