"""The verify page names who got which cards and tiles, for every form the engines play.

For a real match of each form (played here by the engines with seeded random bots; hokm's
cutters cut or tap), the hands the page shows for each deal — ``.hand[data-who]`` with the
codes of its cards or tiles — are compared with the hands the engine really dealt: its own
state at the start of each hand, taken from ``games.replay.replay(on_event=…)``, never from a
second copy of the deal rules. Dice games (tawla, mahbusa): whose die is whose in the
opening, who starts, and whose roll each roll is, against the engine's turn.

Two pages: one on a server without the Pyodide runtime (the first hand is named by seat,
from the hakem draw or the dealer draw; later hands by role, which the test turns into
seats with the engine's own hakem / dealer of that hand), one with it (every hand by seat,
from the replayed rules). A deal the page cannot know (nothing dealt yet, a ruleset or deck
it does not know) is shown as shuffled, naming nobody.

Skips only without Debian's chromium or (the replay page) without the runtime; under
``CI=true`` a skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from fairness import PROTOCOL, deck52
from games.base import Engine, Event
from games.hokm import HokmEngine
from games.registry import find_engine
from games.replay import replay
from games.transcript import simulate_match, transcript_key
from qahwa_page.pyodide import RUNTIME_DIR, runtime_installed
from tests.page.test_verify_page import SIGNER, Site, built
from tests.page.test_verify_page_replay import check
from tests.support.browser import open_page

pytestmark = [pytest.mark.browser]

# Every form the engines offer, with a target that gives a few hands. hokm "cut": the
# cutter cuts or taps (_cut_or_tap); "tap": the engines' bots, which tap.
FORMS: list[tuple[str, dict[str, Any], str]] = [
    *(
        ("hokm", {"players": p, "cut": c, "target": 3}, how)
        for p in (4, 3, 2)
        for c, how in ((True, "cut"), (True, "tap"), (False, "plain"))
    ),
    ("qahve", {"target": 100}, "plain"),
    ("shelem", {"players": 4, "target": 300}, "plain"),
    ("shelem", {"players": 2, "target": 300}, "plain"),
    *(("iraqi_domino", {"players": p, "target": 60}, "plain") for p in (2, 3, 4)),
    *(("mexican_train", {"players": p, "rounds": 2}, "plain") for p in range(2, 9)),
    ("tawla", {"match_length": 3}, "plain"),
    ("mahbusa", {"match_length": 3}, "plain"),
]
FORM_IDS = [f"{g}-{'-'.join(f'{k}{v}' for k, v in rs.items())}-{how}" for g, rs, how in FORMS]
#: the seat each game's deal starts from, by role (the page's "hakem+k" / "dealer+k")
ANCHOR = {"hokm": "hakem", "qahve": "dealer", "shelem": "dealer"}
ROLE = re.compile(r"(hakem|dealer)\+(\d+)(/pile\d+)?")
DEAL = re.compile(r"[hr](\d+)/shuffle")


def _require(ok: bool, why: str) -> None:
    if not ok:
        pytest.skip(why)  # a failure under CI=true (tests/conftest.py)


# ---------------------------------------------------------------------------------------
# The matches, and what the engine really dealt.
# ---------------------------------------------------------------------------------------
def _cut_or_tap(self: HokmEngine, seat: int) -> list[dict[str, Any]]:
    """A cutter who cuts anywhere in even hands and taps in odd ones."""
    legal = self.legal_actions(seat)
    if self.phase == "cut" and legal:
        return legal[1:] if self.hand_number % 2 == 0 else legal[:1]
    return legal


_MATCHES: dict[str, dict[str, Any]] = {}


def match(i: int) -> dict[str, Any]:
    """The signed transcript of form ``i`` (played once per session)."""
    game, rs, how = FORMS[i]
    mid = f"form-{FORM_IDS[i]}"
    if mid not in _MATCHES:
        with pytest.MonkeyPatch.context() as mp:
            if how == "cut":
                mp.setattr(HokmEngine, "bot_actions", _cut_or_tap)
            doc, _ = simulate_match(game, rs, seed=i, match_id=mid, protocol=PROTOCOL)
        _MATCHES[mid] = SIGNER.signed(doc)
    return _MATCHES[mid]


@dataclass
class Dealt:
    """One deal as the engine made it: who holds what (``seat{s}``, ``stock``, ``kitty``,
    ``pile``, ``boneyard``, ``seat{s}/pile{i}``) and the hakem / dealer then."""

    seq: int
    number: int
    anchor: int | None
    who: dict[str, list[str]]
    cut: int | None = None
    tapped: bool = False


@dataclass
class Truth:
    n: int
    deals: list[Dealt] = field(default_factory=list)
    first_hakem: int | None = None
    hakem_deal: list[str] = field(default_factory=list)
    openings: dict[int, int | None] = field(default_factory=dict)  # seq -> the starter
    rollers: dict[int, int] = field(default_factory=dict)  # seq of a roll -> whose it is


def _dealt(game: str, e: Any, seq: int, number: int) -> Dealt | None:
    """The engine's hands right after it dealt (None while it waits for hokm's cutter)."""
    n = e.n_seats
    if game == "hokm":
        if e.phase != "trump":
            return None
        who = {f"seat{s}": e.hands[s] + e.rest[s] for s in range(n)}
        who["stock"] = list(e.stock)
        return Dealt(seq, number, e.hakem, _held(who), e.cut_k, e.tapped)
    who = {f"seat{s}": e.hands[s] for s in range(n)}
    if game == "shelem":
        who["kitty"] = e.kitty
        for s in range(n):
            for i, pile in enumerate(e.piles[s]):
                who[f"seat{s}/pile{i + 1}"] = pile
    elif game == "iraqi_domino":
        who["pile"] = e.pile
    elif game == "mexican_train":
        who["boneyard"] = e.boneyard
    anchor = e.dealer if game in ANCHOR else None
    return Dealt(seq, number, anchor, _held(who))


def _held(who: dict[str, list[str]]) -> dict[str, list[str]]:
    """Copies (the engine plays on with its lists), without the empty ones (a pile all dealt:
    the page shows no empty group)."""
    return {k: list(v) for k, v in who.items() if v}


def truth(doc: dict[str, Any]) -> Truth:
    game = doc["game"]
    out = Truth(n=len(doc["seats"]))
    pending: tuple[int, int] | None = None  # a deal not dealt yet (hokm waits for the cut)
    before: int | None = None  # the engine's turn before the last action
    now: int | None = None  # the engine's turn as the last event left it

    def seen(ev: Event, e: Engine) -> None:
        nonlocal pending, before, now
        eng: Any = e
        label = str(ev.get("label", ""))
        if ev["type"] == "action":
            before = now
        if ev["type"] == "chance" and label == "hakem":
            out.first_hakem, out.hakem_deal = eng.hakem, list(eng.first_hakem_deal)
        if ev["type"] == "chance" and (m := DEAL.fullmatch(label)):
            pending = (ev["seq"], int(m[1]))
        if pending is not None and (d := _dealt(game, eng, *pending)) is not None:
            out.deals.append(d)
            pending = None
        if ev["type"] == "chance" and (m := re.fullmatch(r"g\d+/opening/(\d+)", label)):
            decisive = int(m[1]) == eng.opening["attempts"] - 1
            out.openings[ev["seq"]] = eng.turn if decisive else None
        if ev["type"] == "chance" and re.fullmatch(r"g\d+/roll/\d+(\|.*)?", label):
            assert before is not None
            out.rollers[ev["seq"]] = before  # the seat whose roll action drew it
        now = eng.turn

    cls = find_engine(game, doc["ruleset"], protocol=doc["protocol"])
    replay(cls, doc["ruleset"], transcript_key(doc), doc["events"], on_event=seen)
    return out


# ---------------------------------------------------------------------------------------
# What the page shows.
# ---------------------------------------------------------------------------------------
SHOWN = """() => Array.from(document.querySelectorAll('li.ev')).map(li => ({
  seq: Number(li.dataset.seq), label: li.dataset.label, deal: li.dataset.deal || null,
  notes: Array.from(li.querySelectorAll('p.lbl')).map(p => p.textContent),
  hands: Array.from(li.querySelectorAll('.hand')).map(h => ({
    who: h.dataset.who || null, name: h.querySelector('.who').textContent,
    codes: Array.from(h.querySelectorAll('[data-code]')).map(c => c.dataset.code),
    ace: Array.from(h.querySelectorAll('.card.hl')).map(c => c.dataset.code)})),
  plain: li.querySelectorAll(':scope > div > .row [data-code]').length,
  dice: Array.from(li.querySelectorAll('.seatdie')).map(s => [s.dataset.who,
    Number(s.querySelector('.die').dataset.value)]),
  starts: li.querySelector('[data-starts]') ? li.querySelector('[data-starts]').dataset.starts : null,
  roller: li.querySelector('.row[data-who]') ? li.querySelector('.row[data-who]').dataset.who : null
}))"""


def shown(page: Any) -> dict[int, dict[str, Any]]:
    return {int(x["seq"]): x for x in page.evaluate(SHOWN)}


def as_seats(who: str, anchor: int | None, n: int) -> str:
    """The page's recipient with a role ("hakem+1", "dealer+2/pile1") made a seat with the
    engine's hakem / dealer of that hand."""
    m = ROLE.fullmatch(who)
    if not m:
        return who
    assert anchor is not None, who
    return f"seat{(anchor + int(m[2])) % n}{m[3] or ''}"


