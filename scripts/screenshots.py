"""The screenshots of a sealed table in docs/play.md, made again from a live server and Chromium.

Serves the app (``service.server.ServerThread``, a temporary SQLite database) and opens the
built-in lobby's sealed four-player hokm table with a seat left for a friend
(``/play?game=hokm&sealed=1&friend=1``): the person's page in one browser context, the friend's
seat link in another, two house bots (the lobby's, each holding its own keys). Both people
play the first legal card offered; the person's page is photographed

- **mid-hand**: its move, with cards of the trick already opened on the table (three tricks
  in), its own hand drawn and the cards it may play lit;
- **at the end**: who won, the score and the verify page's verdict.

each at 390 px (a phone) and 1,280 px (a desktop), in English and in Persian (right to left).

And the pictures of docs/play.md's "The table" and "The end" (seeded tables, house bots in the
other seats): hokm on a desktop mid-hand (``play-hokm``), tawla on a phone in Arabic with a
checker picked (``play-tawla-ar-phone``), Iraqi dominoes in Persian with a tile picked and the
ends it may go on lit (``play-dominoes-fa``), resigning's question (``play-resign``) and the end
of a one-point tawla match (``play-end``).

The PNGs are cut to a 64-colour palette (Pillow), to stay a few tens of kB each.

    python scripts/screenshots.py                   # into docs/img
    python scripts/screenshots.py --out /tmp/x      # elsewhere
    python scripts/screenshots.py --only seeded     # the seeded tables' pictures only

Needs Debian's chromium (/usr/bin/chromium) and the dev venv (playwright, Pillow).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: a legal move that sends itself when touched (a card, a trump suit, a move in words)
ACT = '[data-testid="legal-action"]:not(:disabled)'
#: what narrows a move down: a checker to move, a tile with several ends, a card to put away
CHOOSE = '[data-testid="choose"]:not(:disabled)'
#: (name, language, width): the pictures of the table mid-hand
MID_HAND = [
    ("play-sealed-hokm", "en", 1280),
    ("play-sealed-hokm-phone", "en", 390),
    ("play-sealed-hokm-fa", "fa", 1280),
    ("play-sealed-hokm-fa-phone", "fa", 390),
]
#: the tricks played before the mid-hand picture
TRICKS_BEFORE = 3


def small_png(shot: bytes, out: Path) -> None:
    """``shot`` (a PNG) written to ``out`` with a 64-colour palette."""
    from PIL import Image

    img = Image.open(io.BytesIO(shot)).convert("RGB")
    img.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, optimize=True
    )


def touch(pg: Any) -> bool:
    """Touch the first legal move offered; whether there was one."""
    things = pg.locator(ACT)
    if not things.count():
        return False
    try:
        things.first.click(timeout=2_000)
    except Exception:  # the table was drawn again under the click: look again next time
        pass
    return True


def mid_hand(pg: Any) -> bool:
    """The person's move to a trick others have opened, a few tricks into the hand."""
    return bool(
        pg.evaluate(
            """(tricks) => {
              const hand = document.querySelectorAll('[data-testid="hand"] .card-btn.playable');
              const trick = document.querySelectorAll('[data-testid="trick"] .cards:not(.small) svg.card');
              const left = document.querySelectorAll('[data-testid="hand"] .card-btn').length;
              return hand.length > 0 && trick.length >= 1 && left <= 13 - tricks;
            }""",
            TRICKS_BEFORE,
        )
    )


def passed(pg: Any, name: str) -> None:
    """Wait for the page's verdict; stop unless it is a pass (a picture of ``name``)."""
    pg.wait_for_function(
        "() => ['pass', 'fail', 'incomplete'].includes("
        "document.getElementById('verdict')?.dataset.verdict)",
        timeout=180_000,
    )
    if pg.get_attribute("#verdict", "data-verdict") != "pass":
        raise SystemExit(f"{name}: the verdict is not a pass: {pg.text_content('#verdict')}")


def table(browser: Any, url: str, lang: str, width: int, out: Path, name: str) -> None:
    """One sealed hokm table: the person (``lang``, ``width``) and a friend play it out; the
    person's page photographed mid-hand (``name``) and, for the first of each language, at
    the end (``name`` with ``-end``)."""
    rules = quote(json.dumps({"target": 1}))
    # a short window: a full-page picture is then as tall as the table, with no blank below
    me_ctx = browser.new_context(viewport={"width": width, "height": 400})
    friend_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        me = me_ctx.new_page()
        me.goto(f"{url}/play?game=hokm&sealed=1&friend=1&lang={lang}&ruleset={rules}")
        link = me.locator('[data-testid="seat-link"]')
        link.wait_for(timeout=60_000)
        friend = friend_ctx.new_page()
        friend.goto(str(link.get_attribute("href")))
        shot = False
        for _ in range(20_000):
            if me.locator("#verdict").count():
                break
            if not shot and mid_hand(me):
                me.wait_for_timeout(300)  # the table settled
                small_png(me.screenshot(full_page=True), out / f"{name}.png")
                shot = True
            moved = touch(friend)
            if shot or not mid_hand(me):
                moved = touch(me) or moved
            if not moved:
                me.wait_for_timeout(100)
        if not shot:
            raise SystemExit(f"{name}: the hand ended before the picture mid-hand")
        passed(me, name)
        me.locator("#result").scroll_into_view_if_needed()
        small_png(me.screenshot(full_page=True), out / f"{name}-end.png")
    finally:
        friend_ctx.close()
        me_ctx.close()


