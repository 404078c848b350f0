"""An independent implementation reads our log: Go's golang.org/x/mod sumdb/note and
sumdb/tlog (Debian's golang-go and golang-golang-x-mod-dev, GOPATH mode, no module proxy)
check, from what the server serves, that the checkpoint verifies with the log's vkey, the
root recomputes from the tiles, every entry hashes to its tile hash, and an older checkpoint
is consistent with the newer one (tests/go/tlog_interop.go). Skips only without ``go``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert

import tlog
from fairness import canonical_json
from service import translog
from service.models import LogEntry
from tests.support.live_server import LiveServer

GO = shutil.which("go")
GOCODE = Path("/usr/share/gocode")
PROGRAM = Path(__file__).parents[1] / "go" / "tlog_interop.go"


class BulkLog:
    """Entries written straight into the log's tables, many per statement (as the
    migration of revision 0002 does): the tree is computed in memory with tlog."""

    def __init__(self, app: object) -> None:
        self.db = app.state.db  # type: ignore[attr-defined]
        self.tree = tlog.ListHashReader()
        self.size = 0

    def fill(self, n: int) -> None:
        entries, nodes = [], []
        for i in range(self.size, self.size + n):
            leaf = canonical_json({"type": "filler", "i": i, "text": "é" * (i % 7)})
            h = tlog.leaf_hash(leaf)
            hashes = tlog.stored_hashes(i, h, self.tree)
            self.tree.hashes.extend(hashes)
            entries.append(
                {
                    "log_id": 1,  # the first log (the server's own, recorded at its start)
                    "idx": i,
                    "match_id": f"m_go{i}",
                    "leaf": leaf.decode(),
                    "leaf_hash": h.hex(),
                    "created_at": "2026-12-03T00:00:00Z",
                }
            )
            nodes += [
                {"log_id": 1, "level": lv, "idx": i >> lv, "hash": x.hex()}
                for lv, x in enumerate(hashes)
            ]
        with self.db.write_engine.begin() as conn:
            conn.execute(insert(LogEntry), entries)
            conn.execute(insert(translog.TreeNode), nodes)
        self.size += n


def save_tiles(client: httpx.Client, size: int, out: Path) -> None:
    for tile in tlog.tiles_for_size(size):
        paths = [tile.path]
        if tile.level == 0:
            paths.append(tlog.Tile(0, tile.n, tile.width, entries=True).path)
        for p in paths:
            r = client.get("/log/" + p)
            assert r.status_code == 200, (p, r.text)
            (out / p).parent.mkdir(parents=True, exist_ok=True)
            (out / p).write_bytes(r.content)


@pytest.mark.skipif(GO is None, reason="go is not installed (apt: golang-go)")
def test_go_sumdb_reads_our_log(tmp_path: Path) -> None:
    assert (GOCODE / "src/golang.org/x/mod/sumdb/tlog").is_dir(), (
        "go is installed but golang-golang-x-mod-dev is not"
    )
    with (
        LiveServer(log_origin="interop.test/log", checkpoint_seconds=3600) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as client,
    ):
        log = BulkLog(srv.app)
        log.fill(300)
        srv.app.state.log_c2sp.checkpoint_now()
        old = client.get("/log/checkpoint").text
        log.fill(65536 - 300 + 17)  # full level-0 and level-1 tiles, partial ones above
        srv.app.state.log_c2sp.checkpoint_now()
        new = client.get("/log/checkpoint").text
        vkey = client.get("/v1/keys").json()["log"]["vkey"]
        size = int(new.split("\n")[1])
        assert size == 65553
        save_tiles(client, size, tmp_path / "tiles")
    (tmp_path / "old").write_text(old)
    (tmp_path / "new").write_text(new)
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPROXY": "off",
        "GOFLAGS": "",
        "GOPATH": f"{tmp_path / 'gopath'}:{GOCODE}",
        "GOCACHE": str(tmp_path / "gocache"),
        "CGO_ENABLED": "0",
    }
    program = [GO, "run", str(PROGRAM), str(tmp_path / "tiles"), vkey]
    program += [str(tmp_path / "old"), str(tmp_path / "new")]

    def interop() -> subprocess.CompletedProcess[str]:
        """The Go program on the tiles written, the log's vkey and two checkpoints."""
        return subprocess.run(program, capture_output=True, text=True, env=env, timeout=600)

    done = interop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok the root of size 65553 recomputes from the tiles" in done.stdout
    assert (
        "ok all 65553 entries hash to their tile hashes (every 251st proven in the tree)"
        in done.stdout
    )
    assert "ok size 300 is consistent with size 65553" in done.stdout
    # The check can fail: one changed byte in an entry bundle is found.
    bundle = tmp_path / "tiles" / "tile/entries/001"
    raw = bytearray(bundle.read_bytes())
    raw[10] ^= 1
    bundle.write_bytes(bytes(raw))
    bad = interop()
    assert bad.returncode == 1 and "entry 256 does not hash to its tile hash" in bad.stdout
