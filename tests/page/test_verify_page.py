"""The public verify page (qahwa_page/static/verify.html) in a real browser.

Drives Debian's /usr/bin/chromium with the plain ``playwright`` package. The page is served
by a small stdlib HTTP server that answers the three routes the page uses (``/verify``,
``/v1/matches/{id}/transcript``, ``/v1/keys``) from transcripts made offline with
``games.transcript.simulate_match`` (or built directly with ``fairness`` for the display
tests), signed with a fresh ``fairness.Signer``. ``test_live_service`` plays matches over
HTTP against the real service when ``tests/support/live_server.py`` is there.

``PYTHONPATH=tests python tests/page/test_verify_page.py --screenshot docs/img/verify-page.png`` redraws the
screenshot in docs/verify-page.md.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest
from playwright.sync_api import expect

from fairness import (
    PROTOCOL,
    Signer,
    Stream,
    canonical_json,
    canonical_ruleset,
    canonical_sort,
    commitment,
    deck52,
    deck_qahve,
    match_key,
    public_key_b64,
    tiles,
)
from games import GAME_IDS
from games.registry import engine_class
from games.transcript import build_transcript, simulate_match
from qahwa_page.pyodide import PAGE_CSP, RUNTIME_DIR, asset, runtime_installed
from tests.page.page_support import PAGE, ROOT, VECTOR_DRAWS_JS, assert_vector_draws
from tests.support import vector
from tests.support.browser import NEEDS_CHROMIUM, launch

pytestmark = NEEDS_CHROMIUM

SIGNER = Signer.generate()
KEYS = {
    "keys": [
        {"key_id": SIGNER.key_id, "alg": "ed25519", "public_key": public_key_b64(SIGNER.public_key)}
    ]
}


# ---------------------------------------------------------------------------------------
# A stand-in for the service's public routes.
# ---------------------------------------------------------------------------------------
class Site:
    """Serves the page and transcripts on 127.0.0.1 (a thread; `close()` stops it).

    With ``runtime_dir`` it also serves the page's Python as the service does (the same
    ``qahwa_page.pyodide.asset``: manifest, sources zip, worker, Pyodide runtime); without, those
    answer 404 like a server with no runtime, and the page does not replay the rules.
    """

    def __init__(self, runtime_dir: Path | None = None) -> None:
        self.runtime_dir = runtime_dir
        self.sources_override: bytes | None = None  # serve these bytes as the sources zip
        self.transcripts: dict[str, str] = {}
        self.unfinished: set[str] = set()
        self.keys: dict[str, Any] = KEYS
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(
                self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: int, code: str, message: str) -> None:
                body = json.dumps({"error": {"code": code, "message": message}}).encode()
                self._send(status, body, "application/json")

            def do_GET(self) -> None:  # noqa: N802
                path = urlsplit(self.path).path
                found = (
                    asset(path[len("/static/") :], site.runtime_dir)
                    if site.runtime_dir is not None and path.startswith("/static/")
                    else None
                )
                if found is not None:
                    body = found.body.read_bytes() if isinstance(found.body, Path) else found.body
                    if site.sources_override is not None and path.startswith("/static/qahwa-py-"):
                        body = site.sources_override
                    self._send(200, body, found.media_type, found.headers)
                elif path == "/verify":
                    self._send(
                        200,
                        PAGE.read_bytes(),
                        "text/html; charset=utf-8",
                        {"Content-Security-Policy": PAGE_CSP},
                    )
                elif path == "/verify.js":  # verify.html's relative <script src>
                    body = (PAGE.parent / "verify.js").read_bytes()
                    self._send(200, body, "text/javascript; charset=utf-8")
                elif path == "/v1/keys":
                    self._send(200, json.dumps(site.keys).encode(), "application/json")
                elif path.startswith("/v1/matches/") and path.endswith("/transcript"):
                    mid = unquote(path[len("/v1/matches/") : -len("/transcript")])
                    if mid in site.transcripts:
                        body = site.transcripts[mid].encode("utf-8")
                        self._send(200, body, "application/json")
                    elif mid in site.unfinished:
                        self._error(409, "not_ended", "the match is still being played")
                    else:
                        self._error(404, "not_found", f"no match {mid}")
                else:
                    self._error(404, "not_found", "no such page")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, doc: dict[str, Any], *, style: str = "pretty", as_id: str | None = None) -> str:
        """Publish a transcript; `style` varies how the JSON text is written."""
        if style == "pretty":
            text = json.dumps(doc, indent=2)  # ASCII escapes, as many servers write it
        elif style == "compact":
            text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        else:
            text = style
        mid = as_id if as_id is not None else str(doc["match_id"])
        self.transcripts[mid] = text
        return mid

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------
# Transcripts.
# ---------------------------------------------------------------------------------------
# The verdict of a genuine transcript where the rules are not replayed (this stand-in serves no
# Python runtime): "incomplete", never "pass" (issue 23).
NO_REPLAY = "incomplete"
SEEDS_UNICODE = ["قهوة-١", "شانس ☕ seed"]


def genuine(game: str, seed: int = 1) -> dict[str, Any]:
    """A whole simulated match, signed (non-ASCII client seeds where the game has 2+ seats)."""
    cls = engine_class(game)
    n = cls.seat_count(cls.parse_ruleset({}))
    seeds = [SEEDS_UNICODE[s % 2] + f"/{s}" for s in range(n)]
    while True:  # a plain session's bot may close before drawing: take the next seed then
        doc, _ = simulate_match(
            game, seed=seed, client_seeds=seeds, match_id=f"sim-{game}-ü-{seed}", protocol=PROTOCOL
        )
        if chance_seqs(doc):
            break
        seed += 1000
    doc["seats"][0]["name"] = "Layla ليلى"
    doc["created_at"] = "2026-12-02T10:00:00Z"
    doc["ended_at"] = "2026-12-02T10:20:00Z"
    return SIGNER.signed(doc)


def built(
    game: str,
    ruleset: dict[str, Any],
    draws: list[tuple[str, str, Any]],
    *,
    n_seats: int,
    match_id: str | None = None,
) -> dict[str, Any]:
    """A signed transcript whose chance events are derived with `fairness` directly.

    `draws`: (label, kind, arg) with kind dice (arg = (count, sides)), uniform (arg = n) or
    shuffle (arg = the item list). No actions: the page does not replay the rules.
    """
    server_seed = random.Random(f"{game}-{match_id}").randbytes(32)
    rs = canonical_ruleset(ruleset)
    mid = match_id or f"built-{game}"
    seeds = [f"seat-{s}-seed" for s in range(n_seats)]
    key = match_key(server_seed, mid, game, rs, seeds)
    events: list[dict[str, Any]] = []
    for label, kind, arg in draws:
        st = Stream(key, label)
        ev: dict[str, Any]
        if kind == "dice":
            ev = {
                "type": "chance",
                "label": label,
                "kind": "dice",
                "args": {"count": arg[0], "sides": arg[1]},
                "result": st.dice(*arg),
            }
        elif kind == "uniform":
            ev = {
                "type": "chance",
                "label": label,
                "kind": "uniform",
                "args": {"n": arg},
                "result": st.uniform(arg),
            }
        else:
            ev = {"type": "chance", "label": label, "kind": "shuffle", "result": st.shuffle(arg)}
        events.append({"seq": len(events), **ev})
    seats = [
        {"seat": s, "name": f"p{s}", "client_seed": cs, "seed_source": "player"}
        for s, cs in enumerate(seeds)
    ]
    doc = build_transcript(
        match_id=mid,
        game=game,
        ruleset=rs,
        server_seed=server_seed,
        seats=seats,
        events=events,
        result={"reason": "finished", "winners": [0], "scores": [1, 0], "detail": {}},
    )
    return SIGNER.signed(doc)


def chance_seqs(doc: dict[str, Any]) -> list[int]:
    return [e["seq"] for e in doc["events"] if e["type"] == "chance"]


# ---------------------------------------------------------------------------------------
# Browser plumbing.
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def shared_page(browser: Any) -> Iterator[Any]:
    """One page reused by the tests that need nothing special (a context costs ~0.5 s)."""
    ctx = browser.new_context(locale="en-US")
    page = ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    try:
        yield page
    finally:
        ctx.close()


@pytest.fixture
def new_page(browser: Any, shared_page: Any) -> Iterator[Callable[..., Any]]:
    """A page to drive: the shared one, or a fresh context for a locale / init script."""
    contexts: list[Any] = []

    def make(locale: str | None = None, init_script: str | None = None, fresh: bool = False) -> Any:
        if locale is None and init_script is None and not fresh:
            shared_page.js_errors.clear()
            return shared_page
        ctx = browser.new_context(locale=locale or "en-US")
        contexts.append(ctx)
        if init_script:
            ctx.add_init_script(init_script)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.js_errors = errors
        return page

    yield make
    assert shared_page.js_errors == []
    for ctx in contexts:
        ctx.close()


def run_verify(page: Any) -> str:
    """Check what the page was given; the verdict once final (the replay too, if any)."""
    page.click("#go")
    page.wait_for_selector("#verdict[data-verdict]", timeout=30_000)
    expect(page.locator("#verdict")).not_to_have_attribute("data-replay", "pending", timeout=60_000)
    assert page.js_errors == []
    return str(page.get_attribute("#verdict", "data-verdict"))


def verify_match(page: Any, base: str, match_id: str) -> str:
    page.goto(f"{base}/verify?lang=en")
    page.fill("#in-id", match_id)
    return run_verify(page)


def statuses(page: Any) -> dict[int, str]:
    """seq -> ok/bad of every chance event row on the page."""
    got = page.eval_on_selector_all(
        "li.ev", "els => els.map(e => [Number(e.dataset.seq), e.dataset.status])"
    )
    return {int(s): str(st) for s, st in got}


def check_status(page: Any, check: str) -> str:
    return str(page.get_attribute(f"tr[data-check={check}]", "data-status"))


def v1_key(doc: dict[str, Any]) -> bytes:
    """K of a qahwa-fair/1 transcript, from its fields (fairness-v1.md §3)."""
    seeds = [s["client_seed"] for s in doc["seats"]]
    return match_key(doc["server_seed"], doc["match_id"], doc["game"], doc["ruleset"], seeds)


def red(
    new_page: Any, site: Site, doc: dict[str, Any], bad: Sequence[str], ok: Sequence[str] = ()
) -> Any:
    """``doc``, published and verified by its id on a new page, fails: its checks ``bad``
    are bad, ``ok`` ok. The page."""
    page = new_page()
    assert verify_match(page, site.url, site.add(doc)) == "fail"
    for check in bad:
        assert check_status(page, check) == "bad", check
    for check in ok:
        assert check_status(page, check) == "ok", check
    return page


def check_ok(page: Any, check: str) -> str:
    """The row's ``data-ok``: true / false / unknown."""
    return str(page.get_attribute(f"tr[data-check={check}]", "data-ok"))


