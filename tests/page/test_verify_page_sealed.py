"""The verify page's sealed-deal verification (qahwa-fair/3): the crypto backend interface
(games/sealed_backend.py), its JavaScript implementation for Pyodide (verify_cli/sealed_js.py →
qahwa_page/static/sealed-verify.js: clients/ts's sealed cryptography, with the @noble/curves
it runs on, in one bundle), and the page's worker loading it.

- The bundle is small enough for a page and self-contained (its freshness:
  tests/page/test_verify_page_bundles.py; its agreement with ``sealed``:
  tests/sealed/test_sealed_js.py).
- Under node, the JavaScript backend (through the very Python class the page uses) and the
  rbcl one give the same verdict and the same words, call by call and for whole hands, on a
  genuine hand and on hands with one byte or field changed.
- In Chromium, Pyodide runs the project's Python from the page's sources zip with the
  JavaScript backend installed as the worker does it: a genuine sealed hokm hand verifies (and
  opens to the cards its owners learnt), one changed proof byte fails with the CLI's words.

Skips only without node or chromium or the Pyodide runtime (failures under CI=true).
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import random
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import bench.browser
import sealed
from games.sealed_backend import (
    RbclBackend,
    SealedBackend,
    SealedStepError,
    get_backend,
    set_backend,
)
from games.sealed_hand import verify_hand
from qahwa_page.pyodide import runtime_installed
from qahwa_page.serve import PageServer
from sealed.demo import simulated_hand
from tests.page.page_support import STATIC
from tests.support import fresh_python
from tests.support.browser import needs_chromium
from tests.support.sealed_play import play_match
from verify_cli.sealed_js import JsBackend, install

VERIFIER = STATIC / "sealed-verify.js"
NODE = shutil.which("node")
CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]

# -- the bundle ---------------------------------------------------------------------------------


def test_the_verifier_is_one_module_and_the_chunk_it_shares_with_play() -> None:
    """The page loads one module for sealed deals and the chunk(s) it imports beside it, which
    /play's play.js imports too (a /play tab that frames /verify loads them once): the
    cryptography and one copy of the library it runs on, small enough for a page."""
    text = VERIFIER.read_text("utf-8")
    chunks = re.findall(r'from\s*"\./(chunk-[A-Z0-9]+\.js)"', text)
    assert chunks and "import(" not in text
    files = [VERIFIER, *(STATIC / c for c in chunks)]
    # the licence travels with the one copy
    assert sum("noble-curves - MIT License" in p.read_text("utf-8") for p in files) == 1
    play = (STATIC / "play.js").read_text("utf-8")
    assert all(f'"./{c}"' in play for c in chunks)
    assert not (STATIC / "sealed-lib.js").exists()
    assert sum(len(gzip.compress(p.read_bytes(), 9)) for p in files) <= 40_000


# -- hands --------------------------------------------------------------------------------------


def hand(
    seed: str, seats: int, n: int, house: tuple[int, ...] = (), opened: int = 0
) -> tuple[str, dict[str, Any], list[str]]:
    match = f"m-page-{seed}"
    entry, learnt = simulated_hand(
        match, 2, "hokm", CARDS[:n], seats, house, opened, sealed.FixedRandomness(seed.encode())
    )
    return match, entry, learnt


def flip_b64(text: str, pos: int, bit: int = 0) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[pos % len(raw)] ^= 1 << bit
    return base64.b64encode(bytes(raw)).decode("ascii")


def flip_hex(text: str, pos: int, bit: int = 0) -> str:
    raw = bytearray(bytes.fromhex(text))
    raw[pos % len(raw)] ^= 1 << bit
    return raw.hex()


def tampered(entry: dict[str, Any], rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One byte (or field) of the record changed, at a random place."""
    e = copy.deepcopy(entry)
    kind = rng.choice(["shuffle proof", "deck", "key", "key proof", "share", "revealed", "code"])
    pos, bit = rng.randrange(1 << 16), rng.randrange(8)
    if kind == "shuffle proof":
        sh = rng.choice(e["shuffles"])
        sh["proof"] = flip_b64(sh["proof"], pos, bit)
    elif kind == "deck":
        sh = rng.choice(e["shuffles"])
        sh["deck"] = flip_b64(sh["deck"], pos, bit)
    elif kind in ("key", "key proof"):
        k = rng.choice(e["keys"])
        field = "key" if kind == "key" else "proof"
        k[field] = flip_hex(k[field], pos, bit)
    elif kind == "share":
        s = rng.choice(e["shares"])
        field = rng.choice(["share", "proof"])
        s[field] = flip_hex(s[field], pos, bit)
    elif kind == "revealed":
        r = rng.choice(e["revealed"])
        r["secret"] = flip_hex(r["secret"], pos % 31, bit)  # the last byte could leave ℓ
    elif e["openings"]:
        op = rng.choice(e["openings"])
        op["code"] = rng.choice([c for c in e["items"] if c != op["code"]])
    else:
        e["revealed"][0]["secret"] = e["revealed"][1]["secret"]
    return kind, e


