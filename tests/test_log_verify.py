"""`verify` and `verify log` against real servers: inclusion, remembered heads, forks.

Two servers that share one signing key but hold different logs stand for a server that
shows different histories to different people: whoever has seen one head must refuse the
other. A third holds a copy of the first log without its last entry (a head that drops an
entry).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from live_server import LiveServer

from fairness import SecretBox, Signer, canonical_json
from service import keys
from service.db import Database
from service.server import ServerThread
from service.settings import Settings
from verify_cli.keys import KeySet
from verify_cli.log import CompactRange, HeadState, audit, consistent, leaf_hash
from verify_cli.main import app

KEY = Signer.generate()


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def settings(tmp: Path) -> Settings:
    tmp.mkdir(parents=True, exist_ok=True)
    return Settings(database_url=f"sqlite:///{tmp / 'q.db'}", data_dir=tmp, master_key=None,
                    signing_key=KEY.private_b64(), signing_key_file=None)


def _v1_rows() -> Any:
    """bench/v1_rows.py (bench/ is not an installed package), loaded by its path."""
    spec = importlib.util.spec_from_file_location(
        "qahwa_bench_v1_rows", Path(__file__).resolve().parent.parent / "bench" / "v1_rows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sessions(srv: LiveServer | ServerThread, n: int, tag: str) -> list[str]:
    """n closed qahwa-fair/1 rng sessions; their transcript URLs.

    One log leaf each (the commitment record at index i), which these tests of the
    verifier's v1 log check count on: the rows are written as v1's service made them (new
    sessions are qahwa-fair/2, with a lock and a reveal record in the log), then seeded,
    drawn from and closed over HTTP.
    """
    rows = _v1_rows()
    db = Database(srv.settings.database_url)
    try:
        made = [rows.insert_v1_match(db, KEY, SecretBox(keys.master_key(srv.settings)), "rng",
                                     {}) for _ in range(n)]
    finally:
        db.dispose()
    out = []
    with httpx.Client(base_url=srv.url) as c:
        for i, (sid, (tok,)) in enumerate(made):
            h = {"Authorization": f"Bearer {tok}"}
            assert c.post(f"/v1/rng/{sid}/seed", json={"client_seed": f"{tag}-{i}"},
                          headers=h).status_code == 200
            assert c.post(f"/v1/rng/{sid}/draws", json={"kind": "dice", "count": 2, "sides": 6},
                          headers=h).status_code == 200
            assert c.post(f"/v1/rng/{sid}/close", headers=h).status_code == 200
            out.append(f"{srv.url}/v1/rng/{sid}/transcript")
    return out


def log_check(res: Result) -> dict[str, Any]:
    doc = json.loads(res.stdout)
    (rep,) = doc["results"]
    (chk,) = [c for c in rep["checks"] if c["name"] == "log"]
    return {"status": rep["status"], "exit": doc["exit_code"], **chk}


@pytest.fixture
def tmp() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="qahwa-logv-") as d:
        yield Path(d)


# -- the endpoint ----------------------------------------------------------------------------

def test_consistency_endpoint(tmp: Path) -> None:
    with LiveServer(settings(tmp / "a")) as srv:
        sessions(srv, 5, "c")
        with httpx.Client(base_url=srv.url) as c:
            heads = [c.get("/v1/log", params={"tree_size": k}).json() for k in range(6)]
            assert heads[3] == c.get("/v1/log", params={"tree_size": 3}).json()  # cached
            for m in range(1, 6):
                for n in range(m, 6):
                    r = c.get("/v1/log/consistency", params={"first": m, "second": n})
                    assert r.status_code == 200, r.text
                    body = r.json()
                    assert body["first"] == m and body["second"] == n
                    assert body["first_head"]["root_hash"] == heads[m]["root_hash"]
                    assert body["second_head"]["root_hash"] == heads[n]["root_hash"]
                    assert consistent(m, n, bytes.fromhex(heads[m]["root_hash"]),
                                      bytes.fromhex(heads[n]["root_hash"]),
                                      [bytes.fromhex(x) for x in body["proof"]])
            for params, status, code in (({"first": 0, "second": 3}, 422, "validation_error"),
                                         ({"first": 4, "second": 3}, 400, "bad_request"),
                                         ({"first": 2, "second": 9}, 404, "not_found"),
                                         ({"first": 2}, 422, "validation_error"),
                                         ({"first": "x", "second": 3}, 422,
                                          "validation_error")):
                r = c.get("/v1/log/consistency", params=params)
                assert r.status_code == status, (params, r.text)
                err = r.json()["error"]
                assert err["code"] == code and err["message"]
            r = c.get("/v1/log/proof", params={"index": 5})
            assert r.status_code == 404 and "no log entry 5" in r.json()["error"]["message"]


# -- verify: inclusion and remembered heads --------------------------------------------------

def test_verify_checks_inclusion_and_remembers_heads(tmp: Path) -> None:
    state = tmp / "state" / "heads.json"
    with LiveServer(settings(tmp / "a")) as srv:
        urls = sessions(srv, 3, "a")
        chk = log_check(run(urls[1], "--state", str(state), "--json"))
        assert chk["ok"] is True and chk["status"] == "verified", chk
        assert chk["detail"].startswith("included at index 1 of tree size 3")
        assert "first head seen" in chk["detail"]
        saved = json.loads(state.read_text())
        (entry,) = saved["heads"].values()
        assert entry["head"]["tree_size"] == 3
        urls += sessions(srv, 2, "b")
        res = run(urls[0], "--state", str(state))
        assert res.exit_code == 0, res.output
        assert "log: included at index 0 of tree size 5" in res.stdout
        assert "consistent with the head of size 3 seen before" in res.stdout
        assert next(iter(json.loads(state.read_text())["heads"].values()))["head"][
            "tree_size"] == 5
        # --log-proof: a transcript file with a saved proof of an older tree size
        with httpx.Client(base_url=srv.url) as c:
            doc = c.get(urls[2]).json()
            proof = c.get("/v1/log/proof", params={"index": 2, "tree_size": 4}).json()
            other = c.get("/v1/log/proof", params={"index": 3}).json()
            keys = c.get("/v1/keys").json()
        (tmp / "t.json").write_text(json.dumps(doc))
        (tmp / "p.json").write_text(json.dumps(proof))
        (tmp / "k.json").write_text(json.dumps(keys))
        # without a server, the consistency with the remembered head cannot be asked for
        chk = log_check(run(str(tmp / "t.json"), "--key", str(tmp / "k.json"), "--log-proof",
                            str(tmp / "p.json"), "--state", str(state), "--json"))
        assert chk["ok"] is None and chk["exit"] == 0
        assert "included at index 2 of tree size 4" in chk["detail"]
        assert "not checked" in chk["detail"]
        # with the server, the saved head of size 4 is proved to be a prefix of size 5
        chk = log_check(run(str(tmp / "t.json"), "--server", srv.url, "--log-proof",
                            str(tmp / "p.json"), "--state", str(state), "--json"))
        assert chk["ok"] is True and "seen before is consistent with it" in chk["detail"]
        # a proof of another entry, a changed audit path, a tampered leaf: failures
        other["leaf"]["match_id"] = doc["match_id"]
        (tmp / "o.json").write_text(json.dumps(other))
        chk = log_check(run(str(tmp / "t.json"), "--key", str(tmp / "k.json"), "--log-proof",
                            str(tmp / "o.json"), "--no-state", "--json"))
        assert chk["ok"] is False and chk["exit"] == 1 and "index 3" in chk["detail"]
        bad = json.loads(json.dumps(proof))
        bad["audit_path"][0] = hashlib.sha256(b"x").hexdigest()
        (tmp / "b.json").write_text(json.dumps(bad))
        chk = log_check(run(str(tmp / "t.json"), "--key", str(tmp / "k.json"), "--log-proof",
                            str(tmp / "b.json"), "--no-state", "--json"))
        assert chk["ok"] is False and "leads to root" in chk["detail"]
        bad = json.loads(json.dumps(proof))
        bad["leaf"]["commitment"] = "0" * 64
        (tmp / "b.json").write_text(json.dumps(bad))
        chk = log_check(run(str(tmp / "t.json"), "--key", str(tmp / "k.json"), "--log-proof",
                            str(tmp / "b.json"), "--no-state", "--json"))
        assert chk["ok"] is False and "another match" in chk["detail"]
        # a file without --server or --log-proof: the log is simply not checked
        chk = log_check(run(str(tmp / "t.json"), "--key", str(tmp / "k.json"), "--json",
                            "--state", str(tmp / "unused.json")))
        assert chk["ok"] is None and chk["status"] == "verified"
        assert not (tmp / "unused.json").exists()
        res = run(str(tmp / "t.json"), "--state", "x", "--no-state")
        assert res.exit_code == 2 and "exclude each other" in res.stderr


def _copy_without_last(src: Path, dst: Path) -> None:
    """The database at ``src`` with the last log entry dropped (and its tree and head)."""
    dst.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(src / "q.db") as a, sqlite3.connect(dst / "q.db") as b:
        a.backup(b)
        (n,) = b.execute("SELECT max(idx) FROM translog").fetchone()
        b.execute("DELETE FROM translog WHERE idx = ?", (n,))
        b.execute("DELETE FROM translog_heads WHERE tree_size > ?", (n,))
        for level in range(32):
            b.execute("DELETE FROM translog_nodes WHERE level = ? AND (idx + 1) * ? > ?",
                      (level, 1 << level, n))
    (dst / "master.key").write_bytes((src / "master.key").read_bytes())


def test_verify_names_a_fork_and_keeps_the_evidence(tmp: Path) -> None:
    state = tmp / "st" / "heads.json"
    with LiveServer(settings(tmp / "a")) as a, LiveServer(settings(tmp / "b")) as b:
        ua = sessions(a, 3, "a")
        ub = sessions(b, 3, "b")  # the same key, the same size, another history
        assert log_check(run(ua[0], "--state", str(state), "--json"))["ok"] is True
        res = run(ub[0], "--state", str(state))
        assert res.exit_code == 1, res.output
        assert "FAILED" in res.stdout and "log fork" in res.stdout
        assert "two signed heads of size 3 with different roots" in res.stdout
        (ev,) = (state.parent / "evidence").glob("fork-*.json")
        kept = json.loads(ev.read_text())
        assert kept["remembered_head"]["tree_size"] == kept["new_head"]["tree_size"] == 3
        assert kept["remembered_head"]["root_hash"] != kept["new_head"]["root_hash"]
        # the remembered head stays the first one seen
        (entry,) = json.loads(state.read_text())["heads"].values()
        assert entry["head"] == kept["remembered_head"]
        # b grows past a: its consistency proof starts from another head of size 3
        sessions(b, 2, "b2")
        chk = log_check(run(ub[1], "--state", str(state), "--json"))
        assert chk["ok"] is False and "log fork" in chk["detail"]
        # --no-state: nothing remembered, so nothing to contradict
        assert log_check(run(ub[1], "--no-state", "--json"))["ok"] is True
    _copy_without_last(tmp / "a", tmp / "c")
    with LiveServer(settings(tmp / "c")) as c:
        url = ua[0].replace(ua[0].split("/v1/")[0], c.url)
        chk = log_check(run(url, "--state", str(state), "--json"))
        assert chk["ok"] is False and chk["exit"] == 1
        assert "cannot prove that its head of size 3 extends the one of size 2" in chk["detail"]
    assert len(list((state.parent / "evidence").glob("fork-*.json"))) == 3


# -- verify log: the monitor -----------------------------------------------------------------

def monitor(*args: str) -> tuple[int, dict[str, Any]]:
    res = run("log", *args, "--json")
    return res.exit_code, json.loads(res.stdout)


def test_monitor_audits_resumes_and_detects_forks(tmp: Path) -> None:
    state = tmp / "m" / "heads.json"
    with LiveServer(settings(tmp / "a")) as a, LiveServer(settings(tmp / "b")) as b:
        sessions(a, 5, "a")
        code, out = monitor("--server", a.url, "--state", str(state))
        assert code == 0 and out["ok"] and out["audited"] == 5 and out["audited_from"] == 0
        sessions(a, 3, "a2")
        code, out = monitor("--server", a.url, "--state", str(state), "--batch", "2")
        assert code == 0 and out["audited_from"] == 5 and out["audited"] == 3
        assert out["tree_size"] == 8
        code, out = monitor("--server", a.url, "--state", str(state), "--restart",
                            "--jobs", "2")
        assert code == 0 and out["audited_from"] == 0 and out["audited"] == 8
        res = run("log", "--server", a.url, "--state", str(state))
        assert res.exit_code == 0 and "LOG VERIFIED" in res.stdout
        # b: the same key, another history
        sessions(b, 9, "b")
        code, out = monitor("--server", b.url, "--state", str(state))
        assert code == 1 and not out["ok"]
        assert any("log fork" in f for f in out["failures"]) and out["evidence"]
        code, out = monitor("--server", b.url, "--no-state")
        assert code == 0 and out["audited"] == 9
        # an entry changed in the database after the fact
        with sqlite3.connect(tmp / "a" / "q.db") as db:
            (leaf,) = db.execute("SELECT leaf FROM translog WHERE idx = 4").fetchone()
            doc = json.loads(leaf)
            doc["game"] = "tawla"
            db.execute("UPDATE translog SET leaf = ? WHERE idx = 4", (canonical_json(doc).decode(),))
        code, out = monitor("--server", a.url, "--no-state")
        assert code == 1
        assert any("entry 4" in f and "leaf_hash" in f for f in out["failures"])
        assert any("entry 4" in f and "signature" in f for f in out["failures"])
    res = run("log", "--server", a.url, "--no-state")  # the server is gone
    assert res.exit_code == 2 and "cannot fetch" in res.stderr and not res.stdout
    res = run("log", "--server", "ftp://x")
    assert res.exit_code == 2 and "http(s) URL" in res.stderr


class FakeLog:
    """A log served from memory (signed with KEY) that a test can corrupt."""

    def __init__(self, leaves: list[dict[str, Any]]) -> None:
        self.leaves = leaves
        self.fail_from: int | None = None

    def head(self, n: int) -> dict[str, Any]:
        rng = CompactRange()
        for leaf in self.leaves[:n]:
            rng.append(leaf_hash(canonical_json(leaf)))
        return KEY.signed({"type": "tree_head", "protocol": "qahwa-fair/1", "tree_size": n,
                           "root_hash": rng.root().hex(), "timestamp": "2026"})

    def __call__(self, path: str, params: dict[str, Any]) -> tuple[int, Any]:
        if path == "/v1/log":
            return 200, self.head(int(params.get("tree_size", len(self.leaves))))
        if path == "/v1/log/entries":
            a, k = int(params["start"]), int(params["limit"])
            if self.fail_from is not None and a >= self.fail_from:
                return 503, {"error": {"code": "down", "message": "try later"}}
            return 200, {"entries": [{"index": i, "leaf": leaf,
                                      "leaf_hash": leaf_hash(canonical_json(leaf)).hex()}
                                     for i, leaf in enumerate(self.leaves[a:a + k], a)]}
        return 404, {"error": {"code": "not_found", "message": path}}


def leaf(i: int, mid: str | None = None, log_index: int | None = None) -> dict[str, Any]:
    return KEY.signed({"type": "commitment", "protocol": "qahwa-fair/1",
                       "match_id": mid or f"m_{i}", "game": "rng", "ruleset": "{}",
                       "commitment": "ab" * 32, "created_at": "2026",
                       "log_index": i if log_index is None else log_index})


def test_audit_checks_every_entry_and_resumes_from_checkpoints(tmp: Path) -> None:
    keys = KeySet({KEY.key_id: KEY.public_key})
    log = FakeLog([leaf(i) for i in range(9)])
    log.fail_from = 6
    state = HeadState.load(tmp / "heads.json")
    res = audit("fake", keys, state, log, batch=2, checkpoint_every=2)
    assert not res.ok and "entries from 6" in res.failures[0] and "try later" in res.failures[0]
    assert state.audits["fake"]["tree_size"] == 6  # the last checkpoint before the failure
    log.fail_from = None
    state = HeadState.load(tmp / "heads.json")
    seen: list[tuple[int, int]] = []
    res = audit("fake", keys, state, log, batch=2, checkpoint_every=2,
                progress=lambda d, t: seen.append((d, t)))
    assert res.ok and res.audited_from == 6 and res.audited == 3, res
    assert seen[-1] == (9, 9)
    # a match id twice, a wrong log_index, a signature by another key
    other = Signer.generate()
    bad = [leaf(0), leaf(1, mid="m_0"), leaf(2, log_index=7),
           other.signed({k: v for k, v in leaf(3).items() if k != "signature"})]
    for jobs in (1, 2):
        res = audit("bad", keys, HeadState.load(None), FakeLog(bad), batch=3, jobs=jobs)
        assert not res.ok and res.audited == 4
        assert any("entry 1: match id m_0 is logged twice (first at 0)" in f
                   for f in res.failures)
        assert any("entry 2: its log_index is 7" in f for f in res.failures)
        assert any(f.startswith("entry 3") for f in res.failures)
    # a head whose root is not the entries' root
    lying = FakeLog([leaf(i) for i in range(4)])
    real = lying.head
    lying.head = lambda n: KEY.signed({**{k: v for k, v in real(n).items()
                                          if k != "signature"}, "root_hash": "00" * 32})
    res = audit("lying", keys, HeadState.load(None), lying)
    assert not res.ok and "recomputed root" in res.failures[-1]
