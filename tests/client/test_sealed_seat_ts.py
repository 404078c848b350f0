"""The conforming sealed seat in TypeScript (clients/ts/src/sealed/seat.ts in the client, issue
47) against a real server, driven by clients/ts/harness/sealed.test.ts: honest sealed hokm (four
and two players), sealed qahve and sealed Iraqi dominoes matches pass ``verify --server URL
--seat FILE`` with every seat's export; the four lies of issue 46 (``owed`` naming the seat's
own items, a made-up ``reveal_key`` mid-hand, a made-up ``open``, ``dealt`` swapped) are each
refused with a ``sealed_view`` dispute and nothing given away; a seat reloaded mid-deal resumes
with the hand secret it stored before it sent anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.client.test_clients_ts import built, node_test, verify
from tests.support.live_server import LiveServer

__all__ = ["built"]


@pytest.mark.slow
def test_sealed_tables_against_a_real_server(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with LiveServer(checkpoint_seconds=0.05) as srv:
        text = node_test(
            built,
            "harness/sealed.test.js",
            {
                "QAHWA_TEST_URL": srv.url,
                "QAHWA_TEST_OPERATOR_KEY": srv.operator_key,
                "QAHWA_TEST_OUT": str(out),
            },
        )
        for lie in ("owed_own_items", "reveal_mid_hand", "open_made_up", "dealt_swapped"):
            assert f"lies ({lie})" in text
        dirs = sorted(p for p in out.iterdir() if p.is_dir())
        assert [d.name for d in dirs] == [
            "0-sealed-hokm-4",
            "1-sealed-hokm-2",
            "2-sealed-iraqi_domino-2",
            "3-sealed-qahve-4",
            "resumed-sealed-iraqi_domino",
        ]
        for d in dirs:
            transcript = d / "transcript.json"
            assert json.loads(transcript.read_text())["protocol"] == "qahwa-fair/3"
            for seat_file in sorted(d.glob("seat-*.json")):
                seat = json.loads(seat_file.read_text())
                assert "sealed_keys" not in seat and "key_seed" not in seat
                # its machine following the log, the seat asked for its answers' views brief
                paths = [r["path"] for r in seat["requests"] if "/actions" in r["path"]]
                assert paths and all(p.endswith("/actions?sealed=brief") for p in paths), paths
                res = verify(str(transcript), "--server", srv.url, "--seat", str(seat_file))
                assert res.exit_code == 0, (d.name, seat_file.name, res.output)
                assert "holds exactly your client seed" in res.output
                changed = tmp_path / f"{d.name}-{seat_file.stem}-changed.json"
                changed.write_text(json.dumps({**seat, "nonce": "1" * 64}))
                res = verify(str(transcript), "--server", srv.url, "--seat", str(changed))
                assert res.exit_code == 1, res.output