# ---------------------------------------------------------------------------------------
# Genuine transcripts: all green.
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAME_IDS))
def test_genuine_match_is_all_green(new_page: Any, site: Site, game: str) -> None:
    doc = genuine(game)
    mid = site.add(doc)
    page = new_page()
    assert verify_match(page, site.url, mid) == NO_REPLAY
    seqs = chance_seqs(doc)
    assert seqs, "a match draws something"
    assert statuses(page) == {s: "ok" for s in seqs}
    for check in (
        "protocol",
        "seed",
        "commitment",
        "seats",
        "key",
        "seq",
        "labels",
        "chance",
        "signature",
    ):
        assert check_status(page, check) == "ok", check
        assert check_ok(page, check) == "true", check
    # this stand-in serves no Python runtime: the rules rows say they were not replayed
    for check in ("replay", "result", "agree"):
        assert check_ok(page, check) == "unknown", check
        assert "not replayed" in page.inner_text(f"tr[data-check={check}]")
    assert v1_key(doc).hex() in page.inner_text("tr[data-check=key]")
    assert f"verify --server {site.url} --match '{mid}'" in page.inner_text("#rules-note")


def test_compact_unicode_text_and_wrapper_are_accepted(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=7)
    doc = SIGNER.signed({**doc, "note": "é\u2028\U0001f600\x07"})
    site.add(doc, style="compact")
    wrapped = genuine("rng", seed=8)
    site.add(wrapped, style=json.dumps({"transcript": wrapped}))
    page = new_page()
    assert verify_match(page, site.url, doc["match_id"]) == NO_REPLAY
    page = new_page()
    assert verify_match(page, site.url, wrapped["match_id"]) == NO_REPLAY


