"""The verify CLI on transcripts made offline: genuine ones pass, every tampering is named."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import PROTOCOL, Signer, commitment, public_key_b64
from tests.verify.test_verify_cli_helpers import (
    KEYS,
    SIGNER,
    any_match,
    derive_args,
    full_match,
    games_and_rng,
    keys_doc,
    resign,
    resigned_match,
    run,
    write,
)
from verify_cli.core import FAILED, UNCHECKED, UNUSABLE, VERIFIED, verify_document

VERIFY = str(Path(sys.executable).with_name("verify"))


def failed_check(doc: dict[str, Any]) -> dict[str, Any]:
    rep = verify_document(doc, KEYS)
    assert rep["status"] == FAILED, rep["checks"]
    return rep


# -- genuine transcripts ---------------------------------------------------------------------


@pytest.mark.parametrize("game", games_and_rng())
def test_full_match_of_every_game_verifies(game: str) -> None:
    doc = full_match(game)
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    assert [c["name"] for c in rep["checks"]] == [
        "commitment",
        "match key",
        "replay",
        "result",
        "signature",
    ]
    assert all(c["ok"] for c in rep["checks"])
    assert rep["counts"]["events"] == len(doc["events"])
    assert rep["draws_total"] == sum(1 for e in doc["events"] if e["type"] == "chance")


@pytest.mark.parametrize("game", games_and_rng())
def test_resigned_match_of_every_game_verifies(game: str) -> None:
    doc = resigned_match(game, at=25)
    rep = verify_document(doc, KEYS)
    assert rep["status"] == VERIFIED, rep["failures"]
    ended_by_resignation = doc["events"][-1]["type"] == "end"
    assert (rep["result"]["reason"] == "resigned") == ended_by_resignation
    if game != "rng":  # a plain session may close itself before 25 draws
        assert ended_by_resignation


@pytest.mark.parametrize("game", games_and_rng())
def test_cli_report_shows_the_draws_in_human_form(game: str, key_file: str, tmp_path: Path) -> None:
    doc = any_match(game)
    path = write(tmp_path / "t.json", doc)
    res = run(path, "--key", key_file, "--all-draws")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "VERIFIED" in out and game in out and doc["match_id"] in out
    for seat in doc["seats"]:
        assert seat["name"] in out
    if game == "tawla":
        assert any(f in out for f in "⚀⚁⚂⚃⚄⚅") and "opening roll" in out
        assert re.search(r"\d+ games?,", out)
    if game in ("hokm", "qahve", "shelem"):
        assert any(s in out for s in "♠♥♦♣") and "hand 0" in out
        assert re.search(r"\d+ hands?,", out)
    if game in ("iraqi_domino", "mexican_train"):
        assert "round 0, tiles dealt" in out and "|" in out
        assert re.search(r"\d+ rounds?,", out)
    if game == "rng":
        assert "draws" in out


def test_hokm_first_hakem_and_hands_match_the_deal() -> None:
    doc = any_match("hokm")
    rep = verify_document(doc, KEYS, draws_limit=None)
    first = doc["events"][0]
    assert first["label"] == "hakem"
    ace = next(i for i, c in enumerate(first["result"]) if c.startswith("A"))
    assert rep["draws"][0]["text"].startswith(f"first hakem: seat {ace % 4}")
    hand0 = next(d for d in rep["draws"] if d["label"] == "h0/shuffle")
    deck = next(e for e in doc["events"] if e.get("label") == "h0/shuffle")["result"]
    if not json.loads(doc["ruleset"]).get("cut"):
        h = ace % 4
        mine = deck[0:5] + deck[20:24] + deck[36:40]
        line = next(ln for ln in hand0["text"].splitlines() if ln.strip().startswith(f"seat {h}"))
        for c in mine:
            rank = "10" if c[0] == "T" else c[0]
            assert rank + {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[c[1]] in line


# -- tampering: each kind is caught and named --------------------------------------------------

TAMPER_GAMES = [
    g for g in ("tawla", "hokm", "iraqi_domino", "qahve", "rng") if g in games_and_rng()
]


def _chance_index(doc: dict[str, Any], nth: int = 1) -> int:
    idx = [i for i, e in enumerate(doc["events"]) if e["type"] == "chance"]
    return idx[min(nth, len(idx) - 1)]


def _bump(ev: dict[str, Any]) -> None:
    """Change a chance event's result to another possible one."""
    if ev["kind"] == "dice":
        ev["result"][0] = ev["result"][0] % ev["args"]["sides"] + 1
    elif ev["kind"] == "uniform":
        ev["result"] = (ev["result"] + 1) % ev["args"]["n"]
    else:
        ev["result"][0], ev["result"][1] = ev["result"][1], ev["result"][0]


