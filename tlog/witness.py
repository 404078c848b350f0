"""A witness (c2sp.org/tlog-witness ``add-checkpoint``): cosigns a log's checkpoint only when
it is consistent with the newest one it cosigned before, and never cosigns a fork.

:meth:`Witness.add_checkpoint` takes a request body and answers ``(status, content type,
body)``; the HTTP server around it is the caller's. State — per origin, the size and root of
the newest cosigned checkpoint — is checked and updated under one lock and, with a state
file, written atomically (a temporary file, fsync, rename) *before* the cosignature is
returned.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from .checkpoint import CheckpointError, parse_checkpoint
from .cosignature import CosignatureSigner
from .merkle import EMPTY_ROOT, HASH_SIZE, consistent
from .note import NoteError, Verifier, b64, open_note, unb64

MAX_PROOF = 63
MAX_BODY = 64 * 1024
SIZE_TYPE = "text/x.tlog.size"
TEXT_TYPE = "text/plain; charset=utf-8"
_OLD = re.compile(r"old (0|[1-9][0-9]{0,18})")

Answer = tuple[int, str, str]


class Witness:
    """A tlog-witness for the logs whose note keys it is given (see the module)."""

    def __init__(
        self, signer: CosignatureSigner, logs: Sequence[Verifier], state_file: Path | None = None
    ) -> None:
        self.signer = signer
        self.logs = {v.name: v for v in logs}
        self.state_file = state_file
        self._lock = threading.Lock()
        self.state: dict[str, tuple[int, bytes]] = {}
        #: the refused checkpoints that were validly signed: evidence of a fork or a bad log
        self.refused: list[dict[str, object]] = []
        if state_file is not None and state_file.exists():
            doc = json.loads(state_file.read_text(encoding="utf-8"))
            for origin, item in doc.get("logs", {}).items():
                self.state[origin] = (int(item["size"]), unb64(item["root"], "a stored root"))

    def _save(self) -> None:
        if self.state_file is None:
            return
        doc = {
            "version": 1,
            "logs": {o: {"size": n, "root": b64(r)} for o, (n, r) in sorted(self.state.items())},
        }
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".witness-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.state_file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def add_checkpoint(self, body: bytes) -> Answer:
        if len(body) > MAX_BODY:
            return 400, TEXT_TYPE, "the request body is too large\n"
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return 400, TEXT_TYPE, "the request body is not UTF-8\n"
        first, sep, rest = text.partition("\n")
        if not sep or not _OLD.fullmatch(first):
            return 400, TEXT_TYPE, "the body starts with an 'old <size>' line\n"
        old = int(first[4:])
        proof: list[bytes] = []
        while True:
            line, sep, rest = rest.partition("\n")
            if not sep:
                return 400, TEXT_TYPE, "the proof lines end with an empty line\n"
            if not line:
                break
            try:
                h = unb64(line, "a proof line")
            except NoteError as exc:
                return 400, TEXT_TYPE, f"{exc}\n"
            if len(h) != HASH_SIZE or len(proof) == MAX_PROOF:
                return 400, TEXT_TYPE, "proof lines are at most 63 32-byte hashes\n"
            proof.append(h)
        note_text = rest
        origin = note_text.split("\n", 1)[0]
        log = self.logs.get(origin)
        if log is None:
            return 404, TEXT_TYPE, f"unknown log {origin[:100]!r}\n"
        try:
            note = open_note(note_text, [log])
            cp = parse_checkpoint(note.text)
        except CheckpointError as exc:
            return 400, TEXT_TYPE, f"{exc}\n"
        except NoteError as exc:
            return 403, TEXT_TYPE, f"{exc}\n"
        if old > cp.size:
            return 400, TEXT_TYPE, f"old size {old} is larger than the checkpoint's {cp.size}\n"
        if cp.size == 0 and cp.root != EMPTY_ROOT:
            return 422, TEXT_TYPE, "a checkpoint of size 0 has the empty tree's root\n"
        with self._lock:
            have_size, have_root = self.state.get(cp.origin, (0, EMPTY_ROOT))
            if old != have_size:
                return 409, SIZE_TYPE, f"{have_size}\n"
            if old == 0 and proof:
                return 422, TEXT_TYPE, "no proof is sent from size 0\n"
            if not consistent(old, cp.size, have_root, cp.root, proof):
                self.refused.append(
                    {
                        "origin": cp.origin,
                        "old_size": old,
                        "old_root": b64(have_root),
                        "checkpoint": note_text,
                    }
                )
                why = (
                    "a different root for the same size"
                    if old == cp.size
                    else f"not consistent with the cosigned size {old}"
                )
                return 422, TEXT_TYPE, f"the checkpoint is {why}\n"
            self.state[cp.origin] = (cp.size, cp.root)
            try:
                self._save()
            except OSError:
                self.state[cp.origin] = (have_size, have_root)
                return 500, TEXT_TYPE, "the witness could not persist its state\n"
        return 200, TEXT_TYPE, self.signer.cosign(note.text).line