# Step by step, as a sealed engine checks a hand while it is played: every call of the backend
# interface. The same source runs in CPython and in Pyodide (in the page, below).
STEPS = """
import base64, json
from games.sealed_backend import SealedStepError, get_backend

def steps(args):
    match_id, entry, seats, house = json.loads(args)
    b = get_backend()
    out = {"backend": type(b).__name__}
    try:
        hand, game, items = entry["hand"], entry["game"], entry["items"]
        ctx = lambda s: (match_id, hand, s)
        keys = [bytes.fromhex(k["key"]) for k in entry["keys"]]
        for s, k in enumerate(entry["keys"]):
            b.verify_key(ctx(s), keys[s], bytes.fromhex(k["proof"]))
        P = b.hand_key(keys)
        deck = b.starting_deck(game, items)
        for sh in entry["shuffles"]:
            out_deck = base64.b64decode(sh["deck"])
            b.verify_shuffle(ctx(sh["seat"]), P, deck, out_deck, base64.b64decode(sh["proof"]))
            deck = out_deck
        got = {}
        for sh in entry["shares"]:
            i = sh["item"]
            D = bytes.fromhex(sh["share"])
            item = deck[64 * i : 64 * i + 64]
            b.verify_share(ctx(sh["seat"]), keys[sh["seat"]], item, D, bytes.fromhex(sh["proof"]))
            got[(i, sh["seat"])] = D
        opened = []
        for op in entry["openings"]:
            i = op["item"]
            shares = [got[(i, s)] for s in range(seats)]
            opened.append(b.opens_to(game, op["code"], deck[64 * i : 64 * i + 64], shares))
        out["opened"] = opened
        secrets = []
        for r in entry["revealed"]:
            x = bytes.fromhex(r["secret"])
            b.check_revealed(keys[r["seat"]], x, r["seat"])
            secrets.append(x)
        out["order"] = list(b.open_deck(game, items, deck, secrets))
        out["deck"] = deck.hex()
    except SealedStepError as exc:
        out["error"] = str(exc)
    return json.dumps(out, sort_keys=True)
"""


def run_steps(b: SealedBackend, match: str, entry: dict[str, Any], seats: int, house: Any) -> Any:
    ns: dict[str, Any] = {}
    exec(STEPS, ns)  # noqa: S102 - the test's own source, shared with the page
    before = get_backend()
    set_backend(b)
    try:
        out = json.loads(ns["steps"](json.dumps([match, entry, seats, list(house)])))
    finally:
        set_backend(before)
    out.pop("backend")
    return out


def whole_py(match: str, entry: dict[str, Any], seats: int, house: Any) -> Any:
    """games.sealed_hand.verify_hand (the deal machine fed a whole §9 entry) under the rbcl
    backend."""
    try:
        v = verify_hand(match, entry, seats, house)
    except SealedStepError as exc:
        return {"error": str(exc)}
    return {"order": v.order, "opened": v.opened}


def whole_js(js: JsBackend, match: str, entry: dict[str, Any], seats: int, house: Any) -> Any:
    try:
        order, opened = js.verify_hand(match, entry, seats, house)
    except SealedStepError as exc:
        return {"error": str(exc)}
    return {"order": order, "opened": opened}