def window(browser: Any, url: str, width: int, height: int) -> tuple[Any, Any]:
    """A page (and its context) ``width`` × ``height`` at ``url``."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, locale="en-US")
    pg = ctx.new_page()
    pg.goto(url)
    return ctx, pg


def until(pg: Any, ready: str, what: str, choose: bool = False) -> None:
    """Touch legal moves (and, if ``choose``, what narrows one down) until the page's
    ``ready`` (a JavaScript expression) holds."""
    for _ in range(6_000):
        if pg.evaluate(ready):
            pg.wait_for_timeout(300)  # the table settled
            if pg.evaluate(ready):
                return
        if pg.locator("#verdict").count():
            break
        if not touch(pg) and not (choose and pg.locator(CHOOSE).count()):
            pg.wait_for_timeout(100)
        elif choose and not pg.locator(ACT).count() and pg.locator(CHOOSE).count():
            pg.locator(CHOOSE).first.click(timeout=2_000)
    raise SystemExit(f"{what}: the table never showed it")


def seeded(browser: Any, url: str, out: Path) -> Iterator[str]:
    """The seeded tables' pictures (docs/play.md, "The table" and "The end")."""
    hokm = quote(json.dumps({"target": 1}))
    ctx, pg = window(browser, f"{url}/play?game=hokm&ruleset={hokm}", 1280, 760)
    try:
        # the person's move to a trick two house seats have opened, a few tricks in
        until(
            pg,
            "document.querySelectorAll('[data-testid=\"trick\"] .cards:not(.small) svg.card')"
            ".length >= 2 && document.querySelectorAll('[data-testid=\"hand\"] .card-btn')"
            ".length <= 11 && document.querySelectorAll('" + ACT + "').length > 0",
            "hokm mid-hand",
        )
        small_png(pg.screenshot(), out / "play-hokm.png")
        yield str(out / "play-hokm.png")
    finally:
        ctx.close()
    tawla = quote(json.dumps({"match_length": 1}))
    ctx, pg = window(browser, f"{url}/play?game=tawla&lang=ar&ruleset={tawla}", 390, 844)
    try:
        # a checker picked, the points it may go to lit
        until(pg, "document.querySelectorAll('svg.board .dst').length > 0", "tawla", choose=True)
        pg.locator("svg.board").scroll_into_view_if_needed()
        small_png(pg.screenshot(), out / "play-tawla-ar-phone.png")
        yield str(out / "play-tawla-ar-phone.png")
    finally:
        ctx.close()
    ctx, pg = window(browser, f"{url}/play?game=iraqi_domino&lang=fa", 1280, 720)
    try:
        # a tile picked that fits both ends of the line: both ends lit
        until(pg, "document.querySelectorAll('.end-target').length >= 2", "dominoes", choose=True)
        small_png(pg.screenshot(), out / "play-dominoes-fa.png")
        yield str(out / "play-dominoes-fa.png")
    finally:
        ctx.close()
    ctx, pg = window(browser, f"{url}/play?game=tawla&ruleset={tawla}", 1280, 900)
    try:
        # resigning asks first: the question, open
        # (offered on the person's turn, before it rolls: played until then)
        until(
            pg,
            "[...document.querySelectorAll('[data-testid=\"resign\"]')]"
            ".some((b) => b.offsetParent !== null)",
            "tawla's resign",
            choose=True,
        )
        pg.locator('[data-testid="resign"]:visible').click()
        confirm = pg.locator('[data-testid="resign-confirm"]')
        confirm.wait_for(timeout=10_000)
        confirm.scroll_into_view_if_needed()
        pg.wait_for_timeout(300)
        small_png(pg.screenshot(), out / "play-resign.png")
        yield str(out / "play-resign.png")
        pg.locator('[data-testid="resign-no"]').click()
        # played to the end: who won, the score and the verdict
        until(pg, "!!document.getElementById('verdict')", "tawla's end", choose=True)
    except SystemExit:
        if not pg.locator("#verdict").count():
            raise
    try:
        passed(pg, "play-end")
        pg.locator("#result").evaluate("e => e.scrollIntoView({block: 'start'})")
        pg.wait_for_timeout(300)
        small_png(pg.screenshot(), out / "play-end.png")
        yield str(out / "play-end.png")
    finally:
        ctx.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--only", choices=["sealed", "seeded"], default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from bench.browser import launch
    from service.server import ServerThread
    from service.settings import Settings

    with tempfile.TemporaryDirectory(prefix="qahwa-screenshots-") as tmp:
        settings = Settings(database_url=f"sqlite:///{Path(tmp) / 'q.db'}", data_dir=Path(tmp))
        with ServerThread(settings) as srv, launch() as browser:
            if args.only != "seeded":
                for name, lang, width in MID_HAND:
                    table(browser, srv.url, lang, width, args.out, name)
                    print(f"{args.out / name}.png, {name}-end.png")
            if args.only != "sealed":
                for made in seeded(browser, srv.url, args.out):
                    print(made)


if __name__ == "__main__":
    main()
