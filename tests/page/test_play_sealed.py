"""Sealed tables at /play (issue 47).

Two friends at one sealed hokm table (the issue's "done when"): each in a browser context of
their own, with the seat link the lobby hands out, and two house bots holding their own keys
(the lobby's, as ``qahwa house`` plays them) play a sealed four-player hokm match to its end;
both pages end on who won, the score and "Verified". Neither page ever holds the other person's
cards in the clear before they are played: not in its DOM, its IndexedDB, nor any response the
server sent it."""

from __future__ import annotations

import base64
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.page.test_play_page import (
    ACT,
    RESIGN,
    count_requests,
    downloaded,
    fits_without_json,
    see_the_verdict,
    sized_page,
    touch,
    verify_cli,
)
from tests.support.browser import open_page

#: every card of the 52-card deck, as the log and the page write them ("TC", "AS"), and the
#: rules' canonical order of it (fairness-v1 §4)
CANONICAL = [r + s for s in "CDHS" for r in "23456789TJQKA"]
DECK = set(CANONICAL)

#: every string held in the page's IndexedDB (every database, every store), as JSON
READ_IDB = """async () => {
  const out = [];
  for (const info of await indexedDB.databases()) {
    const db = await new Promise((ok, no) => {
      const r = indexedDB.open(info.name); r.onsuccess = () => ok(r.result);
      r.onerror = () => no(r.error);
    });
    for (const name of db.objectStoreNames) {
      const st = db.transaction(name).objectStore(name);
      const all = await new Promise((ok) => { const r = st.getAll(); r.onsuccess = () => ok(r.result); });
      out.push(JSON.stringify(all));
    }
    db.close();
  }
  return out;
}"""

#: the cards drawn face up anywhere on the page (the person's hand, a trick, the stock's top)
DOM_CARDS = """() => [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card)"""


def public_part(parent: dict[str, Any], key: str) -> bool:
    """Whether ``parent[key]`` is a list of cards that is public by the rules, not a hand:
    the first hakem's face-up deal (the ``hakem`` chance event's result, and the view's
    ``first_hakem_deal``, its cards up to the first ace) and a sealed deal's starting deck
    (``sealed.items``, the rules' canonical order: every masked deck starts from it; a brief
    view's sealed block, ``sealed=brief``, has it without the deck)."""
    if key == "first_hakem_deal":
        return True
    if key == "result" and parent.get("type") == "chance" and parent.get("label") == "hakem":
        return True
    deal = "deck" in parent or parent.get("protocol") == "qahwa-fair/3"
    return key == "items" and deal and parent.get("items") == CANONICAL


def cards_in(doc: Any) -> set[str]:
    """The cards a JSON document names, but for its public parts (:func:`public_part`): every
    string of it that is a card's code, or a JSON text (the seat's IndexedDB keeps JSON in
    strings) that names one."""
    found: set[str] = set()
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if x in DECK:
                found.add(x)
            elif x[:1] in "[{":
                try:
                    stack.append(json.loads(x))
                except ValueError:
                    pass
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(v for k, v in x.items() if not public_part(x, k))
        elif isinstance(x, list):
            stack.extend(x)
    return found