def _action_index(doc: dict[str, Any]) -> int:
    idx = [i for i, e in enumerate(doc["events"]) if e["type"] == "action"]
    return idx[len(idx) // 2]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_server_seed_fails_the_commitment(game: str) -> None:
    doc = any_match(game)
    doc["server_seed"] = ("00" if doc["server_seed"][:2] != "00" else "11") + doc["server_seed"][2:]
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "commitment"
    assert rep["failures"][0]["expected"] == commitment(doc["server_seed"])


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_commitment_fails(game: str) -> None:
    doc = any_match(game)
    doc["commitment"] = "0" * 64
    rep = failed_check(resign(doc))
    assert [f["check"] for f in rep["failures"]] == ["commitment"]
    assert rep["failures"][0]["found"] == "0" * 64


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_client_seed_breaks_the_first_chance_event(game: str) -> None:
    doc = any_match(game)
    doc["seats"][0]["client_seed"] += "x"
    rep = failed_check(resign(doc))
    f = rep["failures"][0]
    assert f["check"] == "replay"
    first = next(e["seq"] for e in doc["events"] if e["type"] == "chance")
    assert f["seq"] == first
    assert "differs from its recomputation" in f["message"]
    assert f["found"]["result"] == doc["events"][first]["result"]
    assert f["expected"]["result"] != f["found"]["result"]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_ruleset_is_used_as_given(game: str) -> None:
    doc = any_match(game)
    # the same configuration written differently is a different string, so a different K
    doc["ruleset"] = json.dumps(json.loads(doc["ruleset"]), indent=1) if game != "rng" else "{ }"
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "replay"


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_chance_result_is_named(game: str) -> None:
    doc = any_match(game)
    i = _chance_index(doc)
    ev = doc["events"][i]
    _bump(ev)
    rep = failed_check(resign(doc))
    f = rep["failures"][0]
    assert (f["check"], f["seq"]) == ("replay", ev["seq"])
    assert f["found"]["result"] == ev["result"] and f["expected"]["result"] != ev["result"]
    assert f"chance event {ev['seq']}" in f["message"] and ev["label"] in f["message"]
    # and the signature of the untouched original still checks out
    assert rep["signature"]["checked"]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_action_is_named(game: str) -> None:
    doc = any_match(game)
    i = _action_index(doc)
    doc["events"][i]["action"] = {"type": "no-such-move"}
    rep = failed_check(resign(doc))
    f = rep["failures"][0]
    assert (f["check"], f["seq"]) == ("replay", doc["events"][i]["seq"])
    assert "rejected" in f["message"]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_action_by_the_wrong_seat_is_named(game: str) -> None:
    doc = any_match(game)
    i = _action_index(doc)
    n = len(doc["seats"])
    doc["events"][i]["seat"] = (doc["events"][i]["seat"] + 1) % n if n > 1 else 5
    rep = failed_check(resign(doc))
    assert (rep["failures"][0]["check"], rep["failures"][0]["seq"]) == ("replay", i)


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_changed_result_is_named(game: str) -> None:
    doc = any_match(game)
    true_result = dict(doc["result"])
    doc["result"]["scores"] = [s + 1 for s in doc["result"]["scores"]]
    rep = failed_check(resign(doc))
    f = rep["failures"][0]
    assert f["check"] == "result"
    assert f["expected"] == true_result and f["found"] == doc["result"]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_signature_tampering_is_caught(game: str) -> None:
    doc = any_match(game)
    doc["seats"][0]["name"] = "mallory"  # not part of the derivation: only the signature sees it
    rep = failed_check(doc)
    assert [f["check"] for f in rep["failures"]] == ["signature"]
    doc2 = any_match(game)
    v = doc2["signature"]["value"]
    doc2["signature"]["value"] = ("A" if v[0] != "A" else "B") + v[1:]
    assert [f["check"] for f in failed_check(doc2)["failures"]] == ["signature"]
    # a valid signature, but by another key
    other = Signer.generate().signed(any_match(game))
    assert [f["check"] for f in failed_check(other)["failures"]] == ["signature"]


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_removed_event_is_named(game: str) -> None:
    doc = any_match(game)
    i = _action_index(doc)
    del doc["events"][i]
    rep = failed_check(resign(doc))
    assert (rep["failures"][0]["check"], rep["failures"][0]["seq"]) == ("replay", i)
    # renumbered so the seqs have no gap: the replay still disagrees
    doc = any_match(game)
    del doc["events"][i]
    for k, e in enumerate(doc["events"]):
        e["seq"] = k
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] in ("replay", "result")


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_duplicated_event_is_named(game: str) -> None:
    doc = any_match(game)
    i = _chance_index(doc, 0)
    doc["events"].insert(i + 1, dict(doc["events"][i]))
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "replay"
    assert rep["failures"][0]["seq"] in (i, i + 1)