def compare_deal(game: str, d: Dealt, ev: dict[str, Any], n: int, *, by_seat: bool) -> None:
    """The page's hands for one deal are the engine's: every recipient, every card."""
    assert ev["deal"] == "hands", (d.seq, ev["notes"])
    whos = [h["who"] for h in ev["hands"]]
    roles = [w for w in whos if ROLE.fullmatch(w)]
    if by_seat or game not in ANCHOR:
        assert roles == [], (d.seq, whos)
    else:  # a later hand without the replay: by role, the role of this game
        assert roles and all(w.startswith(ANCHOR[game] + "+") for w in roles), (d.seq, whos)
        assert not any(re.fullmatch(r"seat\d+", w) for w in whos), (d.seq, whos)
    got = {as_seats(h["who"], d.anchor, n): h["codes"] for h in ev["hands"]}
    assert set(got) == set(d.who), (d.seq, sorted(got), sorted(d.who))
    for who, cards in d.who.items():
        if re.fullmatch(r"seat\d+", who):  # a hand, sorted for reading
            assert sorted(got[who]) == sorted(cards), (d.seq, who)
        else:  # stock, kitty, piles: in dealt order
            assert got[who] == cards, (d.seq, who)
    if by_seat and game in ANCHOR:  # the hakem / dealer is named as such
        role = "(hakem)" if game == "hokm" else "(dealer)"
        names = {h["who"]: h["name"] for h in ev["hands"]}
        assert names[f"seat{d.anchor}"].endswith(role), (d.seq, names)
    if game == "hokm" and d.cut is not None:
        assert f"cut at {d.cut}" in ev["notes"][0], (d.seq, ev["notes"])
    elif game == "hokm" and d.tapped:
        assert "tapped" in ev["notes"][0], (d.seq, ev["notes"])