# ---------------------------------------------------------------------------------------
# Tampering: red at the right place.
# ---------------------------------------------------------------------------------------
def _tamper_result(ev: dict[str, Any]) -> None:
    if ev["kind"] == "dice":
        sides = ev["args"]["sides"]
        ev["result"][0] = ev["result"][0] % sides + 1
    elif ev["kind"] == "uniform":
        ev["result"] = (ev["result"] + 1) % ev["args"]["n"]
        if ev["args"]["n"] == 1:
            ev["result"] = 1
    else:
        r = ev["result"]
        r[0], r[-1] = r[-1], r[0]


@pytest.mark.parametrize("resign", [True, False])
def test_tampered_chance_result_is_red_at_that_event(
    new_page: Any, site: Site, resign: bool
) -> None:
    base = built(
        "tawla",
        {"cube": True},
        [
            ("g0/opening/0", "dice", (2, 6)),
            ("g0/roll/1", "dice", (2, 6)),
            ("g0/roll/2", "dice", (2, 6)),
            ("g0/roll/3", "dice", (2, 6)),
        ],
        n_seats=2,
        match_id=f"tamper-{resign}",
    )
    doc = copy.deepcopy(base)
    target = doc["events"][2]
    original = list(target["result"])
    _tamper_result(target)
    assert target["result"] != original
    doc = SIGNER.signed(doc) if resign else doc
    mid = site.add(doc)
    page = new_page()
    assert verify_match(page, site.url, mid) == "fail"
    assert statuses(page) == {0: "ok", 1: "ok", 2: "bad", 3: "ok"}
    assert check_status(page, "chance") == "bad"
    assert check_status(page, "signature") == ("ok" if resign else "bad")
    row = page.locator("li.ev[data-seq='2']")
    expected = row.locator(".expected [data-value]").evaluate_all(
        "els => els.map(e => Number(e.dataset.value))"
    )
    found = row.locator(".found [data-value]").evaluate_all(
        "els => els.map(e => Number(e.dataset.value))"
    )
    assert expected == original
    assert found == target["result"]


