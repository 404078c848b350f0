"""The web table at /play (issues 32 and 47): a person plays whole matches in Chromium by
touching the things themselves — a card, a checker and the point it goes to, a tile and the end
it goes on — or a move said in words, against house bots in the server's process, and sees who
won and the verify page's verdict computed in the browser; the table fits a phone and a desktop
with no horizontal scroll and no JSON on it, in English, Arabic and Persian (right to left);
resigning asks first; the committed script is a fresh build of clients/ts/play (esbuild,
locked in clients/ts/package-lock.json)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest

from tests.page.page_support import NPM, tab_build, tab_files
from tests.support.browser import open_page

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "qahwa_page" / "static" / "play.js"


#: what sends a legal action when touched: a card, a tile (or the end it goes on), the point a
#: checker goes to, a move in words (never resigning: that is "resign", then "resign-yes")
ACT = '[data-testid="legal-action"]:not(:disabled)'
#: what narrows a move down: a checker to move, a tile with several ends, a card to put away
CHOOSE = '[data-testid="choose"]:not(:disabled)'


#: the resign button of a table waiting for this seat: a table that has just sent a move
#: shows its buttons disabled until the next view redraws it, and that view may offer no
#: resignation (a click on the disabled one waited 30 s for it, once in .ci/run)
RESIGN = '[data-testid="resign"]:visible:enabled'


def touch(pg: Any) -> bool:
    """Touch the first thing that sends a legal action, else the first thing that narrows one
    down; False when there is nothing to touch."""
    for sel in (ACT, CHOOSE):
        things = pg.locator(sel)
        if things.count():
            try:
                things.first.click(timeout=2_000)
            except Exception:  # the table re-rendered under the click: look again
                pass
            return True
    return False


def play_to_the_end(pg: Any, limit: int = 400) -> None:
    """Touch a legal move whenever one is offered, until the verdict shows."""
    for _ in range(limit * 10):
        if pg.locator("#verdict").count():
            return
        if not touch(pg):
            pg.wait_for_timeout(100)
        assert pg.get_attribute("#status", "data-error") is None, pg.text_content("#status")
    raise AssertionError("the match did not end")


def see_the_verdict(pg: Any) -> None:
    verdict = pg.locator("#verdict")
    verdict.wait_for(timeout=180_000)
    pg.wait_for_function(
        "() => document.getElementById('verdict')?.dataset.verdict !== 'pending'",
        timeout=180_000,
    )
    assert verdict.get_attribute("data-verdict") == "pass", verdict.text_content()
    # one sentence that reads well, not the verify page's report run together
    text = verdict.text_content() or ""
    assert text.startswith("Verified in your browser: every roll and deal"), text
    assert text.count("Verified") == 1 and "chance events" not in text, text
    # who won, and the score
    result = pg.locator("#result")
    assert result.count() == 1
    winners = [int(w) for w in (result.get_attribute("data-winners") or "").split(",") if w]
    assert winners, result.text_content()
    head = result.locator("h2").text_content() or ""
    names = [pg.locator(f'.who[data-seat="{w}"] strong').text_content() for w in winners]
    assert head in ("You won!", "Your side won!") or all(n and n in head for n in names), head
    assert (result.locator(".final").text_content() or "").startswith("Final score: ")
    assert pg.locator('[data-testid="download-transcript"]').count() == 1
    assert pg.locator('[data-testid="download-seat"]').count() == 1
    assert pg.js_errors == []


def downloaded(pg: Any, which: str, into: Path) -> Path:
    """Click the page's download link ``which`` and keep the file in ``into``."""
    with pg.expect_download() as dl:
        pg.click(f'[data-testid="download-{which}"]')
    path = into / f"{which}.json"
    dl.value.save_as(path)
    return path


def verify_cli(*args: str) -> Any:
    from click.testing import CliRunner

    from verify_cli.main import app

    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def count_requests(pg: Any, tail: str) -> list[str]:
    """The URLs of the page's requests (its frames' too) whose path ends with ``tail``."""
    seen: list[str] = []
    pg.on("request", lambda r: seen.append(r.url) if r.url.split("?")[0].endswith(tail) else None)
    return seen


