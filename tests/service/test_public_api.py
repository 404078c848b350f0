"""The public names of ``fairness`` and ``games``, pinned: adding or removing one is a
deliberate change to this file, and every error is in its documented tree."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import fairness
import fairness.errors
import games
import games.errors
import tlog

FAIRNESS_ALL = {
    "PROTOCOL",
    "DECK52",
    "DECK_QAHVE",
    "ClientSeedError",
    "FairnessError",
    "ItemsError",
    "KeyFileError",
    "LabelError",
    "RangeError",
    "SecretBox",
    "SecretBoxError",
    "SeedError",
    "SignatureError",
    "Signer",
    "Stream",
    "StreamKey",
    "canonical_json",
    "canonical_sort",
    "canonical_ruleset",
    "check_client_seed",
    "check_entropy",
    "check_label",
    "commitment",
    "deck52",
    "deck_qahve",
    "dice",
    "entropy_label",
    "key_id_of",
    "load_master_key",
    "load_public_key",
    "match_key",
    "new_client_seed",
    "new_master_key",
    "new_server_seed",
    "parse_items",
    "parse_server_seed",
    "parse_tile",
    "public_key_b64",
    "restrict",
    "shuffle",
    "tile_code",
    "tiles",
    "uniform",
    "verify_record",
    # qahwa-fair/2 (fairness/protocol.py; verify_bytes in records.py)
    "PROTOCOL_V2",
    "DuplicateKeyError",
    "chain_head",
    "chain_next",
    "chain_start",
    "check_canonical_value",
    "check_roll_value",
    "fresh_label",
    "loads_strict",
    "new_nonce",
    "parse_hex",
    "parse_nonce",
    "roll_chain",
    "roll_chain_tip",
    "roll_step",
    "seat_sig_message",
    "seed_commitment",
    "signed_event_body",
    "verify_bytes",
    # the 2026-12-03 revision: event times (fairness-v2.md §7)
    "UNSIGNED_EVENT_FIELDS",
    "format_time_ms",
    "parse_time_us",
    # the time a signed record names (a key's retirement is checked against it)
    "signed_time",
    # one protocol object per version (fairness/protocol.py), chosen once per match
    "CURRENT",
    "PROTOCOLS",
    "V1",
    "V2",
    # qahwa-fair/3 (sealed deals, docs/spec/fairness-v3.md): K and records as qahwa-fair/2
    "PROTOCOL_V3",
    "V3",
    "FairProtocol",
    # qahwa-fair/3: sealed deals (docs/spec/fairness-v3.md §9a)
    "UnknownProtocolError",
    "protocol_for",
    "signed_protocol",
}

GAMES_ALL = {
    "GAME_IDS",
    "Action",
    "ActionError",
    "Chance",
    "Engine",
    "Event",
    "GameError",
    "IllegalActionError",
    "MalformedActionError",
    "MatchOverError",
    "NotYourTurnError",
    "Outcome",
    "ReplayError",
    "RulesetError",
    "UnknownGameError",
    "available_games",
    "engine_class",
    # the variant of a match: its engine class with its protocol and deal (issue 48)
    "find_engine",
    "replay",
}


@pytest.mark.parametrize(("module", "expected"), [(fairness, FAIRNESS_ALL), (games, GAMES_ALL)])
def test_all_is_pinned(module: object, expected: set[str]) -> None:
    names = module.__all__  # type: ignore[attr-defined]
    assert len(names) == len(set(names)), "duplicate names in __all__"
    assert set(names) == expected


@pytest.mark.parametrize("module", [fairness, games, tlog])
def test_all_names_exist_and_are_public(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        assert not name.startswith("_")
        assert hasattr(module, name), name


@pytest.mark.parametrize("module", [fairness, games, tlog])
def test_public_callables_are_documented(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        obj = getattr(module, name)
        if inspect.isclass(obj) and name not in ("Action", "Event"):
            assert obj.__doc__, f"{name} has no docstring"


def test_star_import_gives_exactly_all() -> None:
    ns: dict[str, object] = {}
    exec("from fairness import *", ns)  # noqa: S102
    assert set(ns) - {"__builtins__"} == FAIRNESS_ALL
    ns = {}
    exec("from games import *", ns)  # noqa: S102
    assert set(ns) - {"__builtins__"} == GAMES_ALL


FAIRNESS_TREE = {
    "FairnessError": ValueError,
    "SeedError": "FairnessError",
    "ClientSeedError": "FairnessError",
    "LabelError": "FairnessError",
    "RangeError": "FairnessError",
    "ItemsError": "FairnessError",
    "SignatureError": "FairnessError",
    "KeyFileError": "SignatureError",
    "SecretBoxError": "FairnessError",
}

GAMES_TREE = {
    "GameError": ValueError,
    "UnknownGameError": "GameError",
    "RulesetError": "GameError",
    "ActionError": "GameError",
    "MalformedActionError": "ActionError",
    "NotYourTurnError": "ActionError",
    "IllegalActionError": "ActionError",
    "MatchOverError": "ActionError",
    "ReplayError": "GameError",
}


@pytest.mark.parametrize(
    ("module", "tree"), [(fairness.errors, FAIRNESS_TREE), (games.errors, GAMES_TREE)]
)
def test_error_trees(module: Any, tree: dict[str, Any]) -> None:
    defined = {
        n
        for n, o in vars(module).items()
        if inspect.isclass(o) and issubclass(o, Exception) and o.__module__ == module.__name__
    }
    assert defined == set(tree), "the errors module defines exactly the documented errors"
    for name, parent in tree.items():
        cls = getattr(module, name)
        base = parent if isinstance(parent, type) else getattr(module, parent)
        assert cls.__bases__ == (base,), f"{name} should derive directly from {base.__name__}"
        # the tree drawn in the module docstring names every class
        assert name in (module.__doc__ or "")
        assert cls.__doc__


def test_errors_reexported_are_the_same_objects() -> None:
    for name in FAIRNESS_TREE:
        assert getattr(fairness, name) is getattr(fairness.errors, name)
    for name in GAMES_TREE:
        assert getattr(games, name) is getattr(games.errors, name)


def test_replay_error_fields() -> None:
    e = games.ReplayError("x", kind="chance", seq=3, expected={"a": 1}, found=None)
    assert (str(e), e.kind, e.seq, e.expected, e.found) == ("x", "chance", 3, {"a": 1}, None)
    e = games.ReplayError("y")
    assert (e.kind, e.seq, e.expected, e.found) == ("event", None, None, None)
    with pytest.raises(ValueError, match="kind"):
        games.ReplayError("z", kind="nonsense")


def test_protocol_and_game_ids() -> None:
    assert fairness.PROTOCOL == "qahwa-fair/1"
    assert games.GAME_IDS == (
        "iraqi_domino",
        "mexican_train",
        "qahve",
        "hokm",
        "shelem",
        "tawla",
        "mahbusa",
        "rng",
    )
    assert len(fairness.DECK52) == len(fairness.DECK_QAHVE) == 52