@pytest.mark.parametrize("game", list(GAME_IDS))
def test_tampered_result_in_genuine_match(new_page: Any, site: Site, game: str) -> None:
    doc = genuine(game, seed=3)
    seqs = chance_seqs(doc)
    # A one-item shuffle cannot be tampered with by reordering: pick from the others.
    open_to_tamper = [
        s
        for s in seqs
        if doc["events"][s]["kind"] != "shuffle" or len(doc["events"][s]["result"]) >= 2
    ]
    target_seq = open_to_tamper[len(open_to_tamper) // 2]
    target = doc["events"][target_seq]
    _tamper_result(target)
    doc = SIGNER.signed(doc)
    mid = site.add(doc)
    page = new_page()
    assert verify_match(page, site.url, mid) == "fail"
    assert statuses(page) == {s: ("bad" if s == target_seq else "ok") for s in seqs}


def test_tampered_shuffle_shows_expected_and_found(new_page: Any, site: Site) -> None:
    doc = built(
        "iraqi_domino", {}, [("r0/shuffle", "shuffle", tiles(6))], n_seats=4, match_id="tiles-t"
    )
    original = list(doc["events"][0]["result"])
    doc["events"][0]["result"][3], doc["events"][0]["result"][5] = original[5], original[3]
    doc = SIGNER.signed(doc)
    page = red(new_page, site, doc, [])
    row = page.locator("li.ev[data-seq='0']")
    assert row.get_attribute("data-status") == "bad"
    assert "position 3" in row.inner_text()
    exp = row.locator(".expected [data-code]").evaluate_all("els => els.map(e => e.dataset.code)")
    fnd = row.locator(".found [data-code]").evaluate_all("els => els.map(e => e.dataset.code)")
    assert exp == original
    assert fnd == doc["events"][0]["result"]


def test_duplicate_item_in_shuffle_is_red(new_page: Any, site: Site) -> None:
    doc = built("hokm", {}, [("hakem", "shuffle", deck52())], n_seats=4, match_id="dup")
    doc["events"][0]["result"][10] = doc["events"][0]["result"][11]
    doc = SIGNER.signed(doc)
    page = red(new_page, site, doc, [])
    row = page.locator("li.ev[data-seq='0']")
    assert row.get_attribute("data-status") == "bad"
    assert "twice" in row.inner_text()


def test_tampered_seed_fails_commitment_and_events(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=11)
    doc["server_seed"] = "%064x" % (int(doc["server_seed"], 16) ^ 1)
    doc = SIGNER.signed(doc)
    page = red(new_page, site, doc, ["commitment"], ok=["signature"])
    seqs = chance_seqs(doc)
    # Another seed gives another K: what is recomputed no longer matches the transcript.
    assert statuses(page) == {s: "bad" for s in seqs}
    assert commitment(doc["server_seed"]) in page.inner_text("tr[data-check=commitment]")


def test_tampered_commitment_only(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=12)
    doc = SIGNER.signed({**doc, "commitment": "0" * 64})
    page = red(new_page, site, doc, ["commitment"])
    assert set(statuses(page).values()) == {"ok"}


def test_tampered_signature_is_red(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=13)
    doc = SIGNER.signed(doc)
    raw = bytearray(base64.b64decode(doc["signature"]["value"]))
    raw[5] ^= 0x40
    doc["signature"]["value"] = base64.b64encode(bytes(raw)).decode()
    page = red(new_page, site, doc, ["signature"])
    assert set(statuses(page).values()) == {"ok"}
    assert [check_status(page, c) for c in ("commitment", "chance")] == ["ok", "ok"]


def test_edit_after_signing_breaks_signature(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=14)
    doc = SIGNER.signed(doc)
    doc["seats"][0]["name"] = "someone else"  # not a chance result: only the signature sees it
    red(new_page, site, doc, ["signature"], ok=["chance"])


def test_transcript_of_another_match_is_red(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=25)
    mid = site.add(doc, as_id="asked-for-this")
    page = new_page()
    assert verify_match(page, site.url, mid) == "fail"
    assert check_status(page, "match") == "bad"
    assert set(statuses(page).values()) == {"ok"}
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-url", f"{site.url}/v1/matches/asked-for-this/transcript")
    assert run_verify(page) == "fail"
    assert check_status(page, "match") == "bad"


def test_seq_gap_and_repeated_label(new_page: Any, site: Site) -> None:
    doc = built(
        "tawla",
        {},
        [("g0/opening/0", "dice", (2, 6)), ("g0/roll/1", "dice", (2, 6))],
        n_seats=2,
        match_id="labels-t",
    )
    again = copy.deepcopy(doc["events"][1])
    again["seq"] = 5
    doc["events"].append(again)
    doc = SIGNER.signed(doc)
    page = red(new_page, site, doc, ["seq", "labels"])
    assert statuses(page) == {0: "ok", 1: "ok", 5: "bad"}


def test_wrong_protocol_and_bad_client_seed(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=15)
    doc = SIGNER.signed({**doc, "protocol": "qahwa-fair/0"})
    red(new_page, site, doc, ["protocol"])
    doc = genuine("rng", seed=16)
    doc["seats"][0]["client_seed"] = "tab\there"
    doc = SIGNER.signed(doc)
    red(new_page, site, doc, ["seats", "key"])


# ---------------------------------------------------------------------------------------
# Keys, Ed25519 support, loading errors, offline use.
# ---------------------------------------------------------------------------------------
def test_pasted_key_pins_the_signer(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=17)
    mid = site.add(doc)
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-id", mid)
    page.fill("#in-key", public_key_b64(Signer.generate().public_key))
    assert run_verify(page) == "fail"
    assert check_status(page, "signature") == "bad"
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-id", mid)
    page.fill("#in-key", "not a key")
    assert run_verify(page) == "fail"
    assert "base64" in page.inner_text("tr[data-check=signature]")
    page = new_page()
    page.goto(
        f"{site.url}/verify?lang=en&key={quote(KEYS['keys'][0]['public_key'])}&match={quote(mid)}"
    )
    page.wait_for_selector("#verdict[data-verdict]")
    assert page.get_attribute("#verdict", "data-verdict") == NO_REPLAY
    assert "pasted key" in page.inner_text("tr[data-check=signature]")


def test_unknown_key_id_is_not_a_pass(new_page: Any, site: Site) -> None:
    other = Signer.generate()
    doc = genuine("rng", seed=18)
    mid = site.add(other.signed(doc))
    page = new_page()
    assert verify_match(page, site.url, mid) == "incomplete"
    assert check_status(page, "signature") == "warn"
    assert other.key_id in page.inner_text("tr[data-check=signature]")


NO_ED25519 = """
(() => {
  const orig = crypto.subtle.importKey.bind(crypto.subtle);
  crypto.subtle.importKey = function (fmt, data, alg, ...rest) {
    const name = typeof alg === 'string' ? alg : alg && alg.name;
    if (name === 'Ed25519') {
      return Promise.reject(new DOMException('Unrecognized name.', 'NotSupportedError'));
    }
    return orig(fmt, data, alg, ...rest);
  };
})();
"""


def test_browser_without_ed25519_still_checks_the_signature(new_page: Any, site: Site) -> None:
    """A browser whose Web Crypto has no Ed25519 still checks it: the page's core is clients/ts,
    whose verifyEd25519 falls back to the audited @noble/ed25519 (the old page left the
    signature "NOT checked" there, issue 47)."""
    doc = genuine("rng", seed=19)
    mid = site.add(doc)
    page = new_page(init_script=NO_ED25519)
    verify_match(page, site.url, mid)
    assert check_status(page, "signature") == "ok", page.inner_text("tr[data-check=signature]")
    forged = json.loads(json.dumps(doc))
    forged["created_at"] = "2020-01-01T00:00:00Z"  # the server's signature no longer covers it
    mid = site.add(forged, as_id="forged-19")
    page = new_page(init_script=NO_ED25519)
    assert verify_match(page, site.url, mid) == "fail"
    assert check_status(page, "signature") == "bad"


def test_unfinished_unknown_and_invalid_input(new_page: Any, site: Site) -> None:
    site.unfinished.add("still-playing")
    page = new_page()
    assert verify_match(page, site.url, "still-playing") == "error"
    assert "has not ended yet" in page.inner_text("#verdict")
    page = new_page()
    assert verify_match(page, site.url, "no-such-match") == "error"
    assert "no such match" in page.inner_text("#verdict")
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-paste", '{"protocol": "qahwa-fair/1", ')
    assert run_verify(page) == "error"
    assert "not valid JSON" in page.inner_text("#verdict")
    page.fill("#in-paste", "[1, 2]")
    page.click("#go")
    # Waited for from Python (playwright's expect), not with a string the page would have to
    # evaluate: the page's CSP has no 'unsafe-eval', so wait_for_function("...") fails there.
    expect(page.locator("#verdict")).not_to_contain_text("JSON:", timeout=30_000)
    assert page.get_attribute("#verdict", "data-verdict") == "error"
    assert "must be a JSON object" in page.inner_text("#verdict")
    assert page.locator("li.ev").count() == 0


def test_transcript_url_and_file_upload(new_page: Any, site: Site, tmp_path: Path) -> None:
    doc = genuine("rng", seed=20)
    site.add(doc)
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.fill("#in-url", f"{site.url}/v1/matches/{quote(doc['match_id'])}/transcript")
    assert run_verify(page) == NO_REPLAY
    f = tmp_path / "t.json"
    f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    page = new_page()
    page.goto(f"{site.url}/verify?lang=en")
    page.set_input_files("#in-file", str(f))
    assert page.is_checked("input[name=src][value=file]")
    assert run_verify(page) == NO_REPLAY  # keys come from the server that serves the page


def test_offline_from_file_url(new_page: Any) -> None:
    doc = genuine("rng", seed=21)
    page = new_page()
    page.goto(PAGE.as_uri() + "?lang=en")
    page.fill("#in-paste", json.dumps(doc, indent=1))
    page.fill("#in-key", KEYS["keys"][0]["public_key"])
    assert run_verify(page) == NO_REPLAY
    page = new_page()
    page.goto(PAGE.as_uri() + "?lang=en")
    page.fill("#in-paste", json.dumps(doc))
    assert run_verify(page) == "incomplete"  # no key offline unless pasted
    assert "paste the server public key" in page.inner_text("tr[data-check=signature]")
    assert check_ok(page, "replay") == "unknown"
    assert "opened from a file" in page.inner_text("tr[data-check=replay]")
    page = new_page()
    page.goto(PAGE.as_uri() + "?lang=en")
    page.fill("#in-id", "m-1")
    assert run_verify(page) == "error"
    assert "served by a qahwa server" in page.inner_text("#verdict")


def test_page_makes_no_third_party_requests(new_page: Any, site: Site) -> None:
    doc = genuine("rng", seed=22)
    site.add(doc)
    page = new_page(fresh=True)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    assert verify_match(page, site.url, doc["match_id"]) == NO_REPLAY
    assert seen and all(u.startswith(site.url) for u in seen), seen


# ---------------------------------------------------------------------------------------
# What people see: dice faces, cards, tiles, groups; languages.
# ---------------------------------------------------------------------------------------
def test_tawla_dice_faces_and_groups(new_page: Any, site: Site) -> None:
    doc = built(
        "tawla",
        {},
        [
            ("g0/opening/0", "dice", (2, 6)),
            ("g0/roll/1", "dice", (2, 6)),
            ("g1/opening/0", "dice", (2, 6)),
        ],
        n_seats=2,
        match_id="faces",
    )
    page = new_page()
    assert verify_match(page, site.url, site.add(doc)) == NO_REPLAY
    faces = page.locator("li.ev[data-seq='1'] .die").all_inner_texts()
    assert faces == ["⚀⚁⚂⚃⚄⚅"[v - 1] for v in doc["events"][1]["result"]]
    groups = page.eval_on_selector_all("section.group", "els => els.map(e => e.dataset.group)")
    assert groups == ["g0", "g1"]
    assert page.inner_text("section[data-group=g1] h3") == "Game 2"


def test_hokm_hands_as_cards(new_page: Any, site: Site) -> None:
    # no cut (the deal waits for the cutter with the default ruleset; these events have no moves)
    doc = built(
        "hokm",
        {"cut": False},
        [("hakem", "shuffle", deck52()), ("h0/shuffle", "shuffle", deck52())],
        n_seats=4,
        match_id="cards",
    )
    page = new_page()
    assert verify_match(page, site.url, site.add(doc)) == NO_REPLAY
    hakem_deck = doc["events"][0]["result"]
    first_ace = next(i for i, c in enumerate(hakem_deck) if c[0] == "A")
    hakem = first_ace % 4
    assert f"first hakem: seat {hakem}" in page.inner_text("li.ev[data-seq='0']")
    deal = doc["events"][1]["result"]
    hands = page.locator("li.ev[data-seq='1'] .hand")
    assert hands.count() == 4
    packets = [(0, 5, 0), (5, 10, 1), (10, 15, 2), (15, 20, 3)] + [
        (i, i + 4, (i - 20) // 4 % 4) for i in range(20, 52, 4)
    ]
    for k in range(4):
        want = sorted(c for a, b, off in packets if off == k for c in deal[a:b])
        hand = hands.nth(k)
        assert hand.locator(".who").inner_text().startswith(f"seat {(hakem + k) % 4}")
        got = hand.locator(".card").evaluate_all("els => els.map(e => e.dataset.code)")
        assert sorted(got) == want
    reds = page.locator("li.ev[data-seq='1'] .card.red").evaluate_all(
        "els => els.map(e => e.dataset.code[1])"
    )
    assert reds and set(reds) <= {"H", "D"} and len(reds) == 26
    text = page.inner_text("li.ev[data-seq='1']")
    assert all(s in text for s in "♠♥♦♣")


def test_qahve_jokers_and_domino_pips(new_page: Any, site: Site) -> None:
    doc = built(
        "qahve",
        {},
        [("dealer", "uniform", 4), ("h0/shuffle", "shuffle", deck_qahve())],
        n_seats=4,
        match_id="jokers",
    )
    page = new_page()
    assert verify_match(page, site.url, site.add(doc)) == NO_REPLAY
    assert page.locator(".card.joker").count() == 2
    assert page.locator(".card.joker.red").get_attribute("data-code") == "JR"
    dealer = doc["events"][0]["result"]
    first = page.locator("li.ev[data-seq='1'] .hand .who").first.inner_text()
    assert first.startswith(f"seat {(dealer + 1) % 4}")

    doc = built(
        "mexican_train",
        {"players": 3},
        [("r0/shuffle", "shuffle", [t for t in tiles(12) if t != "12-12"])],
        n_seats=3,
        match_id="pips",
    )
    page = new_page()
    assert verify_match(page, site.url, site.add(doc)) == NO_REPLAY
    tiles_shown = page.locator("li.ev .tile")
    assert tiles_shown.count() == 90
    first_code = doc["events"][0]["result"][0]
    a, b = (int(x) for x in first_code.split("-"))
    first_tile = page.locator(f".tile[data-code='{first_code}'] svg")
    assert first_tile.nth(0).locator("circle").count() == a
    assert first_tile.nth(1).locator("circle").count() == b
    assert "engine double 12-12" in page.inner_text("li.ev[data-seq='0']")


def test_languages_and_rtl(new_page: Any, site: Site) -> None:
    mid = site.add(genuine("rng", seed=23))
    page = new_page(locale="ar-IQ")
    page.goto(f"{site.url}/verify")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
        "ar",
        "rtl",
    ]
    page.fill("#in-id", mid)
    assert run_verify(page) == NO_REPLAY
    assert "تحقق غير كامل" in page.inner_text("#verdict")
    page.click("button[data-lang=fa]")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    assert "تأیید ناقص" in page.inner_text("#verdict")
    page.click("button[data-lang=en]")
    assert page.evaluate("document.documentElement.dir") == "ltr"
    assert page.inner_text("#verdict").startswith("Not fully verified")
    page = new_page(locale="fa-IR")
    page.goto(f"{site.url}/verify")
    assert page.evaluate("document.documentElement.lang") == "fa"
    # this site has no runtime: the first note says the page will not replay the rules
    expect(page.locator("#rules-note")).to_contain_text(
        "قواعد بازی را اینجا دوباره اجرا نخواهد کرد"
    )
    page = new_page(locale="de-DE")
    page.goto(f"{site.url}/verify")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert "verify transcript.json" in page.inner_text("#rules-note")


#: the page's script (bundled into qahwa_page/static/verify.js)
SCRIPT = ROOT / "clients" / "ts" / "page" / "verify.ts"


def test_translation_tables_are_complete(new_page: Any) -> None:
    """Every language the page offers (a button each, LANGS) has every key, with the same
    {parameters} as English and no empty text; every key the page's script names (t('…'),
    msg('…'), and the names it builds: deal recipients, the off_ reasons, the rows of
    verify_cli.rules's checks, the statistics' tests and headings) is there."""
    src = PAGE.read_text(encoding="utf-8")
    page = new_page()
    page.goto(PAGE.as_uri())
    langs, tables = page.evaluate("() => [qahwaFair.i18n.LANGS, qahwaFair.i18n.I18N]")
    buttons = re.findall(r'<button type="button" data-lang="(\w+)"', src)
    assert langs == buttons == ["en", "ar", "fa"]
    assert list(tables) == langs
    for lang in langs:
        assert set(tables[lang]) == set(tables["en"]), (lang, set(tables["en"]) ^ set(tables[lang]))
    for key, text in tables["en"].items():
        params = set(re.findall(r"\{(\w+)\}", text))
        for lang in langs:
            assert tables[lang][key].strip(), (lang, key)
            assert set(re.findall(r"\{(\w+)\}", tables[lang][key])) == params, (lang, key)
    script = SCRIPT.read_text(encoding="utf-8")
    script = script[script.index("var RTL = ") :]
    used = set(re.findall(r"\b(?:t|msg)\('(\w+)'\s*[,)]", script)) - {"raw"}  # raw: untranslated
    used |= {"stock", "kitty", "pile", "boneyard", "role_hakem", "role_dealer"}
    used |= {"off_" + k[len("replay_off_") :] for k in used if k.startswith("replay_off_")}
    used |= set(re.findall(r"'(st_\w+|stats_\w+)'", script))
    # the checks of verify_cli.rules the page shows (a title and a verdict each)
    v2_checks = set(
        re.findall(r'rep\.(?:ok|fail)\("([a-z ]+)"', (ROOT / "verify_cli" / "rules.py").read_text())
    )
    assert {"lock", "reveals", "fresh rolls", "cut", "chain"} <= v2_checks
    for name in v2_checks - {"replay", "result"}:
        used |= {"py_t_" + name.replace(" ", "_"), "py_ok_" + name.replace(" ", "_")}
    assert used - set(tables["en"]) == set()


# ---------------------------------------------------------------------------------------
# The JavaScript derivation agrees with the Python one.
# ---------------------------------------------------------------------------------------
VECTORS = vector("fairness_v1.json")["spec"]


def test_spec_vectors_in_javascript(new_page: Any) -> None:
    page = new_page()
    page.goto(PAGE.as_uri())
    v = VECTORS
    got = page.evaluate(
        """async (v) => {
          const f = window.qahwaFair;
          const out = {commitment: await f.commitment(v.server_seed),
                       K: await f.matchKey(v.server_seed, v.match_id, v.game, v.ruleset,
                                           v.client_seeds), draws: []};"""
        + VECTOR_DRAWS_JS,
        v,
    )
    assert got["commitment"] == v["commitment"]
    assert got["K"] == v["K"]
    assert_vector_draws(v, got["draws"])


def _random_text(rng: random.Random, lo: int, hi: int) -> str:
    alphabet = "abcXYZ09-_ /|~éüçñقهوةشانسپچژگ☕€漢字\U0001f3b2\U0001f600"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def test_javascript_and_python_agree_on_random_inputs(new_page: Any) -> None:
    rng = random.Random(20261202)
    near = [
        1 << 32,
        (1 << 32) - 1,
        (1 << 31) + 1,
        (1 << 31),
        3 * (1 << 30) + 7,
        (1 << 32) // 3 + 1,
        2_863_311_531,
    ]
    cases: list[dict[str, Any]] = []
    expected: list[Any] = []
    for i in range(300):
        seed = rng.randbytes(32).hex()
        mid = _random_text(rng, 1, 24)
        game = rng.choice(
            [
                "tawla",
                "hokm",
                "qahve",
                "shelem",
                "iraqi_domino",
                "mexican_train",
                "rng",
                _random_text(rng, 1, 8),
            ]
        )
        rs = canonical_ruleset({"k": rng.randint(0, 9), "x": _random_text(rng, 0, 5)})
        seeds = [_random_text(rng, 1, 30) for _ in range(rng.randint(0, 4))]
        label = "".join(rng.choice("abcdefghgr0123456789/|-_ ") for _ in range(rng.randint(1, 20)))
        kind = ["uniform", "near", "dice", "shuffle", "words"][i % 5]
        k = match_key(seed, mid, game, rs, seeds)
        st = Stream(k, label)
        case: dict[str, Any] = {
            "seed": seed,
            "mid": mid,
            "game": game,
            "rs": rs,
            "seeds": seeds,
            "label": label,
            "kind": kind,
        }
        if kind in ("uniform", "near"):
            n = (
                rng.randint(1, 1 << 32)
                if kind == "uniform"
                else rng.choice(near) - rng.randint(0, 3)
            )
            case["n"] = n
            res: Any = st.uniform(n)
        elif kind == "dice":
            case["count"], case["sides"] = rng.randint(1, 12), rng.choice([2, 6, 20, 1000, 1 << 32])
            res = st.dice(case["count"], case["sides"])
        elif kind == "shuffle":
            pool = rng.choice(
                [deck52(), deck_qahve(), tiles(6), tiles(12), list(range(rng.randint(1, 200)))]
            )
            picked = rng.sample(pool, rng.randint(1, len(pool)))
            case["items"] = picked
            canon = canonical_sort(picked)
            case["canon"] = canon
            res = st.shuffle(canon)
        else:
            res = [st.word() for _ in range(20)]  # crosses block boundaries
        cases.append(case)
        expected.append({"c": commitment(seed), "K": k.hex(), "r": res})
    got = new_page_eval(
        new_page,
        """async (cases) => {
      const f = window.qahwaFair, out = [];
      for (const c of cases) {
        const K = await f.matchKey(c.seed, c.mid, c.game, c.rs, c.seeds);
        let r;
        if (c.kind === 'uniform' || c.kind === 'near') r = await f.uniform(K, c.label, c.n);
        else if (c.kind === 'dice') r = await f.dice(K, c.label, c.count, c.sides);
        else if (c.kind === 'shuffle') {
          const canon = f.canonicalSort(c.items);
          if (JSON.stringify(canon) !== JSON.stringify(c.canon)) throw new Error('canonicalSort');
          r = await f.shuffle(K, c.label, canon);
        } else r = await f.words(K, c.label, 20);
        out.push({c: await f.commitment(c.seed), K, r});
      }
      return out;
    }""",
        cases,
    )
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == e, (i, cases[i])
    # Rejection sampling really happened for some of the near-2^32 cases.
    rejected = 0
    for c in cases:
        if c["kind"] == "near":
            limit = (1 << 32) - (1 << 32) % c["n"]
            k = match_key(c["seed"], c["mid"], c["game"], c["rs"], c["seeds"])
            rejected += Stream(k, c["label"]).word() >= limit
    assert rejected > 0


def new_page_eval(new_page: Any, script: str, arg: Any) -> Any:
    page = new_page()
    page.goto(PAGE.as_uri())
    return page.evaluate(script, arg)


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice(
            [
                lambda: rng.randint(-(10**30), 10**30),
                lambda: rng.randint(-5, 5),
                lambda: rng.choice(
                    [
                        0.0,
                        -0.0,
                        1.0,
                        0.1,
                        1e16,
                        1e15,
                        123456789012345678.0,
                        1e-4,
                        1e-5,
                        1.5e-7,
                        2.5,
                        -3.75,
                        1e300,
                        5e-324,
                        1 / 3,
                    ]
                ),
                lambda: rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 22),
                lambda: (
                    _random_text(rng, 0, 10)
                    + rng.choice(
                        ["", "\n", '\t"\\', "\x00\x1f\x7f", "\u2028\u2029", "\ufeff", "\U00010000"]
                    )
                ),
                lambda: rng.choice([True, False, None]),
            ]
        )()
    if r < 0.65:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [_random_text(rng, 0, 6) for _ in range(rng.randint(0, 5))]
    keys += rng.sample(["\uffff", "\U00010000", "\ue000", "a", "B", "é"], 2)
    return {key: _random_json(rng, depth + 1) for key in keys}