@pytest.mark.slow
@pytest.mark.browser
def test_a_person_plays_tawla_and_verify_passes_the_downloads(
    browser: Any, server: Any, tmp_path: Path
) -> None:
    """A whole tawla match by clicking; the page's transcript.json and seat.json, downloaded,
    pass ``verify --seat`` (the CLI, the server's log checked); one changed byte fails."""
    rules = quote(json.dumps({"match_length": 1}))
    with open_page(browser, f"{server.url}/play?game=tawla&ruleset={rules}") as pg:
        transcripts = count_requests(pg, "/transcript")
        pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
        play_to_the_end(pg)
        see_the_verdict(pg)
        transcript = downloaded(pg, "transcript", tmp_path)
        seat_file = downloaded(pg, "seat", tmp_path)
        # the verify page checked this browser's own copy (the seat's client fetched the
        # transcript once and checked it against its lock and receipts): the same bytes,
        # with the seat's receipts and its own seed, and no copy of its own
        frame = pg.frame_locator("#verify")
        assert frame.locator("#in-paste").input_value() == transcript.read_text("utf-8")
        for check in ("receipts", "own_seed"):
            row = frame.locator(f'#report tr[data-check="{check}"]')
            assert row.get_attribute("data-status") == "ok", row.text_content()
        assert len(transcripts) == 1, transcripts
    seat = json.loads(seat_file.read_text(encoding="utf-8"))
    assert seat["seat"] == 0 and seat["client_seed"] and seat["receipts"]
    res = verify_cli(str(transcript), "--server", server.url, "--seat", str(seat_file))
    assert res.exit_code == 0, res.output
    assert "holds exactly your client seed" in res.output
    # one changed byte: a hex digit of this seat's revealed nonce in the transcript, then in
    # the seat file
    text = transcript.read_text("utf-8")
    at = text.index(seat["nonce"])
    flip = "0" if text[at] != "0" else "1"
    changed = tmp_path / "changed-transcript.json"
    changed.write_text(text[:at] + flip + text[at + 1 :], "utf-8")
    res = verify_cli(str(changed), "--server", server.url, "--seat", str(seat_file))
    assert res.exit_code == 1, res.output
    raw = seat_file.read_text("utf-8")
    at = raw.index(seat["nonce"])
    changed_seat = tmp_path / "changed-seat.json"
    changed_seat.write_text(raw[:at] + flip + raw[at + 1 :], "utf-8")
    res = verify_cli(str(transcript), "--server", server.url, "--seat", str(changed_seat))
    assert res.exit_code == 1, res.output


@pytest.mark.browser
def test_a_bot_move_redraws_the_page_without_polling(browser: Any, server: Any) -> None:
    """The page reads its view when the event stream brings news, never on a timer: while it
    waits for the person nothing is read, and the house bots' moves redraw it."""
    rules = quote(json.dumps({"target": 1}))
    with open_page(browser, f"{server.url}/play?game=hokm&ruleset={rules}") as pg:
        views = count_requests(pg, "/state")
        streams = count_requests(pg, "/events/stream")
        buttons = ACT
        pg.wait_for_selector(buttons, timeout=60_000)
        assert pg.get_attribute("#status", "data-stream") == "open"
        version = "Number(document.getElementById('table').dataset.version)"
        bot_moves = 0
        for _ in range(8):  # the person's moves, until the bots have answered two of them
            if bot_moves >= 2 or pg.locator("#verdict").count():
                break
            pg.wait_for_selector(buttons, timeout=60_000)
            idle = len(views)
            pg.wait_for_timeout(2_500)  # the person thinks: a poll would read the view now
            assert len(views) == idle, views[idle:]
            before = pg.evaluate(version)
            pg.locator(buttons).first.click()
            # the person's turn again (or the end), the view drawn on from the stream's news
            pg.wait_for_function(
                f"() => !!document.getElementById('verdict') || "
                f"(!!document.querySelector('{buttons}') && {version} > {before})",
                timeout=60_000,
            )
            if pg.locator("#verdict").count():
                break
            after = pg.evaluate(version)
            if after >= before + 2:  # a house bot moved in between: the page was redrawn
                bot_moves += 1
            assert len(views) - idle <= after - before + 2, (after - before, views[idle:])
        assert bot_moves >= 1
        assert len(streams) == 1, streams  # one stream, never dropped
        assert pg.js_errors == []