@pytest.mark.parametrize("game", TAMPER_GAMES)
def test_removed_chance_event_at_the_end(game: str) -> None:
    doc = any_match(game)
    last_chance = max(i for i, e in enumerate(doc["events"]) if e["type"] == "chance")
    doc["events"] = doc["events"][:last_chance]
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] in ("replay", "result")


def test_reordered_events_are_caught() -> None:
    doc = any_match("rng")
    ev = doc["events"]
    ev[0], ev[1] = ev[1], ev[0]
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "replay"


def test_bad_seat_list_fails() -> None:
    doc = any_match("rng")
    doc["seats"][0]["seat"] = 3
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "seats"
    doc = any_match("rng")
    doc["seats"][0]["seed_source"] = "moon"
    assert failed_check(resign(doc))["failures"][0]["check"] == "seats"


def test_non_hex_server_seed_fails() -> None:
    doc = any_match("rng")
    doc["server_seed"] = "zz" * 32
    rep = failed_check(resign(doc))
    assert rep["failures"][0]["check"] == "commitment"
    assert "not hexadecimal" in rep["failures"][0]["message"]


# -- the command line: exit codes, --json, keys ----------------------------------------------


def test_exit_codes_and_failure_report(tmp_path: Path, key_file: str) -> None:
    good = write(tmp_path / "good.json", any_match("rng"))
    doc = any_match("rng")
    i = _chance_index(doc)
    _bump(doc["events"][i])
    bad = write(tmp_path / "bad.json", resign(doc))
    assert run(good, "--key", key_file).exit_code == 0
    res = run(bad, "--key", key_file)
    assert res.exit_code == 1
    assert "FAILED" in res.stdout and f"event {i}" in res.stdout
    # the path that differs, both values whole (render.difference_line)
    assert re.search(rf"events\[{i}\]\S*: expected .+, found ", res.stdout), res.stdout
    assert run(good, bad, "--key", key_file, "--jobs", "1").exit_code == 1