def test_canonical_json_matches_python(new_page: Any) -> None:
    rng = random.Random(7)
    texts = []
    for i in range(250):
        obj = _random_json(rng)
        if i % 3 == 0:
            texts.append(json.dumps(obj, indent=rng.choice([None, 1, 2])))
        elif i % 3 == 1:
            texts.append(json.dumps(obj, ensure_ascii=False))
        else:
            texts.append(json.dumps(obj, ensure_ascii=False, separators=(" ,", " : ")))
    texts += [
        '{"a": 1, "a": 2}',
        "[1E2, 1e+2, 2.50, -0, -0.0, 0e0, 100000000000000000000]",
        '"\\ud83c\\udfb2 \\u00e9"',
        '{"\\u0000": "\\/"}',
    ]
    got = new_page_eval(new_page, "(ts) => ts.map(t => window.qahwaFair.canonicalJson(t))", texts)
    for text, g in zip(texts, got, strict=True):
        assert g == canonical_json(json.loads(text)).decode("utf-8"), text


def test_page_verify_api_matches_python_signature(new_page: Any) -> None:
    doc = genuine("rng", seed=24)
    got = new_page_eval(
        new_page,
        "([t, k]) => window.qahwaFair.verifyTranscript(t, k)",
        [json.dumps(doc), KEYS["keys"][0]["public_key"]],
    )
    # opened from a file the page cannot replay the rules: never "pass"
    assert (got["verdict"], got["replay"]) == ("incomplete", "unavailable")
    assert {c["id"]: c["ok"] for c in got["checks"]}["signature"] is True
    assert (
        got["K"]
        == match_key(
            doc["server_seed"],
            doc["match_id"],
            doc["game"],
            doc["ruleset"],
            [s["client_seed"] for s in doc["seats"]],
        ).hex()
    )
    assert [e["seq"] for e in got["events"]] == chance_seqs(doc)