@pytest.mark.browser
def test_without_the_event_stream_a_poll_stands_in(browser: Any, server: Any) -> None:
    """Where the event stream cannot be had (here: every attempt refused), the page falls
    back to reading its view on a timer, and the match still plays to a verdict."""
    rules = quote(json.dumps({"target": 1}))
    ctx = browser.new_context()
    try:
        ctx.route("**/events/stream*", lambda route: route.abort())
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(f"{server.url}/play?game=hokm&ruleset={rules}")
        pg.wait_for_selector('#status[data-stream="poll"]', timeout=60_000)
        play_to_the_end(pg)
        pg.wait_for_function(
            "() => document.getElementById('verdict')?.dataset.verdict !== 'pending'",
            timeout=180_000,
        )
        assert pg.get_attribute("#verdict", "data-verdict") == "pass"
        assert errors == []
    finally:
        ctx.close()


#: the seat's state as the page stored it in IndexedDB (src/storage.ts)
READ_SEAT = """async () => {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("qahwa-seats", 1); r.onsuccess = () => ok(r.result);
    r.onerror = () => no(r.error);
  });
  const st = db.transaction("seats").objectStore("seats");
  const keys = await new Promise((ok) => { const r = st.getAllKeys(); r.onsuccess = () => ok(r.result); });
  const k = keys.find((x) => String(x).startsWith("seat/"));
  const v = await new Promise((ok) => { const r = st.get(k); r.onsuccess = () => ok(r.result); });
  db.close();
  return JSON.parse(v);
}"""


@pytest.mark.slow
@pytest.mark.browser
def test_a_reload_mid_match_resumes_the_seat_from_indexeddb(
    browser: Any, server: Any, tmp_path: Path
) -> None:
    """The seat's secrets are in IndexedDB: after a reload in the middle of a tawla match the
    same seat (same seed, no second commit) plays on, and the match verifies."""
    rules = quote(json.dumps({"match_length": 1}))
    stored = READ_SEAT
    with open_page(browser, f"{server.url}/play?game=tawla&ruleset={rules}") as pg:
        pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
        clicks = 0
        while clicks < 4:  # a few of the person's moves
            buttons = pg.locator(ACT)
            if buttons.count():
                try:
                    buttons.first.click(timeout=2_000)
                    clicks += 1
                except Exception:
                    pass
            elif not touch(pg):
                pg.wait_for_timeout(100)
            assert not pg.locator("#verdict").count(), "the match ended before the reload"
        url = pg.url
        assert "match=" in url and "token=" in url  # the seat link, kept in the address
        before = pg.evaluate(stored)
        assert before["revealed"] and before["key_seed"] and len(before["receipts"]) >= 2
        pg.reload()
        pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
        play_to_the_end(pg)
        see_the_verdict(pg)
        seat = json.loads(downloaded(pg, "seat", tmp_path).read_text("utf-8"))
    assert seat["client_seed"] == before["client_seed"] and seat["nonce"] == before["nonce"]
    commits = [r for r in seat["requests"] if r["path"].endswith("/commit")]
    assert len(commits) == 1  # the reloaded page did not commit again
    assert len(seat["receipts"]) > len(before["receipts"])  # it played on


