"""The verify page shows every deal dealt, as the ``verify`` CLI prints it (issue 30): for
each card and tile game and each form, qahwa-fair/1 and qahwa-fair/2 alike, the hands the
page shows with the rules replayed are the CLI's, seat by seat, and the whole deal holds the
same cards or tiles. (tests/page/test_verify_page_forms.py holds the page to the engine itself.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from fairness import PROTOCOL
from fairness.protocol import PROTOCOL_V2
from games.transcript import simulate_match
from qahwa_page.pyodide import RUNTIME_DIR, runtime_installed
from tests.page.test_verify_page import Site
from tests.page.test_verify_page_forms import shown
from tests.page.test_verify_page_replay import check
from tests.support.browser import CHROMIUM, launch, open_page
from tests.verify.test_verify_cli_helpers import SIGNER
from verify_cli.core import verify_document

pytestmark = [pytest.mark.browser]

# every card and tile game, each table size (hokm with its default rules: cut)
FORMS: list[tuple[str, dict[str, Any]]] = [
    *(("hokm", {"players": p, "target": 2}) for p in (4, 3, 2)),
    ("qahve", {"target": 60}),
    *(("shelem", {"players": p, "target": 200}) for p in (4, 2)),
    *(("iraqi_domino", {"players": p, "target": 30}) for p in (2, 4)),
    *(("mexican_train", {"players": p, "rounds": 1}) for p in (2, 8)),
]
PROTOCOLS = [PROTOCOL, PROTOCOL_V2]
CASES = [(g, rs, p) for g, rs in FORMS for p in PROTOCOLS]
IDS = [f"{g}-{rs.get('players', 4)}-{'v2' if p == PROTOCOL_V2 else 'v1'}" for g, rs, p in CASES]
DEAL = re.compile(r"^[hr]\d+/shuffle$")

SUIT = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
WHO = re.compile(r"^  (seat (\d+) \([^)]*\)|[a-z ]+?)(?: piles)?(?: \(.*\))?: (.*)$")


def _code(token: str) -> str | None:
    """A card or tile as the CLI prints it, as its code."""
    if token in ("(empty)", "|"):
        return None
    if token == "🃏black":
        return "JB"
    if token == "🃏red":
        return "JR"
    if m := re.fullmatch(r"\[(\d+)\|(\d+)\]", token):
        return f"{m[1]}-{m[2]}"
    rank, suit = token[:-1], token[-1]
    return ("T" if rank == "10" else rank) + SUIT[suit]


def cli_deals(doc: dict[str, Any]) -> dict[int, dict[str, list[str]]]:
    """seq of each deal -> {"seat{s}": sorted hand, "all": every code dealt, sorted}."""
    rep = verify_document(doc, None, draws_limit=None, allow_unsigned=True)
    assert rep["status"] != "failed", rep["failures"]
    out: dict[int, dict[str, list[str]]] = {}
    for d in rep["draws"]:
        if not DEAL.match(str(d["label"]).split("|")[0]):
            continue
        lines = str(d["text"]).splitlines()
        assert len(lines) > 1, f"the CLI shows deal {d['seq']} undealt: {lines}"
        hands: dict[str, list[str]] = {"all": []}
        for line in lines[1:]:
            m = WHO.match(line)
            assert m, line
            codes = [c for t in m[3].split() if (c := _code(t)) is not None]
            if m[2] is not None and "piles" not in line.split(":")[0]:
                hands[f"seat{m[2]}"] = sorted(codes)
            hands["all"] += codes
        hands["all"].sort()
        out[int(d["seq"])] = hands
    return out


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's /usr/bin/chromium")
    if not runtime_installed():
        pytest.skip("the Pyodide runtime is not installed (make pyodide)")
    site = Site(runtime_dir=RUNTIME_DIR)
    try:
        with launch() as browser, open_page(browser, f"{site.url}/verify?lang=en") as pg:
            yield pg, site
    finally:
        site.close()


@pytest.mark.parametrize(("game", "ruleset", "protocol"), CASES, ids=IDS)
def test_the_pages_hands_are_the_clis(
    page: tuple[Any, Site], game: str, ruleset: dict[str, Any], protocol: str
) -> None:
    pg, site = page
    extra: dict[str, Any] = {"signer": SIGNER} if protocol == PROTOCOL_V2 else {}
    doc, _ = simulate_match(game, ruleset, seed=7, protocol=protocol, **extra)
    if protocol == PROTOCOL:
        doc = SIGNER.signed(doc)
    want = cli_deals(doc)
    assert want, "no deal in the match"
    rows = check(pg, site.add(doc))
    assert rows["replay"] == "true", rows
    evs = shown(pg)
    for seq, hands in want.items():
        ev = evs[seq]
        assert ev["deal"] == "hands", (seq, ev["notes"])  # dealt, never "shown as shuffled"
        got = {h["who"]: sorted(h["codes"]) for h in ev["hands"]}
        for who, cards in hands.items():
            if who != "all":
                assert got.get(who) == cards, (seq, who, got.get(who), cards)
        assert sorted(c for h in ev["hands"] for c in h["codes"]) == hands["all"], seq