# ---------------------------------------------------------------------------------------
# Against the real service, when its test helpers exist.
# ---------------------------------------------------------------------------------------
def test_live_service(new_page: Any) -> None:
    """The real service: tawla played to the end, hokm resigned after 10 moves."""
    _live_check(new_page, ["tawla", "hokm"], moves=10)


@pytest.mark.slow
def test_live_service_every_game(new_page: Any) -> None:
    _live_check(new_page, [g for g in GAME_IDS if g != "rng"])


def _live_check(new_page: Any, games: list[str], moves: int = 25) -> None:
    """Matches played over HTTP on the real service, checked by the page it serves at /verify.

    Tawla is played to the end; the other games play `moves` random legal moves and then seat 0
    resigns (a resigned match publishes its transcript too), which keeps this quick.
    """
    assert games
    import httpx

    from tests.support.http_play import create_match, play_actions, play_to_end, seed_all
    from tests.support.live_server import LiveServer

    with LiveServer() as srv, httpx.Client(base_url=srv.url, timeout=30) as client:
        for i, game in enumerate(games):
            if game == "tawla":
                mid = play_to_end(client, game, {}, i)
            else:
                created = create_match(client, game, {})
                mid = created["match_id"]
                seats = seed_all(client, created, prefix="قهوة")  # commit, lock, reveal
                play_actions(client, seats, random.Random(i), limit=moves)
                if client.get(f"/v1/matches/{mid}").json()["status"] != "finished":
                    seats[0].resign()  # signed with seat 0's key
            transcript = client.get(f"/v1/matches/{mid}/transcript").json()
            page = new_page()
            want_verdict = "pass" if runtime_installed() else NO_REPLAY
            assert verify_match(page, srv.url, mid) == want_verdict, game
            assert statuses(page) == {s: "ok" for s in chance_seqs(transcript)}, game
            assert check_status(page, "signature") == "ok"
            assert srv.url + "/v1/keys" in page.inner_text("tr[data-check=signature]")
            # the real service serves the page's Python when `make pyodide` installed it
            want = "true" if runtime_installed() else "unknown"
            assert [check_ok(page, c) for c in ("replay", "result")] == [want, want], game
            # the transparency log's row (merkle.js) carries data-ok too
            expect(page.locator("tr[data-check=log]")).to_have_attribute(
                "data-ok", "true", timeout=30_000
            )


