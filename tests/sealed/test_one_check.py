"""The sealed deal is checked by one implementation in Python (issue 46): the deal machine
(games/sealed_hand.py's ``Deal``). Its record check, ``verify_hand``, feeds a hand's §9 entry
into a ``Deal``; ``sealed`` keeps the primitives only.

- Every call, outside the tests, of a key, shuffle or share proof's check is one of a short,
  named list (AST): the deal machine's checks, the CPython backend's bridge to the
  primitives, the §7 primitive ``check_opening``, and the benchmark's timing of the bare
  shuffle proof.
- A step the live machine refuses is refused in a record with the same words, and what a
  record check learns is what the live machine learnt playing the hand."""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import pytest

from games.errors import ActionError
from games.sealed_backend import SealedStepError
from games.sealed_hand import Deal, verify_hand
from tests.sealed.test_sealed_hand import (
    ENTRY,
    HOUSE,
    ITEMS,
    LEARNT,
    MATCH,
    SEATS,
    _flip_b64,
    _flip_hex,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "fairness",
    "tlog",
    "games",
    "service",
    "verify_cli",
    "qahwa_client",
    "qahwa_page",
    "qahwa_wire",
    "sealed",
    "bench",
)
CHECKS = {"verify_key", "verify_shuffle", "verify_share", "verify_shares", "verify_hand"}

#: (file, the function that makes the call, the check called)
EXPECTED = {
    # the deal machine: the one implementation
    ("games/sealed_hand.py", "Deal.add_key", "verify_key"),
    ("games/sealed_hand.py", "Deal.add_shuffle", "verify_shuffle"),
    ("games/sealed_hand.py", "Deal.check_share", "verify_share"),
    ("games/sealed_hand.py", "Deal.check_shares", "verify_shares"),
    # the CPython backend: the bridge from the machine to the primitives
    ("games/sealed_backend.py", "RbclBackend.verify_key", "verify_key"),
    ("games/sealed_backend.py", "RbclBackend.verify_shuffle", "verify_shuffle"),
    ("games/sealed_backend.py", "RbclBackend.verify_share", "verify_share"),
    ("games/sealed_backend.py", "RbclBackend.verify_shares", "verify_shares"),
    # a share step's shares at once, each alone where that fails (to name it); the verify
    # page's backend checks each share of a step with its own JavaScript check
    ("sealed/shares.py", "verify_shares", "verify_share"),
    ("verify_cli/sealed_js.py", "JsBackend.verify_shares", "verify_share"),
    # §7's primitive: every seat's share of one item, and what they open it to
    ("sealed/shares.py", "check_opening", "verify_share"),
    # the benchmark of the bare proof, and of the record check
    ("bench/bench_sealed.py", "measure", "verify_shuffle"),
    ("bench/bench_sealed.py", "whole_hand.check", "verify_hand"),
    ("bench/bench_sealed_service.py", "verify_cpu", "verify_hand"),
}


def calls_of_checks() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()

    def walk(node: ast.AST, rel: str, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                walk(child, rel, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                f = child.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in CHECKS:
                    found.add((rel, ".".join(scope), name))
            walk(child, rel, scope)

    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "pyodide" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            walk(ast.parse(path.read_text(encoding="utf-8")), rel, [])
    return found


def test_only_the_deal_machine_checks_a_deal() -> None:
    assert calls_of_checks() == EXPECTED
    assert not (ROOT / "sealed" / "hand.py").exists()


def _live(entry: dict[str, Any]) -> Deal:
    """The record's keys and shuffles played into a deal machine as a seat's steps."""
    deal = Deal.start(MATCH, entry["hand"], entry["game"], entry["items"], SEATS, HOUSE)
    for k in entry["keys"]:
        deal.step(k["seat"], {"step": "key", "key": k["key"], "proof": k["proof"]})
    for sh in entry["shuffles"]:
        deal.step(sh["seat"], {"step": "shuffle", "deck": sh["deck"], "proof": sh["proof"]})
    return deal


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e["keys"][1].update(proof=_flip_hex(e["keys"][1]["proof"])),
        lambda e: e["shuffles"][2].update(proof=_flip_b64(e["shuffles"][2]["proof"], 77)),
        lambda e: e["shuffles"][0].update(deck=_flip_b64(e["shuffles"][0]["deck"], 300)),
    ],
    ids=["key proof", "shuffle proof", "shuffled deck"],
)
def test_a_record_is_refused_in_the_live_machine_s_words(change: Any) -> None:
    e = copy.deepcopy(ENTRY)
    change(e)
    with pytest.raises(ActionError) as live:
        _live(e)
    with pytest.raises(SealedStepError) as record:
        verify_hand(MATCH, e, SEATS, HOUSE)
    assert str(record.value) == str(live.value)


def test_a_record_check_keeps_what_the_machine_keeps() -> None:
    """The record check's deal is the live machine's: the same hand key and final deck."""
    deal = _live(ENTRY)
    v = verify_hand(MATCH, ENTRY, SEATS, HOUSE)
    assert v.hand_key == deal.hand_key and v.deck == deal.deck
    assert v.order == tuple(LEARNT) and sorted(LEARNT) == sorted(ITEMS)


def test_seats_must_be_given() -> None:
    with pytest.raises(ValueError, match="at least one seat"):
        verify_hand(MATCH, ENTRY, 0, ())
