"""A playable card stays under the pointer (issue 47): the hover lift used to move the card's
button itself, so a pointer resting on a card's bottom edge (where the previous click left it,
after a put-away) flickered it up and down every frame — hovered, lifted off the pointer,
unhovered, back under it. Its box never settled: a person's click there landed on no button
(press and release on different targets) and a driver's click waited forever ("element is not
stable"), and the turn ran out. The card's picture lifts now; its button stays put."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.support.browser import NEEDS_CHROMIUM

pytestmark = NEEDS_CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
PLAY_HTML = ROOT / "qahwa_page" / "static" / "play.html"

# a hand's row as table.ts draws it (a playable card: button.card-btn.playable > svg.card)
HAND = """
<main id="table"><div class="cards hand" data-testid="hand">
 <button type="button" class="card-btn playable" data-card="QH" id="c1">
  <svg class="card" viewBox="0 0 60 84"><rect x="1" y="1" width="58" height="82" rx="6" fill="#fff"/></svg>
 </button>
 <button type="button" class="card-btn" data-card="3S" disabled>
  <svg class="card" viewBox="0 0 60 84"><rect x="1" y="1" width="58" height="82" rx="6" fill="#fff"/></svg>
 </button>
</div></main>
<script>window.clicks = 0; document.getElementById("c1").addEventListener("click", () => window.clicks++);</script>
"""

# the button's top and whether the pointer's point hits it, over 20 frames
SAMPLE = """([x, y]) => new Promise((done) => {
  const b = document.getElementById("c1");
  const out = [];
  const frame = () => {
    out.push([b.getBoundingClientRect().top, document.elementFromPoint(x, y)?.closest("button") === b]);
    if (out.length < 20) requestAnimationFrame(frame);
    else done(out);
  };
  requestAnimationFrame(frame);
})"""


def test_a_playable_card_under_the_pointer_s_edge_holds_still_and_takes_the_click(
    browser: Any,
) -> None:
    style = re.search(r"<style>(.*?)</style>", PLAY_HTML.read_text(), re.S)
    assert style is not None, "play.html has no <style>"
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        pg = ctx.new_page()
        pg.set_content(f"<!doctype html><style>{style.group(1)}</style>{HAND}")
        box = pg.locator("#c1").bounding_box()
        assert box is not None
        # the pointer rests in the card's bottom 2 px (a lift of 4 px takes the card off it)
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] - 2
        pg.mouse.move(x, y)
        frames = pg.evaluate(SAMPLE, [x, y])
        tops = {round(top, 1) for top, _ in frames}
        assert len(tops) == 1, f"the card's button moves under a resting pointer: tops {tops}"
        assert all(hit for _, hit in frames), f"the pointer's point leaves the card: {frames}"
        # a driver's click waits for a stable box; a person's press and release hit the button
        pg.locator("#c1").click(timeout=3_000)
        pg.mouse.click(x, y)
        assert pg.evaluate("window.clicks") == 2
    finally:
        ctx.close()