# ---------------------------------------------------------------------------------------
# The screenshot in docs/verify-page.md.
# ---------------------------------------------------------------------------------------
def take_screenshot(out: Path) -> None:
    """Both screenshots of docs/verify-page.md, with the rules replayed (the Pyodide runtime
    of ``make pyodide``).

    ``out``: a three-player hokm match (one hand, the cut drawn) played with random moves over HTTP
    on the real service (tests/support/live_server.py) and checked by the page it serves: every
    row, the replay and the transparency log included. ``…-tampered-ar.png``: a tawla
    match with its first roll changed and signed again (the stand-in server of these tests,
    whose key signed it), in Arabic, down to that roll.
    """
    import httpx

    from tests.support.http_play import create_match, play_actions, seed_all
    from tests.support.live_server import LiveServer

    if not runtime_installed():
        raise SystemExit("the Pyodide runtime is not installed: run make pyodide first")

    def settle(page: Any, url: str) -> None:
        page.goto(url)
        expect(page.locator("#verdict")).to_have_attribute("data-replay", "done", timeout=120_000)

    tawla, _ = simulate_match(
        "tawla", {"match_length": 1}, seed=3, match_id="m-tawla", protocol=PROTOCOL
    )
    roll = next(e for e in tawla["events"] if e.get("label") == "g0/roll/1")
    _tamper_result(roll)
    site = Site(runtime_dir=RUNTIME_DIR)
    site.add(SIGNER.signed(tawla))
    try:
        with (
            LiveServer() as srv,
            httpx.Client(base_url=srv.url, timeout=30) as client,
            launch() as b,
        ):
            created = create_match(
                client, "hokm", {"players": 3, "target": 1}, ["Layla", "Omid", "Sara"]
            )
            seats = seed_all(client, created)
            mid = created["match_id"]
            cutter = seats[0].state()["turn"]
            assert cutter is not None
            seats[cutter].act(seats[cutter].state(), {"type": "cut"})  # v2: the cut is drawn
            play_actions(client, seats, random.Random(2))
            page = b.new_page(viewport={"width": 1100, "height": 900})
            settle(page, f"{srv.url}/verify?lang=en&match={mid}")
            expect(page.locator("tr[data-check=log]")).to_have_attribute(
                "data-ok", "true", timeout=30_000
            )
            assert page.get_attribute("#verdict", "data-verdict") == "pass"
            page.screenshot(path=str(out), full_page=True)
            settle(page, f"{site.url}/verify?lang=ar&match=m-tawla")
            assert page.get_attribute("#verdict", "data-verdict") == "fail"
            box = page.locator(f"li.ev[data-seq='{roll['seq']}']").bounding_box()
            assert box is not None
            page.screenshot(
                path=str(out.with_name(out.stem + "-tampered-ar.png")),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1100, "height": box["y"] + box["height"] + 24},
            )
    finally:
        site.close()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--screenshot":
        take_screenshot(Path(sys.argv[2]))
    else:
        print(
            "usage: PYTHONPATH=tests python tests/page/test_verify_page.py --screenshot docs/img/verify-page.png"
        )
