"""Appends from several threads at once (each its own connection and transaction, as the
service's match creation does) leave the stored tree and every cached head equal to the
tree recomputed from the leaves: SQLite always, PostgreSQL with QAHWA_TEST_PG_URL."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from fairness import Signer, verify_record
from service import migrate, translog
from tests.log.test_log_tree import fresh_db, mth

SIGNER = Signer.generate()
THREADS, EACH = 4, 12


@pytest.mark.parametrize("which", ["sqlite", "postgresql"])
def test_concurrent_appends_keep_the_tree_whole(tmp_path: Path, which: str) -> None:
    with fresh_db(tmp_path, which) as db:
        migrate.upgrade(db)
        errors: list[BaseException] = []

        def worker(w: int) -> None:
            try:
                for i in range(EACH):
                    with db.write() as s:
                        db.lock_table(s, "translog")  # the index, known before the record
                        idx = translog.size(s, log=translog.active_log(s))
                        rec = SIGNER.signed(
                            {"type": "commitment", "match_id": f"w{w}-{i}", "log_index": idx}
                        )
                        assert translog.add(db, s, rec, match_id=f"w{w}-{i}", at="2026") == idx
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        n = THREADS * EACH
        entries = translog.entries(db, 0, 1000, log=1)["entries"]
        assert [e["index"] for e in entries] == list(range(n))
        assert all(e["leaf"]["log_index"] == e["index"] for e in entries)
        leaves = [
            json.dumps(
                e["leaf"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode()
            for e in entries
        ]
        for k in range(n + 1):
            head = translog.signed_head(db, SIGNER, k, log=1)
            verify_record(head, SIGNER.public_key)
            assert head["root_hash"] == mth(leaves[:k]).hex(), k
