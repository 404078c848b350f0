"""Every example of docs/verify.md runs as written (issue 30): each ``sh`` block is run with
bash against a live server, in a directory holding the files the doc names, and must exit 0;
the ``text`` block after a command is what it prints (``…``: hex left out). A line of an
unmarked block that starts with ``verify `` outside the synopsis (the first block, usage forms
with placeholders) would be an example the test does not run, and fails."""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

import httpx

from tests.support import bash_ok
from tests.support.http_play import create_match, play_actions, seed_all

DOC = Path(__file__).resolve().parents[2] / "docs" / "verify.md"
BIN = Path(sys.executable).parent
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b|\[|\.\.\.|…|--version")


def blocks() -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def examples() -> list[tuple[str, str | None]]:
    """(an sh block, the text block right after it or None)."""
    out: list[tuple[str, str | None]] = []
    bs = blocks()
    for i, (kind, body) in enumerate(bs):
        if kind == "sh":
            after = bs[i + 1] if i + 1 < len(bs) else None
            out.append((body, after[1] if after and after[0] == "text" else None))
    return out


def test_the_doc_has_examples_and_no_unrun_one() -> None:
    assert len(examples()) >= 4
    synopsis, *rest = blocks()
    assert synopsis[0] == ""
    for line in synopsis[1].splitlines():  # usage forms, with placeholders
        assert line.startswith(("verify ", "  ")) and PLACEHOLDER.search(line), line
    for kind, body in rest:
        if kind:
            continue
        for line in body.splitlines():
            assert not line.startswith("verify "), f"an example not marked sh: {line}"


def _printed(pattern: str) -> re.Pattern[str]:
    return re.compile(re.escape(pattern.strip()).replace("…", "[0-9a-f]*"))


def test_every_example_runs(server: object, tmp_path: Path) -> None:
    url = server.url  # type: ignore[attr-defined]
    with httpx.Client(base_url=url, timeout=30) as c:
        created = create_match(c, "tawla", {"match_length": 1})
        seats = seed_all(c, created, prefix="docs")
        play_actions(c, seats, random.Random(3))
        mid = created["match_id"]
        transcript = c.get(f"/v1/matches/{mid}/transcript")
        assert transcript.status_code == 200, transcript.text
        keys = c.get("/v1/keys").json()["keys"]
    (tmp_path / "transcript.json").write_text(transcript.text, encoding="utf-8")
    (tmp_path / "server.pub").write_text(keys[0]["public_key"] + "\n", encoding="ascii")
    (tmp_path / "my-receipts.json").write_text(json.dumps(seats[0].receipts), encoding="utf-8")
    seat_file = {  # a client's seat export (clients/ts Seat.export, the web table's seat.json)
        "match_id": mid,
        "seat": 0,
        "client_seed": seats[0].client_seed,
        "nonce": seats[0].nonce,
        "receipts": seats[0].receipts,
    }
    (tmp_path / "seat.json").write_text(json.dumps(seat_file), encoding="utf-8")
    env = {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "SERVER": url,
        "MATCH": mid,
        "CLIENT_SEED": seats[0].client_seed,
        "NONCE": seats[0].nonce,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    ran = 0
    for body, printed in examples():
        proc = bash_ok(body, body, tmp_path, env, timeout=600)
        if printed is not None:
            assert _printed(printed).fullmatch(proc.stdout.strip()), (printed, proc.stdout)
        ran += body.count("verify ")
    assert ran >= 12
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["ok"] is True