@pytest.mark.browser
def test_a_reload_mid_deal_resumes_the_sealed_seat_from_indexeddb(
    browser: Any, server: Any, tmp_path: Path
) -> None:
    """Issue 47: at a sealed table the seat stores its hand's secret key in IndexedDB before
    it sends its key step; reloaded right after that step (mid-deal: its shuffle and shares
    still to come), the same seat goes on with the same key, and the match verifies."""
    rules = quote(json.dumps({"players": 2, "target": 20}))
    url = f"{server.url}/play?game=iraqi_domino&sealed=1&ruleset={rules}"

    def key_step(r: Any) -> bool:
        q = r.request
        if q.method != "POST" or not urlsplit(q.url).path.endswith("/actions"):
            return False
        action = json.loads(q.post_data or "{}").get("action", {})
        return bool(action.get("type") == "sealed" and action.get("step") == "key")

    with open_page(browser, url) as pg:
        with pg.expect_response(key_step, timeout=120_000) as got:
            pass
        assert got.value.ok, got.value.text()
        before = pg.evaluate(READ_SEAT)
        assert set(before["sealed_keys"]) == {"0"}, before.get("sealed_keys")
        assert pg.locator(".hand-area svg.tile").count() == 0  # no hand yet: mid-deal
        pg.reload()
        pg.wait_for_selector(".hand-area svg.tile", timeout=120_000)
        play_to_the_end(pg, limit=800)
        see_the_verdict(pg)
        after = pg.evaluate(READ_SEAT)
        seat = json.loads(downloaded(pg, "seat", tmp_path).read_text("utf-8"))
    # the same first hand's key after the reload (a new one would not match its key step)
    assert after["sealed_keys"]["0"] == before["sealed_keys"]["0"]
    commits = [r for r in seat["requests"] if r["path"].endswith("/commit")]
    assert len(commits) == 1  # the reloaded page did not commit again


@pytest.mark.browser
def test_a_person_plays_hokm_with_three_house_bots(browser: Any, server: Any) -> None:
    rules = quote(json.dumps({"target": 1}))
    with open_page(browser, f"{server.url}/play?game=hokm&ruleset={rules}") as pg:
        # the kind of table the person sits at (issue 34): a seeded deal, said in words
        pg.wait_for_selector("#deal", timeout=60_000)
        assert pg.get_attribute("#deal", "data-deal") == "seeded"
        assert "operator" in (pg.text_content("#deal") or "")
        play_to_the_end(pg)
        see_the_verdict(pg)


@pytest.mark.browser
def test_in_arabic_the_table_is_right_to_left(browser: Any, server: Any) -> None:
    with open_page(browser, f"{server.url}/play?game=hokm&lang=ar") as pg:
        pg.wait_for_selector("#turn", timeout=60_000)
        assert pg.get_attribute("html", "dir") == "rtl"
        assert pg.get_attribute("html", "lang") == "ar"
        assert pg.evaluate("getComputedStyle(document.getElementById('table')).direction") == "rtl"
        pg.wait_for_selector("#deadline", timeout=30_000)  # the turn's deadline, from the view
        assert (pg.get_attribute("#deadline", "data-due") or "").startswith("20")