def plays_in(doc: Any) -> set[str]:
    """The cards a JSON document plays: ``{"type": "play", "card": C}`` anywhere in it."""
    found: set[str] = set()
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("type") == "play" and isinstance(x.get("card"), str):
                found.add(x["card"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return found


@dataclass
class Person:
    """One person's page and what it held, each sighting numbered on one clock shared by both
    pages (playwright hands the test every page's events in the order they happened)."""

    name: str
    pg: Any
    #: (tick, where, the cards held there): what the page held in the clear, and when
    held: list[tuple[int, str, set[str]]] = field(default_factory=list)
    #: the event streams the page read: request id -> the chunks of its body, as they came
    streams: dict[str, list[bytes]] = field(default_factory=dict)
    #: the cards seen in the person's own hand, and those it played
    hand: set[str] = field(default_factory=set)
    #: card -> the tick this person's page sent its play
    played: dict[str, int] = field(default_factory=dict)


def watch(p: Person, tick: Iterator[int]) -> None:
    """Keep every JSON response the page is sent, its event streams, and every play it
    sends."""

    def finished(q: Any) -> None:
        at = next(tick)
        r = q.response()
        if r is not None and "json" in r.headers.get("content-type", ""):
            p.held.append((at, f"response {q.method} {q.url}", cards_in(r.json())))

    # the event stream's bytes as they arrive (a stream's body is not kept by the browser):
    # Chromium's devtools protocol hands each chunk of a streamed resource over
    cdp = p.pg.context.new_cdp_session(p.pg)
    chunks = p.streams

    def received(e: dict[str, Any]) -> None:
        if "event-stream" not in e["response"].get("mimeType", ""):
            return
        chunks[e["requestId"]] = []
        try:
            got = cdp.send("Network.streamResourceContent", {"requestId": e["requestId"]})
            chunks[e["requestId"]].append(base64.b64decode(got["bufferedData"]))
        except Exception:  # the stream ended before it was asked for: its whole body
            got = cdp.send("Network.getResponseBody", {"requestId": e["requestId"]})
            body = got["body"]
            chunks[e["requestId"]].append(
                base64.b64decode(body) if got["base64Encoded"] else body.encode()
            )

    def data(e: dict[str, Any]) -> None:
        if e["requestId"] in chunks and e.get("data"):
            chunks[e["requestId"]].append(base64.b64decode(e["data"]))

    cdp.on("Network.responseReceived", received)
    cdp.on("Network.dataReceived", data)
    cdp.send("Network.enable")

    def request(q: Any) -> None:
        at = next(tick)
        if q.method == "POST" and urlsplit(q.url).path.endswith("/actions"):
            action = json.loads(q.post_data or "{}").get("action", {})
            if action.get("type") == "play" and isinstance(action.get("card"), str):
                p.played.setdefault(action["card"], at)
                p.hand.add(action["card"])  # (a hand drawn and played between two looks)

    p.pg.on("requestfinished", finished)
    p.pg.on("request", request)


def look(p: Person, tick: Iterator[int]) -> None:
    """What the page draws face up and keeps in IndexedDB, now."""
    drawn = p.pg.evaluate(DOM_CARDS)
    p.held.append((next(tick), "dom", set(drawn)))
    hand = p.pg.eval_on_selector_all(
        '[data-testid="hand"] .card-btn', "els => els.map(e => e.dataset.card)"
    )
    p.hand.update(hand)
    # held as a person holds a hand: by suit, high to low (not in the deal's order)
    order = [("SHCD".index(c[-1]), "AKQJT98765432".index(c[:-1])) for c in hand]
    assert order == sorted(order), hand
    # the seats' counts in words, singular at one ("1 trick", not "1 tricks")
    counts = p.pg.inner_text(".seats") if p.pg.locator(".seats").count() else ""
    assert not re.search(r"\b1 (tricks|cards|tiles)\b", counts), counts
    p.held.append((next(tick), "indexeddb", cards_in(p.pg.evaluate(READ_IDB))))


def leaks(p: Person, other: Person) -> list[str]:
    """The other person's cards this page held before the other played them."""
    out = []
    for at, where, cards in p.held:
        for c in sorted(cards & other.hand):
            if at < other.played.get(c, 1 << 62):
                out.append(f"{p.name}'s {where} held {other.name}'s {c} before it was played")
    return out


def streamed(p: Person) -> list[list[Any]]:
    """The messages of each event stream the page read, in the order they came."""
    bodies = (b"".join(chunks).decode() for chunks in p.streams.values())
    return [
        [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
        for body in bodies
    ]


def stream_leaks(p: Person, other: Person) -> list[str]:
    """The other person's cards that an event streamed to this page names before the event
    that plays them: each event may name only cards played by it or by an event before it."""
    out = []
    for events in streamed(p):
        played: set[str] = set()
        for event in events:
            played |= plays_in(event)
            early = (cards_in(event) & other.hand) - played
            out += [f"{p.name}'s stream named {other.name}'s {c} unplayed" for c in sorted(early)]
    return out


@pytest.mark.slow
@pytest.mark.browser
def test_two_friends_play_sealed_hokm_with_two_house_bots_to_verified(
    browser: Any, server: Any, tmp_path: Path
) -> None:
    rules = quote(json.dumps({"target": 1}))
    url = f"{server.url}/play?game=hokm&sealed=1&friend=1&ruleset={rules}"
    tick = itertools.count()
    with open_page(browser, url) as first:
        layla = Person("Layla", first)
        watch(layla, tick)
        link = first.locator('[data-testid="seat-link"]')
        link.wait_for(timeout=60_000)
        seat_link = str(link.get_attribute("href"))
        assert "seat=1" in seat_link and "token=" in seat_link
        with open_page(browser, seat_link) as second:
            omar = Person("Omar", second)
            watch(omar, tick)
            people = (layla, omar)
            for i in range(6000):
                if all(p.pg.locator("#verdict").count() for p in people):
                    break
                touched = False
                for p in people:
                    if p.pg.locator("#verdict").count():
                        continue
                    look(p, tick)
                    if i % 20 == 0:  # 1,280 px wide: no sideways scroll, no JSON
                        fits_without_json(p.pg, f"{p.name}'s table")
                    touched = touch(p.pg) or touched
                    assert p.pg.get_attribute("#status", "data-error") is None, p.pg.text_content(
                        "#status"
                    )
                if not touched:
                    first.wait_for_timeout(100)
            else:
                raise AssertionError("the match did not end")
            for p in people:
                assert p.pg.get_attribute("#deal", "data-deal") == "sealed"
                # the lobby seats a sealed table only where it protects: two people
                limits = p.pg.eval_on_selector_all(
                    "#limits li", "els => els.map(e => e.dataset.limit)"
                )
                assert "one_person_full_deal" not in limits, limits
                see_the_verdict(p.pg)
                look(p, tick)
                fits_without_json(p.pg, f"{p.name}'s end")
                final = p.pg.text_content("#result .final") or ""
                assert re.fullmatch(r"Final score: [^:]+: \d+ · [^:]+: \d+", final), final
            transcript = downloaded(second, "transcript", tmp_path)
            seat_file = downloaded(second, "seat", tmp_path)
    # each saw a hand of its own (13 cards), the two hands apart
    assert len(layla.hand) == 13 and len(omar.hand) == 13, (layla.hand, omar.hand)
    assert not layla.hand & omar.hand
    # what each page held, against the other's cards and when they were played
    for p in people:  # the streams were read, and carried the plays
        assert any(plays_in(e) for events in streamed(p) for e in events), p.name
    problems = leaks(layla, omar) + leaks(omar, layla)
    problems += stream_leaks(layla, omar) + stream_leaks(omar, layla)
    assert problems == [], problems
    # and the played cards did reach the other page (the check looked where they show)
    shown = set().union(*(c for _, _, c in layla.held))
    assert omar.played and set(omar.played) <= shown
    doc = json.loads(transcript.read_text("utf-8"))
    assert doc["protocol"] == "qahwa-fair/3"
    res = verify_cli(str(transcript), "--server", server.url, "--seat", str(seat_file))
    assert res.exit_code == 0, res.output


#: every card's rank and suit drawn inside the card (a rank anchored at its start runs out of
#: the card to the left in a right-to-left page)
RANKS_INSIDE = """() => [...document.querySelectorAll('svg.card')].flatMap((c) => {
  const box = c.getBoundingClientRect();
  return [...c.querySelectorAll('text, path')].filter((x) => {
    const r = x.getBoundingClientRect();
    return r.left < box.left - 1 || r.right > box.right + 1;
  }).map(() => c.dataset.card);
})"""


@pytest.mark.slow
@pytest.mark.browser
def test_a_sealed_hokm_table_for_two_on_a_phone_in_persian_then_resigned(
    browser: Any, server: Any
) -> None:
    """The lobby's sealed hokm for two (a stock left undealt: it protects one person) at 390 px
    in Persian: the cards are drawn with their ranks inside them, the seats are named in
    Persian, the moves are cards and words, with no sideways scroll and no JSON; a game with no
    resignation of its own is resigned from the table, after a confirmation, and the end says
    who won, the score and the verdict, in Persian."""
    rules = quote(json.dumps({"players": 2, "target": 1}))
    url = f"{server.url}/play?game=hokm&sealed=1&lang=fa&ruleset={rules}"
    with sized_page(browser, url, 390) as pg:
        posts = count_requests(pg, "/resign")
        pg.wait_for_selector('[data-testid="hand"] svg.card', timeout=120_000)
        assert pg.get_attribute("html", "dir") == "rtl"
        assert pg.get_attribute("#deal", "data-deal") == "sealed"
        assert pg.text_content('.who[data-seat="1"] strong') == "خانه ۱"
        moves = 0
        for _ in range(3000):
            if moves >= 6:
                break
            if pg.locator(ACT).count():
                fits_without_json(pg, f"sealed hokm before move {moves}")
                assert pg.evaluate(RANKS_INSIDE) == []
                labels = pg.locator("button").all_inner_texts()
                assert not [x for x in labels if re.search(r"\w+_\w+|=|[{}]", x)], labels
                # the seats' names in Persian; no middle dot, which reads as a Persian zero
                assert "House" not in pg.inner_text("#table")
                assert "·" not in pg.inner_text("#table")
                touch(pg)
                moves += 1
            else:
                pg.wait_for_timeout(100)
            assert not pg.locator("#verdict").count(), "the match ended before the resignation"
        assert moves >= 6
        # resigning asks first: one click sends nothing, "keep playing" closes the question
        resign = pg.locator(RESIGN)
        resign.wait_for(timeout=30_000)
        resign.click()
        confirm = pg.locator('[data-testid="resign-confirm"]')
        assert confirm.is_visible()
        yes = confirm.locator('[data-testid="resign-yes"][data-match="1"]')
        assert yes.text_content() == "کناره می‌گیرید و مسابقه را می‌بازید"
        pg.wait_for_timeout(1_000)
        assert posts == []
        confirm.locator('[data-testid="resign-no"]').click()
        assert not confirm.is_visible()
        pg.locator(RESIGN).click()
        pg.locator('[data-testid="resign-yes"][data-match="1"]').click()
        pg.locator("#verdict").wait_for(timeout=120_000)
        pg.wait_for_function(
            "() => document.getElementById('verdict').dataset.verdict !== 'pending'",
            timeout=180_000,
        )
        assert len(posts) == 1, posts
        assert pg.get_attribute("#verdict", "data-verdict") == "pass"
        assert (pg.text_content("#verdict") or "").startswith("در مرورگر شما تأیید شد")
        assert pg.get_attribute("#result", "data-winners") == "1"
        assert pg.text_content("#result h2") == "خانه ۱ برد. شما باختید."
        final = pg.text_content("#result .final") or ""
        assert re.fullmatch(r"امتیاز نهایی: شما: [۰-۹]+، خانه ۱: [۰-۹]+", final), final
        fits_without_json(pg, "the end of a sealed table, in Persian, on a phone")
        assert pg.evaluate(RANKS_INSIDE) == []
        assert pg.js_errors == []