def test_importing_the_rules_loads_no_rbcl() -> None:
    """The page's Python imports the sealed engines and verify_cli.sealed_js: none may load
    rbcl (it does not exist in Pyodide) until the rbcl backend is used."""
    code = (
        "import sys, games.sealed_backend, games.sealed_hokm, verify_cli.sealed_js, "
        "verify_cli.replay_core; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rbcl', 'sealed')))"
    )
    assert fresh_python(code) == "[]"


def test_the_js_backend_says_where_it_is_missing() -> None:
    with pytest.raises((RuntimeError, ImportError)):
        JsBackend()


# -- under node: the JavaScript backend against the rbcl one -----------------------------------

NODE_RUNNER = """
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
const [, , verifierPath] = process.argv;
const sv = await import(pathToFileURL(verifierPath).href);
const b = sv.jsonBackend();
for await (const line of createInterface({ input: process.stdin })) {
  const { kind, args } = JSON.parse(line);
  process.stdout.write(b.run(kind, args) + "\\n");
}
"""


class NodeRunner:
    """``qahwaSealed`` as the worker publishes it, in one node process: ``run(kind, args)``."""

    def __init__(self, script: Path) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(script), str(VERIFIER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()

    def run(self, kind: str, args: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(json.dumps({"kind": kind, "args": args}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        assert line, "the node runner stopped"
        return line

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeRunner]:
    if NODE is None:
        pytest.skip("node not installed")
    script = tmp_path_factory.mktemp("sealed-page") / "runner.mjs"
    script.write_text(NODE_RUNNER)
    r = NodeRunner(script)
    try:
        yield r
    finally:
        r.close()


@pytest.fixture(scope="module")
def js(runner: NodeRunner) -> JsBackend:
    return JsBackend(runner)


def test_a_genuine_hand_agrees_call_by_call_and_whole(js: JsBackend) -> None:
    rb = RbclBackend()
    match, entry, learnt = hand("genuine", 3, 9, house=(1,), opened=3)
    a = run_steps(rb, match, entry, 3, (1,))
    assert "error" not in a, a
    assert a["order"] == learnt and a["opened"] == [True] * 3
    assert run_steps(js, match, entry, 3, (1,)) == a
    assert whole_js(js, match, entry, 3, (1,)) == whole_py(match, entry, 3, (1,))
    assert whole_js(js, match, entry, 3, (1,))["order"] == tuple(learnt)
    # an opening to another code does not open, in both
    other = copy.deepcopy(entry)
    other["openings"][1]["code"] = learnt[0]
    assert run_steps(js, match, other, 3, (1,))["opened"] == [True, False, True]
    assert run_steps(rb, match, other, 3, (1,))["opened"] == [True, False, True]
    # before every key is revealed the deck stays closed, in both
    closed = copy.deepcopy(entry)
    closed["revealed"] = closed["revealed"][:2]
    assert whole_js(js, match, closed, 3, (1,)) == whole_py(match, closed, 3, (1,))
    assert whole_js(js, match, closed, 3, (1,))["order"] is None


@pytest.mark.parametrize("seed", range(6))
def test_every_changed_hand_is_refused_alike(js: JsBackend, seed: int) -> None:
    """One random change at a time: both refuse, with the same words; step by step too."""
    rb = RbclBackend()
    seats = 2 + seed % 3
    house = (0,) if seed % 2 else ()
    match, entry, _ = hand(f"t{seed}", seats, 4 + seed, house, opened=seed % 3)
    rng = random.Random(seed)
    for _ in range(8):
        kind, e = tampered(entry, rng)
        a, b = whole_py(match, e, seats, house), whole_js(js, match, e, seats, house)
        assert "error" in a, (kind, a)
        assert a == b, kind
        sa, sb = run_steps(rb, match, e, seats, house), run_steps(js, match, e, seats, house)
        assert sa == sb, kind
        assert "error" in sa or False in sa["opened"], (kind, sa)


def test_call_by_call_refusals_agree(js: JsBackend) -> None:
    rb = RbclBackend()
    match, entry, _ = hand("calls", 2, 4, opened=1)
    keys = [bytes.fromhex(k["key"]) for k in entry["keys"]]
    P = rb.hand_key(keys)
    d0 = rb.starting_deck("hokm", CARDS[:4])
    assert js.starting_deck("hokm", CARDS[:4]) == d0 and js.hand_key(keys) == P
    d1 = base64.b64decode(entry["shuffles"][0]["deck"])
    proof = base64.b64decode(entry["shuffles"][0]["proof"])
    secret = bytes.fromhex(entry["revealed"][0]["secret"])
    share = entry["shares"][0]
    item = d1[64 * share["item"] : 64 * share["item"] + 64]
    D, sp = bytes.fromhex(share["share"]), bytes.fromhex(share["proof"])
    calls: list[Callable[[SealedBackend], Any]] = [
        lambda b: b.verify_key((match, 2, 1), keys[0], bytes.fromhex(entry["keys"][0]["proof"])),
        lambda b: b.verify_key((match, 2, 0), bytes(32), bytes(64)),
        lambda b: b.verify_shuffle((match, 2, 0), P, d0, d1, proof[:-32]),
        lambda b: b.verify_shuffle((match, 2, 1), P, d0, d1, proof),  # another seat's context
        lambda b: b.verify_shuffle((match, 2, 0), P, d0, d1[:-64], proof),
        lambda b: b.verify_shuffle((match + "x", 2, 0), P, d0, d1, proof),
        lambda b: b.verify_share((match, 2, 1 - share["seat"]), keys[share["seat"]], item, D, sp),
        lambda b: b.verify_share((match, 2, share["seat"]), keys[share["seat"]], item, D, sp[::-1]),
        lambda b: b.check_revealed(keys[1], secret, 1),
        lambda b: b.check_revealed(keys[0], b"\xff" * 32, 0),
        lambda b: b.open_deck("hokm", CARDS[:4], d1, [secret]),
    ]
    for i, call in enumerate(calls):
        got = []
        for b in (rb, js):
            with pytest.raises(SealedStepError) as exc:
                call(b)
            got.append(str(exc.value))
        assert got[0] == got[1], i


def test_install_makes_the_js_backend_current(runner: NodeRunner) -> None:
    before = get_backend()
    try:
        b = install(runner)  # as the worker installs its global qahwaSealed
        assert get_backend() is b and b.name == "js"
    finally:
        set_backend(before)
    assert get_backend() is before


# -- in Chromium: Pyodide, the page's sources and the JavaScript backend -----------------------

# What the worker does for a qahwa-fair/3 transcript (verify-worker.js, loadSealed), on a page
# of the same origin: Pyodide with the page's sources zip and the verifier, qahwaSealed published, verify_cli.sealed_js.install().
BOOT = """async () => {
  const man = await (await fetch('/static/qahwa-py.json')).json();
  const base = new URL(man.runtime.url, location.href).href;
  const mod = await import(base + 'pyodide.mjs');
  const py = await mod.loadPyodide({ indexURL: base, stdout: () => {}, stderr: () => {} });
  const buf = await (await fetch(man.sources.url)).arrayBuffer();
  py.unpackArchive(buf, 'zip', { extractDir: '/home/pyodide/qahwa' });
  py.runPython("import sys\\nsys.path.insert(0, '/home/pyodide/qahwa')");
  const sv = await import('/static/sealed-verify.js');
  self.qahwaSealed = sv.jsonBackend();
  py.pyimport('verify_cli.sealed_js').install();
  self.__py = py;
  return py.runPython("import sys; sys.platform + ' ' + ('rbcl' in sys.modules and 'rbcl' or '-')");
}"""

RUN = """([src, args]) => {
  const py = self.__py;
  py.runPython(src);
  const t0 = performance.now();
  const out = py.globals.get('steps')(...args);
  return [out, performance.now() - t0];
}"""


@pytest.fixture(scope="module")
def page_server() -> Iterator[PageServer]:
    if not runtime_installed():
        pytest.skip("the Pyodide runtime is not installed (make pyodide)")  # fails under CI
    server = PageServer("127.0.0.1", 0)
    server.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def pyodide_page(page_server: PageServer, browser: Any) -> Iterator[Any]:
    # the page's own CSP allows no WebAssembly on the page itself (only its worker); this
    # harness runs Pyodide on the page, so it bypasses it
    ctx = browser.new_context(bypass_csp=True)
    try:
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(page_server.url)
        platform = pg.evaluate(BOOT)
        assert platform == "emscripten -", platform
        yield pg
        assert errors == []
    finally:
        ctx.close()


@needs_chromium
def test_pyodide_verifies_a_sealed_hokm_hand_through_the_js_backend(pyodide_page: Any) -> None:
    house = (1, 3)
    match, entry, learnt = hand("chromium", 4, 52, house, opened=4)
    args = json.dumps([match, entry, 4, list(house)])
    out, _ = pyodide_page.evaluate(RUN, [STEPS, [args]])
    got = json.loads(out)
    want = run_steps(RbclBackend(), match, entry, 4, house)
    assert "error" not in want, want
    assert got == {**want, "backend": "JsBackend"}
    assert got["order"] == learnt and got["opened"] == [True] * 4

    # one changed byte of a shuffle proof's response: refused with the CLI's words
    bad = copy.deepcopy(entry)
    raw = bytearray(base64.b64decode(bad["shuffles"][2]["proof"]))
    raw[-40] ^= 4
    bad["shuffles"][2]["proof"] = base64.b64encode(bytes(raw)).decode("ascii")
    out, _ = pyodide_page.evaluate(RUN, [STEPS, [json.dumps([match, bad, 4, list(house)])]])
    got = json.loads(out)
    want = run_steps(RbclBackend(), match, bad, 4, house)
    assert want["error"].startswith("shuffle of seat 0: shuffle proof of seat 0: equation")
    assert got["error"] == want["error"]


# A whole sealed match replayed by the rules (games.replay over the sealed engine), as
# verify_cli.rules does: in the page through the JavaScript backend, in CPython through rbcl.
REPLAY = """
import json
from fairness import canonical_ruleset
from games.base import MatchContext
from games.errors import ReplayError
from games.registry import find_engine
from games.replay import replay
from games.sealed_backend import get_backend

def steps(args):
    game, ruleset, key, events, match_id, house = json.loads(args)
    out = {"backend": type(get_backend()).__name__}
    try:
        e = replay(
            find_engine(game, ruleset), canonical_ruleset(ruleset), bytes.fromhex(key), events,
            ctx=MatchContext(match_id, house=tuple(house)),
        )
    except ReplayError as exc:
        out["error"] = str(exc)
        return json.dumps(out)
    out["outcome"] = repr(e.outcome)
    out["hands"] = e.sealed_hands
    return json.dumps(out)
"""


def replay_here(args: str) -> Any:
    ns: dict[str, Any] = {}
    exec(REPLAY, ns)  # noqa: S102 - the test's own source, shared with the page
    return json.loads(ns["steps"](args))


@needs_chromium
def test_pyodide_replays_a_sealed_hokm_match_as_cpython_does(pyodide_page: Any) -> None:
    r = play_match("hokm", {"target": 1}, seed="page", house=(2,))
    assert r.engine.outcome is not None and r.engine.outcome.reason == "finished"
    assert r.ctx is not None

    def args(events: list[Any]) -> str:
        assert r.ctx is not None
        return json.dumps(["hokm", r.ruleset, r.key.hex(), events, r.ctx.match_id, [2]])

    want = replay_here(args(r.events))
    assert want["backend"] == "RbclBackend" and "error" not in want, want
    out, _ = pyodide_page.evaluate(RUN, [REPLAY, [args(r.events)]])
    got = json.loads(out)
    assert got == {**want, "backend": "JsBackend"}
    assert got["outcome"] == repr(r.engine.outcome)

    # one changed proof byte (the third shuffle's): the same ReplayError, word for word
    events = copy.deepcopy(r.events)
    shuffle = [e for e in events if e["type"] == "action" and e["action"].get("step") == "shuffle"]
    shuffle[2]["action"]["proof"] = flip_b64(shuffle[2]["action"]["proof"], 100)
    want = replay_here(args(events))
    assert "shuffle" in want["error"], want
    out, _ = pyodide_page.evaluate(RUN, [REPLAY, [args(events)]])
    assert json.loads(out) == {**want, "backend": "JsBackend"}


# -- the page: the worker loads the sealed verifier for qahwa-fair/3 only ---------------------


def paste_and_verify(pg: Any, doc: dict[str, Any], key: str) -> tuple[str, dict[str, str]]:
    """Paste ``doc`` with the server's key, verify, wait for the full verdict: (verdict,
    {row: data-ok})."""
    _, verdict = bench.browser.paste_and_verify(pg, json.dumps(doc), key, replay_ms=240_000)
    rows = pg.eval_on_selector_all(
        "tr[data-check]", "els => els.map(e => [e.dataset.check, e.dataset.ok])"
    )
    return verdict, {str(k): str(v) for k, v in rows}


@needs_chromium
def test_the_worker_loads_the_sealed_verifier_for_qahwa_fair_3_only(
    page_server: PageServer, browser: Any
) -> None:
    from fairness import public_key_b64
    from tests.verify.test_verify_cli_helpers import SIGNER, v2_match

    key = public_key_b64(SIGNER.public_key)
    v2 = v2_match("hokm", keyed=True, seed=2)
    ctx = browser.new_context(locale="en-US")
    try:
        pg = ctx.new_page()
        errors: list[str] = []
        fetched: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        ctx.on("request", lambda r: fetched.append(r.url.rsplit("/", 1)[-1]))
        pg.goto(page_server.url + "?lang=en")
        verdict, rows = paste_and_verify(pg, v2, key)
        assert verdict == "pass", rows
        assert "sealed" not in rows
        assert "sealed-verify.js" not in fetched
        # the same document claiming qahwa-fair/3: the worker loads the verifier first
        v3 = SIGNER.signed({**v2, "protocol": "qahwa-fair/3"})
        verdict, rows = paste_and_verify(pg, v3, key)
        assert "sealed-verify.js" in fetched and "sealed-lib.js" not in fetched
        assert rows["protocol"] == "true" and rows["sealed"] == "true"
        assert verdict == "fail", rows
        assert errors == []
    finally:
        ctx.close()


# -- the page, end to end: a sealed hokm match's transcript ------------------------------------


def sealed_hokm(seed: int) -> dict[str, Any]:
    from games.transcript import simulate_match
    from tests.verify.test_verify_cli_helpers import SIGNER

    doc, _ = simulate_match(
        "hokm",
        {"target": 1, "deal": "sealed"},
        seed=seed,
        keyed=True,
        timed=True,
        signer=SIGNER,
        house=(1,),
    )
    assert doc["protocol"] == "qahwa-fair/3"
    return doc


def row_detail(pg: Any, row: str) -> str:
    return str(pg.eval_on_selector(f"tr[data-check={row}] td.msg", "td => td.innerText"))


@needs_chromium
def test_a_sealed_hokm_transcript_passes_and_a_changed_proof_byte_fails_as_in_the_cli(
    page_server: PageServer, browser: Any
) -> None:
    from tests.verify.test_verify_cli_helpers import SIGNER, key_b64
    from verify_cli.core import FAILED, VERIFIED, verify_document
    from verify_cli.keys import parse_keys

    keys = parse_keys(key_b64(), source="file", origin="test-key")
    doc = sealed_hokm(11)
    cli = verify_document(doc, keys, draws_limit=None)
    assert cli["status"] == VERIFIED
    bad = copy.deepcopy(doc)
    shuffles = [e for e in bad["events"] if (e.get("action") or {}).get("step") == "shuffle"]
    raw = bytearray(base64.b64decode(shuffles[1]["action"]["proof"]))
    raw[-40] ^= 1  # a scalar of the proof: still canonical, no longer a proof
    shuffles[1]["action"]["proof"] = base64.b64encode(bytes(raw)).decode("ascii")
    bad = SIGNER.signed(bad)
    cli_bad = verify_document(bad, keys, draws_limit=None)
    assert cli_bad["status"] == FAILED
    cli_sealed = next(c for c in cli_bad["checks"] if c["name"] == "sealed")
    assert (
        cli_sealed["ok"] is False
        and "its sealed 'shuffle' step is refused" in (cli_sealed["detail"])
    )
    cli_failed = {c["name"] for c in cli_bad["checks"] if c["ok"] is False}

    ctx = browser.new_context(locale="en-US")
    try:
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(page_server.url + "?lang=en")
        key = key_b64()
        verdict, rows = paste_and_verify(pg, doc, key)
        assert verdict == "pass", {k: v for k, v in rows.items() if v != "true"}
        for row in ("protocol", "lock_sig", "chain", "seat_sigs", "py_sealed", "replay"):
            assert rows[row] == "true", row
        assert rows["sealed"] == "true" and rows["result"] == "true"
        assert "sealed-verify.js" in row_detail(pg, "sealed")

        verdict, rows = paste_and_verify(pg, bad, key)
        assert verdict == "fail"
        assert rows["py_sealed"] == "false" and rows["replay"] == "false"
        # the CLI's row, in the CLI's words
        assert cli_sealed["detail"] in row_detail(pg, "py_sealed")
        page_failed = {k[3:].replace("_", " ") for k, v in rows.items() if k.startswith("py_")}
        assert {n for n in cli_failed if n in page_failed} == {
            k[3:].replace("_", " ") for k, v in rows.items() if k.startswith("py_") and v == "false"
        }
        assert errors == []
    finally:
        ctx.close()


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize(
    ("game", "ruleset"),
    [
        ("iraqi_domino", {"players": 2, "target": 20}),  # with boneyard draws
        ("qahve", {"target": 50}),
        ("shelem", {"target": 100}),
        ("mexican_train", {"players": 2, "rounds": 1}),
    ],
)
def test_every_sealed_game_passes_on_the_page_as_in_the_cli(
    page_server: PageServer, browser: Any, game: str, ruleset: dict[str, Any]
) -> None:
    from games.registry import SEALED_GAMES
    from games.transcript import simulate_match
    from tests.verify.test_verify_cli_helpers import SIGNER, key_b64
    from verify_cli.core import VERIFIED, verify_document
    from verify_cli.keys import parse_keys

    assert game in SEALED_GAMES
    doc, _ = simulate_match(
        game, {**ruleset, "deal": "sealed"}, seed=5, keyed=True, timed=True, signer=SIGNER
    )
    assert doc["protocol"] == "qahwa-fair/3"
    if game == "iraqi_domino":
        assert any((e.get("action") or {}).get("type") == "draw" for e in doc["events"])
    keys = parse_keys(key_b64(), source="file", origin="test-key")
    assert verify_document(doc, keys, draws_limit=None)["status"] == VERIFIED
    ctx = browser.new_context(locale="en-US")
    try:
        pg = ctx.new_page()
        pg.goto(page_server.url + "?lang=en")
        verdict, rows = paste_and_verify(pg, doc, key_b64())
        assert verdict == "pass", {k: v for k, v in rows.items() if v != "true"}
        assert rows["py_sealed"] == rows["sealed"] == rows["replay"] == "true"
    finally:
        ctx.close()


def test_the_service_and_verify_page_serve_the_sealed_verifier_alike() -> None:
    import urllib.request

    from tests.support.live_server import LiveServer

    def get(url: str) -> tuple[int, bytes, str]:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read(), str(r.headers["content-type"])

    mine = PageServer("127.0.0.1", 0, None)
    mine.start()
    try:
        base = mine.url.removesuffix("/verify")
        with LiveServer() as srv:
            for name in ("sealed-verify.js",):
                a, b = get(f"{base}/static/{name}"), get(f"{srv.url}/static/{name}")
                assert a[0] == b[0] == 200 and a[1] == b[1] == (STATIC / name).read_bytes()
                assert a[2].startswith("text/javascript") and b[2].startswith("text/javascript")
    finally:
        mine.shutdown()
        mine.server_close()
