"""The log served as a C2SP transparency log (api.md): the checkpoint, tiles and entry
bundles read back with :mod:`tlog` alone, witnesses (one that resyncs on 409, one that
refuses, one that is down, one that answers a bad cosignature), and the offline proof of
a match checked against a policy."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

import tlog
from fairness import SecretBox
from service import keys, translog
from service.app import create_app
from service.c2sp import LogC2SP, WitnessConfig, parse_witnesses
from service.settings import Settings
from tests.support import sqlite_settings
from tests.support.live_server import LiveServer

ORIGIN = "qahwa.test/log"
RECORD = {"type": "commitment", "note": "filler"}


def make_app(tmp: Path) -> FastAPI:
    return create_app(sqlite_settings(tmp, log_origin=ORIGIN))


def fill(app: FastAPI, n: int) -> None:
    """Append n entries straight to the log (as the match service does)."""
    db = app.state.db
    with db.write() as s:
        start = translog.size(s, log=translog.active_log(s))
        for i in range(start, start + n):
            translog.add(
                db, s, {**RECORD, "i": i}, match_id=f"m_fill{i}", at="2026-12-03T00:00:00Z"
            )


def v1_match(app: FastAPI, game: str = "tawla") -> str:
    """A qahwa-fair/1 match as v1's service made it, its commitment record logged at
    creation (bench/v1_rows.py): one log entry, whose offline proof these tests ask for. (A
    v2 match logs nothing until every seat has committed.)"""
    spec = importlib.util.spec_from_file_location(
        "qahwa_bench_v1_rows", Path(__file__).resolve().parents[2] / "bench" / "v1_rows.py"
    )
    assert spec is not None and spec.loader is not None
    rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rows)
    settings = app.state.settings
    mid, _ = rows.insert_v1_match(
        app.state.db, keys.signer(settings), SecretBox(keys.master_key(settings)), game, {}
    )
    return str(mid)


def log_size(app: FastAPI) -> int:
    with app.state.db.read() as s:
        return int(translog.size(s, log=1))


def c2sp(app: FastAPI) -> LogC2SP:
    got: LogC2SP = app.state.log_c2sp
    return got


# The checkpointer signs once at start, then not within a test: the test says when.
pytestmark = pytest.mark.live_server(log_origin=ORIGIN, checkpoint_seconds=3600)


@pytest.fixture()
def server(fresh_server: LiveServer) -> LiveServer:
    """A new server for each test (its log and checkpoints are the test's)."""
    return fresh_server


@pytest.fixture()
def app(server: LiveServer) -> FastAPI:
    a: FastAPI = server.app
    return a


def vkey_of(client: httpx.Client) -> tlog.Verifier:
    keys = client.get("/v1/keys").json()
    assert keys["log"]["origin"] == ORIGIN
    return tlog.parse_vkey(keys["log"]["vkey"])


def open_checkpoint(client: httpx.Client, v: tlog.Verifier) -> tlog.Checkpoint:
    r = client.get("/log/checkpoint")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    cp, _ = tlog.open_checkpoint(r.text, v)
    return cp


def fetcher(client: httpx.Client) -> Any:
    def fetch(tile: tlog.Tile) -> bytes:
        r = client.get("/log/" + tile.path)
        assert r.status_code == 200, (tile.path, r.text)
        return r.content

    return fetch


def test_checkpoint_tiles_and_bundles(app: FastAPI, client: httpx.Client) -> None:
    v = vkey_of(client)
    assert v.name == ORIGIN and v.alg == tlog.ALG_ED25519
    assert open_checkpoint(client, v).size == 0
    assert open_checkpoint(client, v).root == tlog.EMPTY_ROOT
    fill(app, 300)
    assert open_checkpoint(client, v).size == 0  # not checkpointed yet: the same
    # Appends sign nothing: no cached JSON head appeared.
    with app.state.db.read() as s:
        assert s.get(translog.TreeHead, (1, 300)) is None
    assert c2sp(app).checkpoint_now() is not None
    assert c2sp(app).checkpoint_now() is None  # no growth, no new checkpoint
    cp300 = open_checkpoint(client, v)
    with app.state.db.read() as s:
        assert cp300.size == 300 and cp300.root == translog.stored_root(s, 300, log=1)
    reader = tlog.TileHashReader(300, cp300.root, fetcher(client))
    assert tlog.tree_hash(300, reader) == cp300.root
    with app.state.db.read() as s:
        for n in (0, 255, 256, 299):
            assert tlog.prove_record(300, n, reader) == translog.inclusion_path(s, n, 300, log=1)
    # Entry bundles hash to the level-0 tiles; gzip only when asked for.
    r = client.get("/log/tile/entries/001.p/44", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    entries = tlog.parse_bundle(r.content, tlog.Tile(0, 1, 44, entries=True))
    assert b"".join(map(tlog.leaf_hash, entries)) == fetcher(client)(tlog.Tile(0, 1, 44))
    assert entries[0] == b'{"i":256,"note":"filler","type":"commitment"}'
    raw = client.get("/log/tile/entries/000", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers
    assert gzip.decompress(gzip.compress(raw.content)) == raw.content
    assert len(tlog.parse_bundle(raw.content, tlog.Tile(0, 0, entries=True))) == 256
    # Full tiles are immutable; the checkpoint is not cached.
    assert "immutable" in client.get("/log/tile/0/000").headers["cache-control"]
    assert client.get("/log/checkpoint").headers["cache-control"] == "no-cache"
    # Beyond the checkpoint, or not a tile path: 404 in the error shape.
    for path in (
        "tile/0/001",
        "tile/0/001.p/45",
        "tile/1/000.p/2",
        "tile/entries/002.p/1",
        "tile/0/1",
        "tile/x/000",
        "tile/0/000.p/256",
    ):
        r = client.get("/log/" + path)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", path
    # The log grows: the partial tiles of size 300 are still served, and consistent.
    fill(app, 500)
    c2sp(app).checkpoint_now()
    cp800 = open_checkpoint(client, v)
    assert cp800.size == 800
    assert client.get("/log/tile/0/001.p/44").content == fetcher(client)(tlog.Tile(0, 1))[: 44 * 32]
    with app.state.db.read() as s:
        proof = translog.consistency_path(s, 300, 800, log=1)
    tlog.check_tree(proof, 800, cp800.root, 300, cp300.root)
    reader800 = tlog.TileHashReader(800, cp800.root, fetcher(client))
    assert tlog.prove_tree(800, 300, reader800) == proof


def test_log_origin_defaults_to_the_host_and_the_key_persists(tmp_path: Path) -> None:
    s = Settings(database_url=f"sqlite:///{tmp_path / 'q.db'}", data_dir=tmp_path)
    assert s.origin.endswith("/log") and len(s.origin) > 4
    a = make_app(tmp_path)
    b = make_app(tmp_path)
    assert c2sp(a).vkey == c2sp(b).vkey
    assert (tmp_path / "log-note.key").stat().st_mode & 0o777 == 0o600
    assert c2sp(a).signer.verifier.public_key != app_signing_key(a)
    a.state.db.dispose()
    b.state.db.dispose()


def app_signing_key(app: FastAPI) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    pub = app.state.signer.public_key
    raw: bytes = pub.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return raw


def test_bad_witness_settings_are_refused() -> None:
    w = tlog.CosignatureSigner.from_seed("w.example", bytes(32))
    log_key = tlog.NoteSigner.from_seed("w.example", bytes(32))
    assert parse_witnesses(f" a {w.vkey} http://w/ ; ") == [
        WitnessConfig("a", w.verifier, "http://w")
    ]
    for bad in [
        f"a {w.vkey}",
        f"a {log_key.vkey} http://w",
        f"a {w.vkey} ftp://w",
        f"a {w.vkey} http://w;a {w.vkey} http://v",
        "a b+c+d http://w",
    ]:
        with pytest.raises(ValueError, match="QAHWA_WITNESSES"):
            parse_witnesses(bad)


# -- witnesses -------------------------------------------------------------------------------


class WitnessServer:
    """A tlog.Witness behind an httpx transport, counting the answers it gave."""

    def __init__(self, name: str, log_vkey: str, seed: int) -> None:
        self.signer = tlog.CosignatureSigner.from_seed(name, bytes([seed]) * 32)
        self.witness = tlog.Witness(self.signer, [tlog.parse_vkey(log_vkey)])
        self.statuses: list[int] = []
        self.mode = "ok"

    def handle(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/add-checkpoint")
        if self.mode == "down":
            raise httpx.ConnectError("down", request=request)
        if self.mode == "refuse":
            self.statuses.append(403)
            return httpx.Response(403, text="no\n")
        status, ctype, body = self.witness.add_checkpoint(request.content)
        if self.mode == "forge" and status == 200:
            sig = tlog.parse_signature_line(body[:-1])
            body = tlog.Signature(sig.name, sig.key_id, sig.sig[:8] + bytes(64)).line
        self.statuses.append(status)
        return httpx.Response(status, text=body, headers={"content-type": ctype})

    def config(self, name: str) -> WitnessConfig:
        return WitnessConfig(name, self.signer.verifier, f"http://{name}.example")


def with_witnesses(app: FastAPI, servers: dict[str, WitnessServer]) -> LogC2SP:
    def route(request: httpx.Request) -> httpx.Response:
        return servers[request.url.host.split(".")[0]].handle(request)

    old = c2sp(app)
    new = LogC2SP(
        old.db,
        old.settings,
        _seed(app),
        [s.config(n) for n, s in servers.items()],
        http=httpx.Client(transport=httpx.MockTransport(route)),
        origin=old.origin,
        log_id=old.log_id,
    )
    app.state.log_c2sp = new
    app.state.logs.active = new
    return new


def _seed(app: FastAPI) -> bytes:
    return c2sp(app).note_seed


def policy_for(
    client: httpx.Client, witnesses: dict[str, WitnessServer], quorum: str
) -> tlog.Policy:
    lines = [f"log {client.get('/v1/keys').json()['log']['vkey']}"]
    lines += [f"witness {n} {w.signer.vkey}" for n, w in witnesses.items()]
    return tlog.parse_policy("\n".join(lines + [f"quorum {quorum}", ""]))


def test_witnesses_cosign_and_players_get_offline_proofs(
    app: FastAPI, client: httpx.Client
) -> None:
    v = vkey_of(client)
    servers = {
        "alpha": WitnessServer("alpha.example/w", v.vkey, 7),
        "beta": WitnessServer("beta.example/w", v.vkey, 8),
    }
    log = with_witnesses(app, servers)
    before = log_size(app)
    match_id = v1_match(app)
    size = log_size(app)
    assert size == before + 1  # the match's commitment record
    log.checkpoint_now()
    # Not yet cosigned: the proof as the log signed it, saying which cosignatures it lacks.
    r = client.get(f"/v1/matches/{match_id}/log-proof")
    assert r.status_code == 200 and r.headers["qahwa-witnesses-missing"] == "alpha beta"
    assert tlog.open_checkpoint(tlog.parse_proof(r.text).checkpoint, v)[0].size == size
    assert log.note_lag() == {"alpha": size, "beta": size}  # neither cosigned anything
    # beta already cosigned a checkpoint of this log elsewhere (with the match): we learn it
    # by 409.
    note1 = log.checkpoint()
    assert tlog.open_checkpoint(note1, v)[0].size == size
    assert servers["beta"].witness.add_checkpoint(("old 0\n\n" + note1).encode())[0] == 200
    servers["beta"].statuses.clear()
    fill(app, 5)
    row = log.checkpoint_now()
    assert row is not None and row.tree_size == size + 5
    assert log.submit_all() == {"alpha": True, "beta": True}
    assert servers["beta"].statuses == [409, 200]  # told its size, resynced, cosigned
    assert servers["alpha"].statuses == [200]
    text = client.get("/log/checkpoint").text
    cp, note = tlog.open_checkpoint(text, v, [s.signer.verifier for s in servers.values()])
    assert cp.size == size + 5 and len(note.verified) == 3
    assert log.note_lag() == {"alpha": 0, "beta": 0}
    # The player's proof verifies offline against a policy, and fails one it does not meet.
    r = client.get(f"/v1/matches/{match_id}/log-proof")
    assert r.headers["qahwa-witnesses-missing"] == ""  # the cosigned checkpoint is picked
    proof_text = r.text
    proof = tlog.parse_proof(proof_text)
    leaf = tlog.leaf_hash(_leaf_of(app, match_id))
    assert proof.verify(leaf, policy_for(client, servers, "alpha"))[0] == cp
    third = {**servers, "gamma": WitnessServer("gamma.example/w", v.vkey, 9)}
    policy = tlog.parse_policy(
        "\n".join(
            [f"log {v.vkey}"]
            + [f"witness {n} {w.signer.vkey}" for n, w in third.items()]
            + ["group all3 all alpha beta gamma", "quorum all3", ""]
        )
    )
    with pytest.raises(tlog.PolicyError, match="quorum"):
        proof.verify(leaf, policy)
    # The next round: each witness goes on from the size it cosigned, no 409.
    fill(app, 3)
    log.checkpoint_now()
    assert log.submit_all() == {"alpha": True, "beta": True}
    assert servers["beta"].statuses == [409, 200, 200]
    r = client.get("/v1/matches/m_nope/log-proof")
    assert r.status_code == 404


def _leaf_of(app: FastAPI, match_id: str) -> bytes:
    from service.models import LogEntry, Match

    with app.state.db.read() as s:
        m = s.get(Match, match_id)
        assert m is not None
        e = s.get(LogEntry, (1, m.log_index))
        assert e is not None
        return e.leaf.encode()


def test_a_refusing_a_down_and_a_forging_witness_give_no_cosignature(
    app: FastAPI, client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    v = vkey_of(client)
    servers = {
        n: WitnessServer(f"{n}.example/w", v.vkey, i)
        for i, n in enumerate(["good", "refuses", "down", "forges"], 1)
    }
    servers["refuses"].mode = "refuse"
    servers["down"].mode = "down"
    servers["forges"].mode = "forge"
    log = with_witnesses(app, servers)
    match_id = v1_match(app)
    fill(app, 4)
    size = log_size(app)
    assert log.checkpoint_now() is not None
    with caplog.at_level("WARNING", logger="qahwa.log"):
        assert log.submit_all() == {"good": True, "refuses": False, "down": False, "forges": False}
    said = [r.getMessage() for r in caplog.records]
    assert f"witness refuses refused checkpoint {size}: 403 no" in said
    assert "witness down: ConnectError" in said
    assert "witness forges: its cosignature does not verify" in said
    text = client.get("/log/checkpoint").text
    note = tlog.open_note(text, [v] + [s.signer.verifier for s in servers.values()])
    assert {w.name for w, _ in note.verified} == {ORIGIN, "good.example/w"}
    # Three witnesses fail: the proof is served all the same, with the one cosignature
    # there is, and names the three missing; a policy that asks only for good accepts it.
    r = client.get(f"/v1/matches/{match_id}/log-proof")
    assert r.status_code == 200
    assert r.headers["qahwa-witnesses-missing"] == "refuses down forges"
    proof = tlog.parse_proof(r.text)
    good = {"good": servers["good"]}
    leaf = tlog.leaf_hash(_leaf_of(app, match_id))
    assert proof.verify(leaf, policy_for(client, good, "good"))[0].size == size
    with pytest.raises(tlog.PolicyError, match="quorum"):
        proof.verify(leaf, policy_for(client, {"down": servers["down"]}, "down"))
    # The lag of each: none for good, the whole log for the three that never cosigned.
    assert log.note_lag() == {"good": 0, "refuses": size, "down": size, "forges": size}


def test_a_proof_of_an_entry_no_checkpoint_holds_yet_signs_one(
    app: FastAPI, client: httpx.Client
) -> None:
    v = vkey_of(client)
    servers = {"slow": WitnessServer("slow.example/w", v.vkey, 5)}
    servers["slow"].mode = "down"
    log = with_witnesses(app, servers)
    log.checkpoint_now()
    before = log.newest().tree_size
    match_id = v1_match(app)  # appended; the checkpointer (hourly here) has not run
    r = client.get(f"/v1/matches/{match_id}/log-proof")
    assert r.status_code == 200 and r.headers["qahwa-witnesses-missing"] == "slow"
    cp = tlog.open_checkpoint(tlog.parse_proof(r.text).checkpoint, v)[0]
    assert cp.size == before + 1 == log.newest().tree_size
    # asked again: the same checkpoint, no new one
    assert client.get(f"/v1/matches/{match_id}/log-proof").text == r.text


def test_a_witness_never_cosigns_a_fork() -> None:
    log = tlog.NoteSigner.from_seed("fork.example/log", bytes([3]) * 32)
    w = tlog.Witness(tlog.CosignatureSigner.from_seed("w.example", bytes([4]) * 32), [log.verifier])
    reader = tlog.ListHashReader.from_leaf_hashes([tlog.leaf_hash(b"%d" % i) for i in range(9)])
    forked = tlog.ListHashReader.from_leaf_hashes([tlog.leaf_hash(b"x%d" % i) for i in range(9)])

    def note(size: int, r: tlog.ListHashReader) -> str:
        return tlog.sign_note(tlog.Checkpoint(log.name, size, tlog.tree_hash(size, r)).text, [log])

    assert w.add_checkpoint(("old 0\n\n" + note(5, reader)).encode())[0] == 200
    # The same size with another root: refused, and kept as evidence.
    status, _, body = w.add_checkpoint(("old 5\n\n" + note(5, forked)).encode())
    assert status == 422 and "different root" in body
    # A larger size whose proof does not connect to the cosigned root: refused.
    proof = "".join(tlog.note.b64(h) + "\n" for h in tlog.prove_tree(9, 5, forked))
    assert w.add_checkpoint((f"old 5\n{proof}\n" + note(9, forked)).encode())[0] == 422
    assert len(w.refused) == 2
    good = "".join(tlog.note.b64(h) + "\n" for h in tlog.prove_tree(9, 5, reader))
    assert w.add_checkpoint((f"old 5\n{good}\n" + note(9, reader)).encode())[0] == 200
    # Unknown log 404, bad signature 403, old > size 400, stale old 409 with the size.
    other = tlog.NoteSigner.from_seed("other.example/log", bytes(32))
    assert (
        w.add_checkpoint(
            (
                "old 0\n\n"
                + tlog.sign_note(
                    "other.example/log\n0\n" + tlog.note.b64(tlog.EMPTY_ROOT) + "\n", [other]
                )
            ).encode()
        )[0]
        == 404
    )
    stranger = tlog.NoteSigner.from_seed(log.name, bytes(32))
    assert (
        w.add_checkpoint(
            (
                "old 9\n\n"
                + tlog.sign_note(
                    tlog.Checkpoint(log.name, 9, tlog.tree_hash(9, reader)).text, [stranger]
                )
            ).encode()
        )[0]
        == 403
    )
    assert w.add_checkpoint(("old 10\n\n" + note(9, reader)).encode())[0] == 400
    assert w.add_checkpoint(("old 5\n\n" + note(9, reader)).encode())[:2] == (
        409,
        "text/x.tlog.size",
    )
    assert w.add_checkpoint(b"old x\n\n")[0] == 400