def test_the_lobby_refuses_bad_tables_clearly(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/play/tables", json={"game": "chess"})
        assert r.status_code == 422 and "unknown game" in r.json()["error"]["message"]
        r = c.post("/play/tables", json={"game": "tawla", "ruleset": {"match_length": 99}})
        assert r.status_code == 422 and "bad ruleset" in r.json()["error"]["message"]
        r = c.post("/play/tables", json={"game": "tawla", "friend": True})
        assert r.status_code == 201
        people = r.json()["people"]
        assert [p["seat"] for p in people] == [0, 1]
        page = c.get("/play")
        assert page.status_code == 200 and "/static/play.js" in page.text


@pytest.mark.skipif(NPM is None, reason="npm (and node) not installed")
def test_the_committed_bundle_is_a_fresh_build(tmp_path: Path) -> None:
    """play.js, sealed-verify.js and the chunks they share are one fresh ``build:tab``."""
    assert tab_build(tmp_path / "tab") == tab_files(), (
        "qahwa_page/static/play.js (or sealed-verify.js, chunk-*.js) is stale: run make play-js "
        "and commit them (git rm a chunk-*.js the build no longer writes)"
    )
    assert len(gzip.compress(BUNDLE.read_bytes(), 9)) <= 80_000
    # issue 47's target: play.js with the sealed seat, and the chunks it imports, at most
    # 120 kB gzipped (70.4 kB when its worker came: play.js 36.6, the chunks 22.5 and 11.3)
    loaded = {"play.js", *re.findall(r'from\s*"\./(chunk-[A-Z0-9]+\.js)"', BUNDLE.read_text())}
    assert len(loaded) > 1, loaded
    static = BUNDLE.parent
    assert sum(len(gzip.compress((static / n).read_bytes(), 9)) for n in loaded) <= 120_000


@pytest.mark.browser
def test_a_friend_sits_down_from_the_seat_link(browser: Any, server: Any) -> None:
    with open_page(browser, f"{server.url}/play?game=tawla&friend=1") as me:
        link = me.locator('[data-testid="seat-link"]')
        link.wait_for(timeout=30_000)
        url = str(link.get_attribute("href"))
        assert "seat=1" in url and "token=" in url
        with open_page(browser, url) as friend:
            # both seats commit and reveal: the match starts, and someone may roll
            for pg in (me, friend):
                pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
            offered = 0
            for _ in range(600):  # the opening roll is offered to one of them (or both)
                offered = sum(
                    pg.locator('[data-testid="legal-action"]').count() for pg in (me, friend)
                )
                if offered:
                    break
                me.wait_for_timeout(100)
            assert offered > 0
            assert me.js_errors == [] and friend.js_errors == []


@pytest.mark.browser
def test_a_sealed_table_shows_its_limits(browser: Any, server: Any) -> None:
    """Issue 46: one person among three house seats at sealed hokm (a full deal) is told, at
    her seat link, that the operator can work out her hand, in the server's own words; the page
    plays the table (issue 47): her seat commits and its hand is drawn from its own machine."""
    from games.sealed_limits import LIMITS
    from qahwa_client import Client
    from service.house import House

    ruleset = {"players": 4, "target": 1, "deal": "sealed"}
    house = House(server.url)
    with Client(server.url) as qc:
        m = qc.create_match("hokm", ruleset, ["Layla", "H1", "H2", "H3"], [False, True, True, True])
        for s in m.seats[1:]:  # the house seats: bots holding their own keys
            house.start_seat(m.match_id, s.seat, s.token)
        seat = m.seats[0]
        url = f"{server.url}/play?match={m.match_id}&seat=0&token={seat.token}&game=hokm"
        with open_page(browser, url) as pg:
            pg.wait_for_selector("#limits li", timeout=60_000)
            shown = pg.eval_on_selector_all(
                "#limits li", "els => els.map(e => [e.dataset.limit, e.textContent])"
            )
            assert shown == [
                ["house_hands", LIMITS["house_hands"]],
                ["one_person_full_deal", LIMITS["one_person_full_deal"]],
            ]
            assert "hidden even from the operator" not in (pg.text_content("body") or "")
            assert pg.locator('[data-testid="sealed-unsupported"]').count() == 0
            assert pg.js_errors == []
        public = httpx.get(f"{server.url}/v1/matches/{m.match_id}").json()
        assert public["seats"][0]["committed"] is True  # the page sat her at the table
    house.close()
    assert house.errors == [], house.errors


#: JSON on the table: braces, a quoted key, nested arrays
JSONISH = re.compile(r'[{}]|"\w+"\s*:|\[\[')


def fits_without_json(pg: Any, where: str) -> None:
    """No horizontal scroll, and nothing on the page reads as JSON."""
    wide, window = pg.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert wide <= window, (where, wide, window)
    text = pg.inner_text("body")
    assert not JSONISH.search(text), (where, text)


@contextmanager
def sized_page(browser: Any, url: str, width: int) -> Iterator[Any]:
    """A page ``width`` px wide, in the browser's own locale."""
    with open_page(browser, url, locale=None, width=width) as pg:
        yield pg


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize(
    ("game", "lang", "rules", "thing"),
    [
        ("hokm", "en", {"target": 1}, "svg.card"),
        ("iraqi_domino", "ar", None, "svg.tile"),
        ("mexican_train", "en", None, "svg.tile"),
        ("tawla", "fa", {"match_length": 1}, "svg.board"),
    ],
)
def test_the_table_fits_a_phone_and_a_desktop_with_no_json(
    browser: Any, server: Any, width: int, game: str, lang: str, rules: Any, thing: str
) -> None:
    """A card game, dominoes and tawla at 390 px and 1,280 px: the game is drawn (cards, tiles,
    the board), the page never scrolls sideways and shows no JSON, while the person plays
    moves; Arabic and Persian lay it out right to left."""
    q = f"game={game}&lang={lang}" + (f"&ruleset={quote(json.dumps(rules))}" if rules else "")
    with sized_page(browser, f"{server.url}/play?{q}", width) as pg:
        pg.wait_for_selector("#turn", timeout=60_000)
        assert pg.get_attribute("html", "dir") == ("ltr" if lang == "en" else "rtl")
        moves = 0
        for _ in range(600):
            if moves >= 5 or pg.locator("#verdict").count():
                break
            if pg.locator(ACT).count():
                fits_without_json(pg, f"{game} before move {moves}")
                touch(pg)
                moves += 1
            elif not touch(pg):
                pg.wait_for_timeout(100)
        assert moves >= 3, moves
        pg.wait_for_selector(thing, timeout=30_000)
        fits_without_json(pg, f"{game} after {moves} moves")
        # the things themselves: no button reads like an action's name
        labels = pg.locator("button").all_inner_texts()
        assert not [x for x in labels if re.search(r"\w+_\w+|=", x)], labels
        assert pg.js_errors == []


@pytest.mark.browser
def test_resigning_asks_first_and_the_end_names_the_winner(browser: Any, server: Any) -> None:
    """Resign opens a confirmation: nothing is sent until "yes" (and "keep playing" closes
    it); then the match ends, the end names the other seat as the winner with the score, and
    the verify page's verdict reads as one sentence."""
    rules = quote(json.dumps({"match_length": 1}))
    with open_page(browser, f"{server.url}/play?game=tawla&ruleset={rules}") as pg:
        actions = count_requests(pg, "/actions")
        resign = pg.locator(RESIGN)
        for _ in range(3000):  # play until this seat may resign (its turn, before it rolls)
            if resign.count():
                break
            if not touch(pg):
                pg.wait_for_timeout(100)
        else:
            raise AssertionError("no resign button was offered")
        sent = len(actions)
        resign.click()
        confirm = pg.locator('[data-testid="resign-confirm"]')
        assert confirm.is_visible()
        yes = confirm.locator('[data-testid="resign-yes"]')
        assert yes.count() >= 1 and "Resign and lose" in (yes.first.text_content() or "")
        pg.wait_for_timeout(1_000)
        assert len(actions) == sent  # one click sent nothing
        confirm.locator('[data-testid="resign-no"]').click()
        assert not confirm.is_visible()
        pg.wait_for_timeout(500)
        assert len(actions) == sent
        resign.click()
        confirm.locator('[data-testid="resign-yes"][data-points="1"]').click()
        see_the_verdict(pg)
        result = pg.locator("#result")
        assert result.get_attribute("data-winners") == "1"
        assert "House 1 won" in (result.locator("h2").text_content() or "")
        fits_without_json(pg, "the end")


def test_the_home_page_links_the_table(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        home = c.get("/")
    assert home.status_code == 200
    assert re.search(r'<a href="/play">', home.text), home.text


@pytest.mark.browser
def test_a_sealed_seat_link_of_a_game_it_does_not_deal_says_so_plainly(
    browser: Any, server: Any
) -> None:
    """A seat link of a sealed table of a game the page does not deal (sealed shelem): the page
    says so in words, offers no button, and its client sent no commitment (nor any other
    secret)."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post(
            "/v1/matches",
            json={
                "game": "shelem",
                "ruleset": {"deal": "sealed"},
                "seats": [{"name": n, "house": False} for n in ("Layla", "Omar", "Sara", "Ali")],
            },
        )
        assert r.status_code == 201, r.text
        created = r.json()
        seat = created["seats"][0]
        url = f"/play?match={created['match_id']}&seat=0&token={seat['token']}&game=shelem"
        with open_page(browser, server.url + url) as pg:
            posts: list[str] = []
            pg.on("request", lambda q: posts.append(q.url) if q.method == "POST" else None)
            note = pg.locator('[data-testid="sealed-unsupported"]')
            note.wait_for(timeout=60_000)
            text = note.text_content() or ""
            assert "sealed table of a game this web table does not deal yet" in text, text
            assert "sealed shelem and Mexican Train" in text, text
            assert pg.get_attribute("#status", "data-sealed") == "1"
            assert pg.locator("#table button").count() == 0
            assert pg.get_attribute("#status", "data-error") is None
            pg.wait_for_timeout(1_000)
            assert posts == []
            assert pg.js_errors == []
        match = c.get(f"/v1/matches/{created['match_id']}").json()
        assert [s["committed"] for s in match["seats"]] == [False] * 4


@pytest.mark.browser
def test_a_person_plays_sealed_iraqi_dominoes_with_its_boneyard_to_verified(
    browser: Any, server: Any, tmp_path: Path
) -> None:
    """Issue 47: the lobby's sealed two-player Iraqi dominoes (a boneyard: it protects one
    person), with a house bot that holds its own keys: the page makes its seat's key, shuffle
    and shares, decrypts its tiles in the browser and draws them as tiles, plays (drawing from
    the boneyard when it must) to "Verified"; the downloads pass ``verify --seat``."""
    rules = quote(json.dumps({"players": 2, "target": 20}))
    url = f"{server.url}/play?game=iraqi_domino&sealed=1&ruleset={rules}"
    with open_page(browser, url) as pg:
        steps: list[str] = []
        pg.on(
            "request",
            lambda q: (
                steps.append(json.loads(q.post_data or "{}").get("action", {}).get("step", ""))
                if q.method == "POST" and urlsplit(q.url).path.endswith("/actions")
                else None
            ),
        )
        pg.wait_for_selector("svg.tile", timeout=120_000)
        assert pg.get_attribute("#deal", "data-deal") == "sealed"
        assert pg.locator('[data-testid="sealed-unsupported"]').count() == 0
        # the seat's hand, drawn as tiles: from its own machine, not the server's view
        hand = pg.locator(".hand-area svg.tile").count()
        assert hand > 0, pg.inner_text("#table")
        # a boneyard: no limit says the operator can work out the person's hand
        limits = pg.eval_on_selector_all("#limits li", "els => els.map(e => e.dataset.limit)")
        assert "one_person_full_deal" not in limits, limits
        play_to_the_end(pg, limit=800)
        see_the_verdict(pg)
        for step in ("key", "shuffle", "share"):
            assert step in steps, steps
        transcript = downloaded(pg, "transcript", tmp_path)
        seat_file = downloaded(pg, "seat", tmp_path)
    assert json.loads(transcript.read_text("utf-8"))["protocol"] == "qahwa-fair/3"
    res = verify_cli(str(transcript), "--server", server.url, "--seat", str(seat_file))
    assert res.exit_code == 0, res.output


@pytest.mark.browser
def test_the_end_on_a_phone_in_arabic(browser: Any, server: Any) -> None:
    """The end of a match at 390 px, right to left: who won (in Arabic), the final score and the
    verdict fit with no sideways scroll and no JSON — the verify page's own report, with its
    receipts, stays folded away until asked for."""
    rules = quote(json.dumps({"match_length": 1}))
    url = f"{server.url}/play?game=tawla&lang=ar&ruleset={rules}"
    with sized_page(browser, url, 390) as pg:
        resign = pg.locator(RESIGN)
        for _ in range(3000):
            if resign.count():
                break
            if not touch(pg):
                pg.wait_for_timeout(100)
        else:
            raise AssertionError("no resign button was offered")
        resign.click()
        pg.locator('[data-testid="resign-yes"][data-points="1"]').click()
        pg.locator("#verdict").wait_for(timeout=180_000)
        pg.wait_for_function(
            "() => document.getElementById('verdict').dataset.verdict !== 'pending'",
            timeout=180_000,
        )
        assert pg.get_attribute("#verdict", "data-verdict") == "pass"
        assert (pg.text_content("#verdict") or "").startswith("تم التحقق في متصفحك")
        assert pg.get_attribute("#result", "data-winners") == "1"
        assert "فاز" in (pg.text_content("#result h2") or "")
        assert not pg.locator("#checks").evaluate("d => d.open")
        assert not pg.locator("#verify").is_visible()
        fits_without_json(pg, "the end, in Arabic, on a phone")
        assert pg.js_errors == []


@pytest.mark.slow
@pytest.mark.browser
def test_the_witness_stops_mid_play_and_the_table_plays_on(browser: Any, tmp_path: Path) -> None:
    """Issue 49: /play pins no witness, so the server's only witness, stopped for real in the
    middle of a match, holds up neither that match nor a table opened after it; both end
    with the verify page's pass, and the downloads pass ``verify --seat``."""
    from tests.support.live_server import LiveServer
    from tests.support.witness_http import WitnessHTTP, new_log, witnessed_settings

    rules = quote(json.dumps({"players": 2, "target": 1}))
    url = "/play?game=iraqi_domino&ruleset=" + rules
    log = new_log()
    with (
        WitnessHTTP(log.vkey) as witness,
        LiveServer(**witnessed_settings(witness, log)) as srv,
    ):
        with open_page(browser, srv.url + url) as first:
            first.wait_for_selector("#turn", timeout=60_000)  # locked, checked, revealed
            assert witness.cosigned
            witness.stop()
            play_to_the_end(first)
            see_the_verdict(first)
        with open_page(browser, srv.url + url) as second:
            second.wait_for_selector("#turn", timeout=60_000)
            play_to_the_end(second)
            see_the_verdict(second)
            transcript = downloaded(second, "transcript", tmp_path)
            seat_file = downloaded(second, "seat", tmp_path)
        res = verify_cli(str(transcript), "--server", srv.url, "--seat", str(seat_file))
        assert res.exit_code == 0, res.output
        missing = httpx.get(
            f"{srv.url}/v1/matches/{json.loads(transcript.read_text())['match_id']}/log-proof"
        ).headers["qahwa-witnesses-missing"]
        assert missing == "w1"


@pytest.mark.browser
def test_a_refused_move_is_said_until_the_next_one(browser: Any, server: Any) -> None:
    """A move the server refuses is said on the page, and stays said when the table is drawn
    again with its buttons live (the redraw's "Your move" used to replace it at once: a refusal
    went unseen); the next move sent clears it."""
    rules = quote(json.dumps({"target": 1}))
    with open_page(browser, f"{server.url}/play?game=hokm&ruleset={rules}") as pg:
        refused: list[str] = []

        def refuse_once(route: Any) -> None:
            if route.request.method != "POST" or refused:
                route.continue_()
                return
            refused.append(route.request.url)
            route.fulfill(
                status=422,
                content_type="application/json",
                body=json.dumps({"error": {"code": "illegal_action", "message": "not now"}}),
            )

        pg.route("**/actions", refuse_once)
        pg.wait_for_selector(ACT, timeout=60_000)
        version = pg.evaluate("Number(document.getElementById('table').dataset.version)")
        pg.locator(ACT).first.click()
        note = pg.locator("[data-testid=refused]")
        note.wait_for(state="visible", timeout=30_000)
        assert refused and "illegal_action" in (note.text_content() or "")
        assert "not now" in (note.text_content() or "")
        # drawn again from a fresh view (buttons live), and the refusal still says so
        pg.wait_for_selector(ACT, timeout=30_000)
        pg.wait_for_timeout(500)
        assert note.is_visible(), pg.text_content("#status")
        assert pg.evaluate("Number(document.getElementById('table').dataset.version)") == version
        # the next move goes, and the refusal is no longer said
        pg.locator(ACT).first.click()
        pg.wait_for_function(
            "() => document.querySelector('[data-testid=refused]').hidden", timeout=30_000
        )
        assert pg.js_errors == []