def test_json_output_shape(tmp_path: Path, key_file: str) -> None:
    a = write(tmp_path / "a.json", any_match("tawla"))
    doc = any_match("rng")
    doc["result"]["scores"] = [99]
    b = write(tmp_path / "b.json", resign(doc))
    res = run(a, b, "--key", key_file, "--json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and out["exit_code"] == 1
    ra, rb = out["results"]
    assert (ra["source"], ra["status"], rb["source"], rb["status"]) == (a, VERIFIED, b, FAILED)
    for r in (ra, rb):
        assert set(r) >= {
            "match_id",
            "game",
            "seats",
            "counts",
            "checks",
            "failures",
            "signature",
            "draws",
            "draws_total",
        }
        assert all(set(c) == {"name", "ok", "detail"} for c in r["checks"])
    assert rb["failures"][0]["check"] == "result"
    assert rb["failures"][0]["found"]["scores"] == [99]
    assert ra["signature"] == {
        "checked": True,
        "key_id": SIGNER.key_id,
        "key_source": "file",
        "key_origin": key_file,
    }


def test_no_key_means_signature_not_checked(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", any_match("rng"))
    res = run(path)
    assert res.exit_code == 1
    assert "signature not checked" in res.stdout and "VERIFIED" not in res.stdout.split()[0]
    out = json.loads(run(path, "--json").stdout)
    assert out["results"][0]["status"] == UNCHECKED
    assert out["results"][0]["signature"]["checked"] is False
    res = run(path, "--no-signature")
    assert res.exit_code == 0 and "signature not checked" in res.stdout


def test_key_file_may_be_the_keys_json(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", any_match("rng"))
    kf = write(tmp_path / "keys.json", keys_doc())
    assert run(path, "--key", kf).exit_code == 0
    other = tmp_path / "other.pub"
    other.write_text(public_key_b64(Signer.generate().public_key))
    res = run(path, "--key", str(other))
    assert res.exit_code == 1 and "signature" in res.stdout


@pytest.mark.parametrize(
    "content, reason",
    [
        ("not json at all", "not JSON"),
        (json.dumps({"protocol": "other/9"}), "unknown protocol"),
        (json.dumps([1, 2]), "not a JSON object"),
        (json.dumps({"match_id": "m1", "status": "playing"}), "no 'protocol' field"),
        (json.dumps({"protocol": "qahwa-fair/1", "game": "tawla"}), "is missing"),
    ],
)
def test_unusable_files_exit_2(tmp_path: Path, content: str, reason: str) -> None:
    p = tmp_path / "x.json"
    p.write_text(content)
    res = run(str(p))
    assert res.exit_code == 2
    assert reason in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_unknown_game_and_missing_file_exit_2(tmp_path: Path, key_file: str) -> None:
    doc = any_match("rng")
    doc["game"] = "chess"
    p = write(tmp_path / "chess.json", resign(doc))
    res = run(p, "--key", key_file)
    assert res.exit_code == 2 and "unknown game 'chess'" in res.stderr
    res = run(str(tmp_path / "missing.json"))
    assert res.exit_code == 2 and "cannot read" in res.stderr
    res = run(str(tmp_path))
    assert res.exit_code == 2 and "directory" in res.stderr
    res = run(p, "--key", str(tmp_path / "nokey"))
    assert res.exit_code == 2 and "cannot read key file" in res.stderr
    # unusable wins over failed when both occur
    good = write(tmp_path / "good.json", any_match("rng"))
    assert run(good, str(tmp_path / "missing.json"), "--key", key_file).exit_code == 2


def test_unreachable_url_exit_2() -> None:
    res = run("http://127.0.0.1:9/v1/matches/x/transcript")
    assert res.exit_code == 2 and "cannot fetch" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_usage_errors_are_one_line() -> None:
    res = run("--match", "abc")
    assert res.exit_code == 2 and "--match needs --server" in res.stderr
    res = run("--bogus-option")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1


def test_many_files_in_parallel_with_summary(tmp_path: Path, key_file: str) -> None:
    paths = []
    games = games_and_rng()
    for k in range(6):
        g = games[k % len(games)]
        paths.append(write(tmp_path / f"m{k}.json", resigned_match(g, seed=k, at=10)))
    doc = resigned_match("rng", seed=9, at=5)
    doc["commitment"] = "f" * 64
    paths.append(write(tmp_path / "tampered.json", resign(doc)))
    res = run(*paths, "--key", key_file, "--jobs", "2", "--draws", "1")
    assert res.exit_code == 1, res.output
    assert "summary" in res.stdout and "6 of 7 verified" in res.stdout
    out = json.loads(run(*paths, "--key", key_file, "--jobs", "2", "--json").stdout)
    assert [r["source"] for r in out["results"]] == paths
    assert [r["status"] for r in out["results"]] == [VERIFIED] * 6 + [FAILED]


def test_help_explains_both_forms() -> None:
    res = run("--help")
    assert res.exit_code == 0
    for word in ("verify derive", "--server URL --match ID", "FILE|URL", "Exit codes"):
        assert word in res.stdout
    assert run("derive", "--help").exit_code == 0
    assert run("check", "--help").exit_code == 0


# -- verify derive: the spec's vectors (fairness-v1.md §7) ------------------------------------

SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
BASE = derive_args(SEED, "m-0001", '{"cube":true,"match_length":5}', ["alice-seed", "bob-seed"])
K = "cf9eafb8f682735a4b8fe572db33a228af676e4a54ef202366ceaf8a3e4ef474"


@pytest.mark.parametrize(
    "args, kind, check",
    [
        (["--label", "g0/opening/0", "--dice", "2"], "dice", lambda r: r == [1, 3]),
        (["--label", "g0/roll/1", "--dice", "2", "--sides", "6"], "dice", lambda r: r == [2, 5]),
        (["--label", "dealer", "--uniform", "4"], "uniform", lambda r: r == 0),
        (
            ["--label", "h0/shuffle", "--shuffle", "deck52"],
            "shuffle",
            lambda r: r[:13] == "TD AH 8C TC 5C JH 5D JS 7C 9D 3H AS KD".split() and len(r) == 52,
        ),
        (
            ["--label", "h0/shuffle", "--shuffle", "deck_qahve"],
            "shuffle",
            lambda r: r[:13] == "JD 3S 8C TC 5C KH 6D KS 7C TD 5H JR AD".split(),
        ),
        (
            ["--label", "r0/shuffle", "--shuffle", "tiles:6"],
            "shuffle",
            lambda r: r[:7] == "1-5 0-5 1-2 5-6 0-4 1-6 2-2".split() and len(r) == 28,
        ),
        (
            ["--label", "r0/shuffle", "--shuffle", "tiles:12-without:12-12"],
            "shuffle",
            lambda r: (
                r[:15]
                == "3-6 7-9 9-10 0-12 8-8 1-8 0-10 6-10 9-9 6-12 2-7 5-7 4-12 3-3 0-6".split()
                and len(r) == 90
                and "12-12" not in r
            ),
        ),
    ],
)
def test_derive_reproduces_the_spec_vectors(args: list[str], kind: str, check: Any) -> None:
    res = run(*BASE, *args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["commitment"] == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert out["match_key"] == K
    assert out["label"] == args[1] and out["kind"] == kind
    assert check(out["result"])


def test_derive_through_the_console_script() -> None:
    proc = subprocess.run(
        [VERIFY, *BASE, "--label", "g0/opening/0", "--dice", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == [1, 3]


def test_derive_matches_a_transcript_draw() -> None:
    doc = any_match("rng")
    shuffles = [e for e in doc["events"] if e["type"] == "chance" and e["kind"] == "shuffle"]
    assert shuffles, "the rng session of seed 1 draws a shuffle"
    ev = shuffles[0]
    res = run(
        "derive",
        "--server-seed",
        doc["server_seed"],
        "--match-id",
        doc["match_id"],
        "--game",
        "rng",
        "--ruleset",
        doc["ruleset"],
        "--client-seed",
        doc["seats"][0]["client_seed"],
        "--label",
        ev["label"],
        "--shuffle",
        f"range:{len(ev['result'])}",
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["result"] == ev["result"]


@pytest.mark.parametrize(
    "change, needle",
    [
        (["--server-seed", "zz" * 32], "not hexadecimal"),
        (["--server-seed", "00" * 31], "64 hex characters"),
        (["--server-seed", SEED.upper()], "lowercase"),
        (["--client-seed", ""], "client seed is empty"),
        (["--uniform", "0"], "uniform(n)"),
        (["--dice", "0"], "dice count"),
        (["--dice", "2", "--sides", "1"], "sides"),
        (["--shuffle", "deck53"], "unknown items"),
        (["--shuffle", "tiles:6-without:9-9"], "not in tiles"),
        (["--label", ""], "label"),
    ],
)
def test_derive_bad_input_exits_2_with_one_line(change: list[str], needle: str) -> None:
    args = list(BASE)
    if change[0] in ("--server-seed",):
        args[args.index(change[0]) + 1] = change[1]
        args += ["--label", "x", "--dice", "1"]
    elif change[0] == "--client-seed":
        args = BASE[:9] + ["--client-seed", ""] + ["--label", "x", "--dice", "1"]
    elif change[0] == "--label":
        args += ["--label", "", "--dice", "1"]
    else:
        args += ["--label", "x", *change]
    res = run(*args)
    assert res.exit_code == 2, res.output
    assert needle in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert res.stdout == ""


def test_derive_needs_exactly_one_draw() -> None:
    res = run(*BASE, "--label", "x", "--dice", "1", "--uniform", "3")
    assert res.exit_code == 2 and "exactly one" in res.stderr
    res = run(*BASE, "--label", "x")
    assert res.exit_code == 2 and "exactly one" in res.stderr


# -- dependencies ----------------------------------------------------------------------------


def test_verify_cli_never_imports_service() -> None:
    code = (
        "import verify_cli.main, verify_cli.demo, verify_cli.core, sys; "
        "bad = [m for m in sys.modules if m == 'service' or m.startswith('service.')]; "
        "assert not bad, bad"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_unusable_report_shape() -> None:
    rep = verify_document({"protocol": "qahwa-fair/1", "game": "tawla"}, KEYS)
    assert rep["status"] == UNUSABLE and "missing" in rep["reason"]


# -- more of the human form -------------------------------------------------------------------


@pytest.mark.parametrize(
    "game", [g for g in ("iraqi_domino", "mexican_train") if g in games_and_rng()]
)
def test_domino_deal_shows_each_seats_tiles(game: str) -> None:
    doc = any_match(game)
    rep = verify_document(doc, KEYS, draws_limit=1)
    ev = next(e for e in doc["events"] if e.get("label") == "r0/shuffle")
    n = len(doc["seats"])
    h = 7 if game == "iraqi_domino" else (15 if n <= 4 else 12 if n <= 6 else 10)
    lines = rep["draws"][0]["text"].splitlines()
    seat1 = next(ln for ln in lines if ln.strip().startswith("seat 1 "))
    tiles = [
        t.replace("[", "").replace("]", "").replace("|", "-")
        for t in seat1.split(": ", 1)[1].split()
    ]
    assert tiles == ev["result"][h : 2 * h]


def test_tawla_live_entropy_roll_is_shown() -> None:
    from games.transcript import simulate_match

    doc, _ = simulate_match("tawla", {"live_entropy": True}, seed=3, protocol=PROTOCOL)
    rep = verify_document(resign(doc), KEYS, draws_limit=None)
    assert rep["status"] == VERIFIED, rep["failures"]
    rolls = [d for d in rep["draws"] if "/roll/" in str(d["label"])]
    assert rolls and all(" for seat " in d["text"] for d in rolls)
    with_entropy = [d for d in rolls if "|" in str(d["label"])]
    for d in with_entropy:
        assert "live entropy" in d["text"]


def test_draws_option_limits_the_listing(tmp_path: Path, key_file: str) -> None:
    doc = any_match("hokm" if "hokm" in games_and_rng() else "rng")
    path = write(tmp_path / "t.json", doc)
    out = json.loads(run(path, "--key", key_file, "--json", "--draws", "1").stdout)
    assert len(out["results"][0]["draws"]) == 1
    assert out["results"][0]["draws_total"] == sum(
        1 for e in doc["events"] if e["type"] == "chance"
    )
    res = run(path, "--key", key_file, "--draws", "0")
    assert res.exit_code == 0 and "\n  draws" not in res.stdout
    assert "\n  draws (first 1 of" in run(path, "--key", key_file, "--draws", "1").stdout


def test_python_dash_m_runs_the_same_command(tmp_path: Path, key_file: str) -> None:
    path = write(tmp_path / "t.json", any_match("rng"))
    proc = subprocess.run(
        [sys.executable, "-m", "verify_cli", path, "--key", key_file],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "VERIFIED" in proc.stdout


# -- any change is caught, and nothing raises ------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 60) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_mutations_never_verify_and_never_raise(data: st.DataObject) -> None:
    game = data.draw(st.sampled_from(TAMPER_GAMES))
    original = any_match(game)
    doc = copy.deepcopy(original)
    where = data.draw(st.sampled_from(["event", "top", "seat"]))
    value = data.draw(_json_values)
    if where == "event":
        ev = doc["events"][data.draw(st.integers(0, len(doc["events"]) - 1))]
        ev[data.draw(st.sampled_from(sorted(ev) + ["extra"]))] = value
    elif where == "seat":
        seat = doc["seats"][0]
        seat[data.draw(st.sampled_from(sorted(seat)))] = value
    else:
        doc[data.draw(st.sampled_from(sorted(doc)))] = value
    rep = verify_document(doc, KEYS)
    assert rep["status"] in (VERIFIED, FAILED, UNUSABLE)
    if doc != original:
        assert rep["status"] != VERIFIED
