"""The verify page's statistics of the match at hand (issue 25) and its ``qahwaFair.verify``
API (issue 23), in Chromium with playwright.

- The page's JavaScript ``verify stats`` (``statsTally``/``statsAnalyse``) and the verify CLI's
  Python (``verify_cli.stats``) are independent implementations: on genuine transcripts of
  every game and table form, v1 and v2, and on random and planted tallies they give the same
  tests, counts and p-values.
- A planted run of doubles is flagged by both; genuine matches are "nothing unusual".
- On the page: the statistics appear only once the transcript checked out, by Python where the
  rules replay ran (``data-by=python``), else by JavaScript (``data-by=js``), translated.
- ``qahwaFair.verify`` answers exactly the page's verdict: "pass" only with the rules replay;
  without it (``--no-runtime``, a file) "incomplete", for v1 and v2 alike.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from fairness import PROTOCOL, PROTOCOL_V2, public_key_b64
from games.transcript import simulate_match
from qahwa_page.pyodide import RUNTIME_DIR, runtime_installed
from tests.page.test_verify_page import PAGE, Site
from tests.support.browser import NEEDS_CHROMIUM, open_page
from tests.verify.test_verify_cli_helpers import SIGNER, full_match, keys_doc, rechain, v2_match
from verify_cli.stats import Hand, Tally, analyse, tally

pytestmark = NEEDS_CHROMIUM

PUB = public_key_b64(SIGNER.public_key)

# every table form whose first hand the statistics read, and the dice games
FORMS: list[tuple[str, dict[str, Any]]] = [
    ("tawla", {"match_length": 3}),
    ("mahbusa", {"match_length": 1}),
    *(("hokm", {"players": p, "cut": c, "target": 2}) for p in (2, 3, 4) for c in (True, False)),
    ("qahve", {}),
    ("shelem", {"players": 4, "target": 200}),
    ("shelem", {"players": 2, "target": 200}),
    *(("iraqi_domino", {"players": p, "target": 40}) for p in (2, 3, 4)),
    *(("mexican_train", {"players": p, "rounds": 1}) for p in (2, 5, 8)),
]


@pytest.fixture(scope="module")
def harness(browser: Any) -> Iterator[Any]:
    """The page opened from its file: the JavaScript unit harness."""
    with open_page(browser, PAGE.as_uri() + "?lang=en") as page:
        yield page
        assert page.js_errors == []


def close(a: Any, b: Any, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
    elif isinstance(a, list):
        assert len(a) == len(b), what
        for x, y in zip(a, b, strict=True):
            close(x, y, what)
    else:
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (what, a, b)


def same_analysis(js: dict[str, Any], py: dict[str, Any]) -> None:
    assert [x["name"] for x in js["tests"]] == [x["name"] for x in py["tests"]]
    for x, y in zip(js["tests"], py["tests"], strict=True):
        assert x["n"] == y["n"], x["name"]
        for key in ("observed", "expected", "statistic", "p_value", "p_adjusted"):
            close(x.get(key), y.get(key), f"{x['name']} {key}")
    close(js["p_min_adjusted"], py["p_min_adjusted"], "p_min_adjusted")
    assert js["unusual"] == py["unusual"]


def js_stats(page: Any, doc: dict[str, Any], seat: int | None) -> dict[str, Any]:
    return dict(
        page.evaluate(
            "([d, s]) => window.qahwaFair.statsAnalyse(window.qahwaFair.statsTally(d, s))",
            [doc, seat],
        )
    )


def js_tally(t: Tally) -> dict[str, Any]:
    return {
        "faces": {str(k): v for k, v in t.faces.items()},
        "rolls": [list(r) for r in t.rolls],
        "hands": [
            {"game": h.game, "score": h.score, "mean": h.mean, "var": h.var} for h in t.hands
        ],
    }


# ---------------------------------------------------------------------------------------
# JavaScript and Python agree.
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", [PROTOCOL, PROTOCOL_V2])
@pytest.mark.parametrize(("game", "ruleset"), FORMS, ids=[f"{g}-{json.dumps(r)}" for g, r in FORMS])
def test_javascript_and_python_agree_on_genuine_transcripts(
    harness: Any, game: str, ruleset: dict[str, Any], protocol: str
) -> None:
    doc, _ = simulate_match(game, ruleset, seed=5, protocol=protocol)
    seats = len(doc["seats"])
    for seat in (None, 0, seats - 1, seats):  # seats: nobody's
        py = analyse(tally([doc], seat, None))
        js = js_stats(harness, doc, seat)
        same_analysis(js, py)
        if seat is not None and seat < seats:
            assert py["tests"], (game, seat)  # every form gives the player something to test


def test_javascript_and_python_agree_on_random_and_biased_tallies(harness: Any) -> None:
    rng = random.Random(25)
    for i in range(40):
        n = rng.choice([1, 3, 10, 40, 150, 600])
        bias = rng.choice([0.0, 0.0, 0.2, 0.5])  # a loaded die: some rolls forced to doubles
        rolls = []
        for _ in range(n):
            a = rng.randint(1, 6)
            rolls.append((a, a) if rng.random() < bias else (a, rng.randint(1, 6)))
        faces = Counter(d for r in rolls for d in r)
        hands = [
            Hand("hokm", rng.randint(0, 25), 10.0 + rng.random(), 20.0 + rng.random())
            for _ in range(i % 4)
        ]
        hands += [Hand("mexican_train", rng.randint(0, 5), 1.5, 1.2) for _ in range(i % 3)]
        t = Tally(faces=faces, rolls=rolls, hands=hands)
        js = harness.evaluate("(t) => window.qahwaFair.statsAnalyse(t)", js_tally(t))
        same_analysis(js, analyse(t))


def test_a_planted_run_of_doubles_is_flagged_by_both(harness: Any) -> None:
    rolls = [(a, b) for a in range(1, 7) for b in range(1, 7)]  # fair: 6 doubles in 36
    rolls += [(d, d) for d in (1, 2, 3, 4, 5, 6, 1, 2, 3, 4)]  # a run of ten doubles
    t = Tally(faces=Counter(d for r in rolls for d in r), rolls=rolls)
    py = analyse(t)
    js = harness.evaluate(
        "(t) => { const a = window.qahwaFair.statsAnalyse(t); "
        "return Object.assign(a, {text: window.qahwaFair.statsSentence(a)}); }",
        js_tally(t),
    )
    same_analysis(js, py)
    assert py["unusual"] and js["unusual"]
    assert py["sentence"].startswith("unusual at p = ") and "one player in" in py["sentence"]
    assert js["text"].startswith("unusual at p = ") and "about one player in" in js["text"]
    doubles = next(x for x in js["tests"] if x["name"] == "doubles")
    assert doubles["observed"] == 16 and doubles["p_adjusted"] < 0.01
    fair = Tally(faces=Counter(d for r in rolls[:36] for d in r), rolls=rolls[:36])
    fair_js = harness.evaluate(
        "(t) => window.qahwaFair.statsSentence(window.qahwaFair.statsAnalyse(t))", js_tally(fair)
    )
    assert fair_js == analyse(fair)["sentence"] == "nothing unusual"


# ---------------------------------------------------------------------------------------
# On the page.
# ---------------------------------------------------------------------------------------
def _site(runtime: bool) -> Site:
    s = Site(runtime_dir=RUNTIME_DIR if runtime else None)
    s.keys = keys_doc()  # test_verify_cli_helpers' signer
    return s


def _needs_runtime() -> None:
    if not runtime_installed():
        pytest.skip("the Pyodide runtime is not installed (make pyodide)")  # fails under CI


def check(page: Any, site: Site, doc: dict[str, Any], seat: int | None = None) -> str:
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-id", site.add(doc))
    if seat is not None:
        page.fill("#in-own-seat", str(seat))
    page.click("#go")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-run", "1", timeout=30_000)
    expect(verdict).not_to_have_attribute("data-replay", "pending", timeout=120_000)
    return str(verdict.get_attribute("data-verdict"))


def shown_stats(page: Any) -> dict[str, Any]:
    page.wait_for_selector("#stats", timeout=60_000)
    return dict(
        page.evaluate("""() => {
      const s = document.getElementById('stats');
      return {by: s.dataset.by, unusual: s.dataset.unusual,
              sentence: s.querySelector('p.sentence').textContent,
              tests: Array.from(s.querySelectorAll('tr[data-test]')).map(r => r.dataset.test),
              text: s.innerText};
    }""")
    )


@pytest.mark.parametrize("runtime", [False, True], ids=["no-runtime", "runtime"])
def test_a_genuine_match_shows_nothing_unusual(browser: Any, runtime: bool) -> None:
    if runtime:
        _needs_runtime()
    site = _site(runtime)
    doc = full_match("tawla")
    want = analyse(tally([doc], None, None))
    try:
        with open_page(browser, "about:blank") as page:
            assert check(page, site, doc) == ("pass" if runtime else "incomplete")
            got = shown_stats(page)
            assert got["by"] == ("python" if runtime else "js")
            assert got["sentence"] == want["sentence"] == "nothing unusual"
            assert got["unusual"] == "false"
            assert got["tests"] == [x["name"] for x in want["tests"]]
            assert ("verify_cli.stats on Pyodide" in got["text"]) == runtime
            page.click("button[data-lang=ar]")
            assert page.inner_text("#stats p.sentence") == "لا شيء غير عادي"
            page.click("button[data-lang=fa]")
            assert page.inner_text("#stats p.sentence") == "چیز غیرعادی‌ای نیست"
            # the own-seed field's seat narrows the statistics to that seat
            check(page, site, doc, seat=1)
            one = analyse(tally([doc], 1, None))
            assert [x["n"] for x in one["tests"]] != [x["n"] for x in want["tests"]]
            shown = shown_stats(page)
            assert "seat 1" in shown["text"] and shown["sentence"] == one["sentence"]
            assert page.js_errors == []
    finally:
        site.close()


def test_a_failed_transcript_shows_no_statistics(browser: Any) -> None:
    doc = full_match("tawla")
    dice = next(
        e
        for e in doc["events"]
        if e["type"] == "chance" and e["kind"] == "dice" and "/opening/" not in e["label"]
    )
    dice["result"] = [6, 6] if dice["result"] != [6, 6] else [5, 5]
    forged = SIGNER.signed({k: v for k, v in doc.items() if k != "signature"})
    site = _site(False)
    try:
        with open_page(browser, "about:blank") as page:
            assert check(page, site, forged) == "fail"
            page.wait_for_timeout(200)  # nothing is computed after a failure; give it the chance
            assert page.locator("#stats").count() == 0
            assert page.js_errors == []
    finally:
        site.close()


# ---------------------------------------------------------------------------------------
# qahwaFair.verify: the page's verdict, never "pass" without the rules replay.
# ---------------------------------------------------------------------------------------
def api(page: Any, doc: dict[str, Any]) -> dict[str, Any]:
    return dict(page.evaluate("([t, k]) => window.qahwaFair.verify(t, k)", [json.dumps(doc), PUB]))


def _v2_doc() -> dict[str, Any]:
    return v2_match("tawla", keyed=True, seed=3)


def _forged(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["result"]["winners"] = [1 - doc["result"]["winners"][0]]
    if doc["protocol"] == PROTOCOL_V2:
        return rechain(doc)
    return SIGNER.signed({k: v for k, v in doc.items() if k != "signature"})


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_api_without_the_runtime_never_passes(browser: Any, protocol: str) -> None:
    doc = full_match("tawla") if protocol == "v1" else _v2_doc()
    site = _site(False)
    try:
        with open_page(browser, f"{site.url}/verify?lang=en") as page:
            for d in (doc, _forged(doc)):
                got = api(page, d)
                assert got["verdict"] == "incomplete" and got["replay"] == "unavailable", got
                rows = {c["id"]: c["ok"] for c in got["checks"]}
                assert rows["signature"] is True and rows["replay"] is None
                assert rows["result"] is None
            # the same statistics as the page: JavaScript's, since the transcript checked out
            assert got["stats"]["by"] == "js"
            assert page.js_errors == []
        with open_page(browser, PAGE.as_uri() + "?lang=en") as page:  # a saved page
            got = api(page, doc)
            assert got["verdict"] == "incomplete" and got["replay"] == "unavailable"
    finally:
        site.close()


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_api_with_the_runtime_passes_only_what_replays(browser: Any, protocol: str) -> None:
    _needs_runtime()
    doc = full_match("tawla") if protocol == "v1" else _v2_doc()
    site = _site(True)
    try:
        with open_page(browser, f"{site.url}/verify?lang=en") as page:
            got = api(page, doc)
            assert (got["verdict"], got["replay"]) == ("pass", "done"), got["checks"]
            assert got["stats"]["by"] == "python"
            assert got["stats"]["sentence"] == "nothing unusual"
            bad = api(page, _forged(doc))
            assert (bad["verdict"], bad["replay"]) == ("fail", "done")
            assert {c["id"]: c["ok"] for c in bad["checks"]}["result"] is False
            assert bad["stats"] is None
            assert page.js_errors == []
    finally:
        site.close()


@pytest.mark.parametrize("runtime", [False, True], ids=["no-runtime", "runtime"])
def test_the_first_note_says_what_this_page_will_do(browser: Any, runtime: bool) -> None:
    if runtime:
        _needs_runtime()
    site = _site(runtime)
    try:
        with open_page(browser, f"{site.url}/verify?lang=en") as page:
            note = page.locator("#rules-note")
            if runtime:
                expect(note).to_contain_text(
                    "will check the signatures, recompute the chance "
                    "events and replay the game rules"
                )
            else:
                expect(note).to_contain_text(
                    "it will NOT replay the game rules here (this "
                    "server has no Python runtime for the page)"
                )
            intro = page.inner_text("p.intro")
            assert "qahwa-fair/1 and qahwa-fair/2" in intro and "never says" in intro
            assert "qahwa-fair/1 and qahwa-fair/2" in page.inner_text("footer")
    finally:
        site.close()
    with open_page(browser, PAGE.as_uri() + "?lang=en") as page:
        expect(page.locator("#rules-note")).to_contain_text(
            "it will NOT replay the game rules here (the page was opened from a file)"
        )