def compare_all(doc: dict[str, Any], page: Any, *, replayed: bool) -> Truth:
    game, real = doc["game"], truth(doc)
    n = real.n
    evs = shown(page)
    for d in real.deals:
        compare_deal(game, d, evs[d.seq], n, by_seat=replayed or d.number == 0)
    if game == "hokm":
        ev = evs[0]
        assert ev["deal"] == "hakem"
        holding = [h["who"] for h in ev["hands"] if h["ace"]]
        assert holding == [f"seat{real.first_hakem}"], ev["hands"]
        assert sorted(c for h in ev["hands"] for c in h["codes"]) == sorted(real.hakem_deal)
        assert all(h["who"] == f"seat{s}" for s, h in enumerate(ev["hands"]))
        assert len(ev["hands"]) == n
    for seq, starter in real.openings.items():
        dice = doc["events"][seq]["result"]
        assert evs[seq]["dice"] == [["seat0", dice[0]], ["seat1", dice[1]]]
        assert evs[seq]["starts"] == ("" if starter is None else f"seat{starter}"), seq
    for seq, roller in real.rollers.items():
        assert evs[seq]["roller"] == f"seat{roller}", seq
    return real


# ---------------------------------------------------------------------------------------
# Browser plumbing: one warm page per server.
# ---------------------------------------------------------------------------------------
def _page(browser: Any, site: Site) -> Iterator[Any]:
    try:
        with open_page(browser, f"{site.url}/verify?lang=en") as pg:
            pg.site = site
            yield pg
    finally:
        site.close()


@pytest.fixture(scope="module")
def plain_page(browser: Any) -> Iterator[Any]:
    """A server without the Pyodide runtime: the page does not replay the rules."""
    yield from _page(browser, Site())


@pytest.fixture(scope="module")
def replay_page(browser: Any) -> Iterator[Any]:
    _require(runtime_installed(), "the Pyodide runtime is not installed (make pyodide)")
    yield from _page(browser, Site(runtime_dir=RUNTIME_DIR))


def show(page: Any, doc: dict[str, Any]) -> dict[str, str]:
    return check(page, page.site.add(doc))


# ---------------------------------------------------------------------------------------
# The tests.
# ---------------------------------------------------------------------------------------
def test_the_matches_exercise_every_deal() -> None:
    """What the page tests below rely on: several deals per card or domino form, hokm's
    cuts and taps both, and a hakem / dealer that changes within some match of each game
    (else a page naming every hand after the first hakem would pass)."""
    changed: set[str] = set()
    for i, (game, _, how) in enumerate(FORMS):
        real = truth(match(i))
        if game in ("tawla", "mahbusa"):
            assert real.openings and real.rollers and not real.deals, FORM_IDS[i]
            continue
        assert len(real.deals) >= 2, FORM_IDS[i]
        if len({d.anchor for d in real.deals}) > 1:
            changed.add(game)
        if how == "cut":
            assert any(d.cut for d in real.deals) and any(d.tapped for d in real.deals), FORM_IDS[i]
        if how == "tap":
            assert all(d.tapped for d in real.deals)
    assert changed == set(ANCHOR)


@pytest.mark.parametrize("i", range(len(FORMS)), ids=FORM_IDS)
def test_without_the_replay_the_first_hand_by_seat_later_ones_by_role(
    plain_page: Any, i: int
) -> None:
    doc = match(i)
    rows = show(plain_page, doc)
    assert rows["chance"] == rows["signature"] == "true" and rows["replay"] == "unknown"
    compare_all(doc, plain_page, replayed=False)


@pytest.mark.parametrize("i", range(len(FORMS)), ids=FORM_IDS)
def test_with_the_replay_every_hand_by_seat(replay_page: Any, i: int) -> None:
    doc = match(i)
    rows = show(replay_page, doc)
    assert rows["replay"] == rows["result"] == rows["agree"] == "true", rows
    compare_all(doc, replay_page, replayed=True)


@pytest.mark.parametrize("players", [4, 3, 2])
def test_a_hokm_hand_ended_before_the_cut_is_not_dealt(
    plain_page: Any, replay_page: Any, players: int
) -> None:
    # seat 0 resigns at once: the first hand's deck was shuffled, but the cutter never
    # answered, so nobody holds a card of it
    doc, engine = simulate_match(
        "hokm",
        {"players": players},
        seed=3,
        resign_at=0,
        match_id=f"resigned-{players}",
        protocol=PROTOCOL,
    )
    doc = SIGNER.signed(doc)
    assert isinstance(engine, HokmEngine) and engine.outcome is not None
    assert engine.hands == [[] for _ in range(players)]
    shuffle = next(e for e in doc["events"] if e.get("label") == "h0/shuffle")
    for page, replayed in ((plain_page, "unknown"), (replay_page, "true")):
        assert show(page, doc)["replay"] == replayed
        ev = shown(page)[shuffle["seq"]]
        assert ev["deal"] == "plain" and ev["hands"] == [], ev
        assert ev["plain"] == len(shuffle["result"])
        assert any("not dealt" in note for note in ev["notes"])


@pytest.mark.parametrize(
    ("ruleset", "n_seats", "deck"),
    [
        ({"players": 5, "cut": False}, 5, deck52()),  # no such table
        ({"players": 3, "cut": False}, 4, deck52()),  # seats ≠ players
        ({"players": 3, "cut": False}, 3, deck52()),  # 2C is not dealt to 3
        ({"players": 4, "cut": "yes"}, 4, deck52()),  # not a ruleset value
    ],
    ids=["five", "seats", "deck", "cut"],
)
def test_a_deal_the_page_does_not_know_names_nobody(
    plain_page: Any, ruleset: dict[str, Any], n_seats: int, deck: list[str]
) -> None:
    doc = built(
        "hokm",
        ruleset,
        [("hakem", "shuffle", deck), ("h0/shuffle", "shuffle", deck)],
        n_seats=n_seats,
        match_id=f"unknown-{len(plain_page.site.transcripts)}",
    )
    rows = show(plain_page, doc)
    assert rows["chance"] == "true"  # the draws are genuine; only the form is unknown
    for ev in shown(plain_page).values():
        assert ev["deal"] == "plain" and ev["hands"] == [], ev
        assert ev["plain"] == len(deck)
        assert any("not a deal this page knows" in note for note in ev["notes"])
