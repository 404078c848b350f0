"""The log as a C2SP transparency log: checkpoints, tiles, witnesses and offline proofs.

- **Checkpoints** (c2sp.org/tlog-checkpoint) are signed by the log's own Ed25519 note key,
  whose name is the origin, at most every ``QAHWA_CHECKPOINT_SECONDS`` by a background
  thread — never on the path that appends entries — and kept per size.
- **Tiles** (c2sp.org/tlog-tiles) are read from the stored tree: a hash tile is one range
  of one level of ``translog_nodes``, an entry bundle one range of ``translog``. Any tile
  within the newest checkpoint is served, so the partial tiles of every checkpointed size
  stay available.
- **Witnesses** (c2sp.org/tlog-witness): after each new checkpoint, one thread per witness
  submits the newest checkpoint to its ``add-checkpoint`` with a consistency proof from the
  size the witness last cosigned (learnt from its 409 answer), verifies the cosignature it
  returns and stores it. A slow or down witness holds up only its own thread.
- **Proofs** (c2sp.org/tlog-proof) of an entry under the checkpoint holding it that the
  most configured witnesses cosigned (the newest of those), with the cosignatures it has:
  never held up by a witness (:meth:`LogC2SP.proof` says which are missing; each client's
  policy decides). An entry no checkpoint holds yet gets one signed then.
- **Witness lag**: per configured witness, how many entries the newest checkpoint it
  cosigned is behind the newest checkpoint (``on_lag``: the ``qahwa_witness_lag_entries``
  gauge), set after each checkpoint and each submission.
- **Older logs** (``qahwa keys new-log``, docs/deploy.md §10) are served read-only under
  ``/logs/<id>/log/`` by a *frozen* :class:`LogC2SP` (:meth:`LogC2SP.frozen`): no
  background thread, no witness submissions; its checkpoint is the final one (signed once
  with the old log's own key, taken sealed from ``log_identity``, if the log grew after the
  last one) with every cosignature stored for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
from sqlalchemy import func
from sqlmodel import Session, col, select

import tlog
from fairness import SecretBox

from . import translog
from .clock import now_iso
from .db import Database
from .errors import Conflict, NotFound
from .keys import open_log_seed
from .kinds import Status
from .models import LogIdentity, Match
from .settings import Settings

log = logging.getLogger("qahwa.log")
T = TypeVar("T")

IMMUTABLE = "public, max-age=31536000, immutable"
NO_CACHE = "no-cache"


@dataclass(frozen=True)
class WitnessConfig:
    name: str
    verifier: tlog.Verifier
    url: str


def parse_witnesses(text: str) -> list[WitnessConfig]:
    """``QAHWA_WITNESSES``: ``;``-separated ``name vkey url`` (the vkey a cosignature key)."""
    out: list[WitnessConfig] = []
    for item in text.split(";"):
        if not item.strip():
            continue
        parts = item.split()
        if len(parts) != 3:
            raise ValueError(f"QAHWA_WITNESSES: each witness is 'name vkey url', not {item!r}")
        name, vkey, url = parts
        try:
            v = tlog.parse_vkey(vkey)
        except tlog.NoteError as exc:
            raise ValueError(f"QAHWA_WITNESSES: witness {name}: {exc}") from None
        if v.alg != tlog.ALG_COSIGNATURE_V1:
            raise ValueError(
                f"QAHWA_WITNESSES: witness {name}'s vkey is not a cosignature (type 0x04) key"
            )
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"QAHWA_WITNESSES: witness {name}'s url is not http(s): {url!r}")
        if any(w.name == name for w in out):
            raise ValueError(f"QAHWA_WITNESSES: the witness name {name!r} is used twice")
        out.append(WitnessConfig(name, v, url.rstrip("/")))
    return out


@dataclass(frozen=True)
class Proven:
    """A match's tlog-proof and the configured witnesses whose cosignature its checkpoint
    lacks (``Qahwa-Witnesses-Missing``)."""

    text: str
    missing: list[str]


class LogC2SP:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        note_seed: bytes,
        witnesses: list[WitnessConfig] | None = None,
        http: httpx.Client | None = None,
        *,
        origin: str | None = None,
        log_id: int = 1,
    ) -> None:
        self.db = db
        #: the log served (``log_identity.id``): entries, tiles and proofs are of this log
        self.log_id = log_id
        #: an older log, served read-only (see :meth:`frozen`)
        self.is_frozen = False
        self.settings = settings
        self.note_seed = note_seed
        #: the deployment's origin (service.keys.log_identity), the same on every host
        self.origin = origin or settings.origin
        self.signer = tlog.NoteSigner.from_seed(self.origin, note_seed)
        self.witnesses = parse_witnesses(settings.witnesses) if witnesses is None else witnesses
        self._http = http
        self._own_http = http is None
        self._known: dict[str, int] = {}  # per witness: the size it last cosigned
        self._wake: dict[str, threading.Event] = {w.name: threading.Event() for w in self.witnesses}
        self._stop = threading.Event()
        self._dirty = threading.Event()
        self._threads: list[threading.Thread] = []
        #: also look for entries appended by other processes this often (None: only when
        #: poked — a single process, or processes that each checkpoint their own appends)
        self.poll_seconds: float | None = None
        #: told each witness's lag in entries (:meth:`note_lag`): the metrics gauge
        self.on_lag: Callable[[str, int], None] | None = None

    @classmethod
    def frozen(
        cls, db: Database, settings: Settings, note_seed: bytes, origin: str, log_id: int
    ) -> LogC2SP:
        """An older log, read-only: its final checkpoint (signed now if the log grew after
        the newest one), tiles and proofs, with every witness cosignature stored for it."""
        out = cls(db, settings, note_seed, witnesses=[], origin=origin, log_id=log_id)
        out.is_frozen = True
        out.checkpoint_now()
        return out

    @property
    def http(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(timeout=self.settings.witness_timeout_seconds)
        return self._http

    @property
    def vkey(self) -> str:
        return self.signer.vkey

    # -- checkpoints ---------------------------------------------------------------------

    def checkpoint_now(self) -> translog.CheckpointRow | None:
        """Sign a checkpoint of the whole log if it grew since the newest one (or none
        exists); the new row, or None. Concurrent signers: the first to store a size wins."""
        with self.db.read() as s:
            n = translog.size(s, log=self.log_id)
            newest = translog.latest_checkpoint(s, self.origin)
            if newest is not None and newest.tree_size >= n:
                return None
            root = translog.stored_root(s, n, log=self.log_id)
        note = tlog.sign_note(tlog.Checkpoint(self.origin, n, root).text, [self.signer])
        row = translog.CheckpointRow(
            origin=self.origin, tree_size=n, note=note, created_at=now_iso()
        )
        return row if self.db.insert_once(row) else None

    def _at_newest(self, read: Callable[[Session, translog.CheckpointRow], T]) -> T:
        """``read(session, the newest checkpoint)`` in one read; a fresh server, before the
        checkpointer's first round, signs its first checkpoint first."""
        for _ in range(2):
            with self.db.read() as s:
                row = translog.latest_checkpoint(s, self.origin)
                if row is not None:
                    return read(s, row)
            self.checkpoint_now()  # stores one (or another process just did)
        raise AssertionError(f"log {self.origin!r}: no checkpoint after signing one")

    def newest(self) -> translog.CheckpointRow:
        return self._at_newest(lambda s, row: row)

    def _with_cosignatures(self, s: Session, row: translog.CheckpointRow) -> str:
        assert row.id is not None
        lines = translog.cosignatures(s, row.id)
        if self.is_frozen:  # whoever cosigned it then (the witnesses may have changed)
            return row.note + "".join(lines[name] for name in sorted(lines))
        return row.note + "".join(lines[w.name] for w in self.witnesses if w.name in lines)

    def checkpoint(self) -> str:
        """The newest checkpoint with the cosignatures of the configured witnesses: one
        read (two indexed lookups, whatever the log's size)."""
        return self._at_newest(self._with_cosignatures)

    # -- tiles ---------------------------------------------------------------------------

    def tile(self, path: str) -> bytes:
        """The tile at ``path`` (a hash tile, or an entry bundle) within the newest
        checkpoint. A partial tile is a prefix of its full tile: it never changes either
        (served :data:`IMMUTABLE`)."""
        try:
            t = tlog.parse_path(path)
        except tlog.TileError as exc:
            raise NotFound(str(exc)) from None
        return self._at_newest(lambda s, row: self._tile(s, t, row.tree_size))

    def _tile(self, s: Session, t: tlog.Tile, size: int) -> bytes:
        have = size >> (tlog.TILE_HEIGHT * t.level)
        first = t.n * tlog.TILE_WIDTH
        if first + t.width > have:
            raise NotFound(f"{t.path} is beyond the newest checkpoint (size {size})")
        if t.entries:
            return tlog.encode_bundle(
                translog.leaves_between(s, first, first + t.width, log=self.log_id)
            )
        return b"".join(
            translog.tile_hashes(s, tlog.TILE_HEIGHT * t.level, first, t.width, log=self.log_id)
        )

    # -- proofs --------------------------------------------------------------------------

    def _witnessed(
        self, s: Session, least_size: int
    ) -> tuple[translog.CheckpointRow, str, list[str]] | None:
        """Of the newest checkpoints of at least ``least_size``, the one the most configured
        witnesses cosigned (the newest of those), its note with those cosignatures, and the
        configured witnesses whose cosignature it lacks; None when no checkpoint holds
        ``least_size`` entries yet. A down witness holds up nothing: the proof is served
        with the cosignatures there are, and each client's policy decides."""
        rows = s.exec(
            select(translog.CheckpointRow)
            .where(
                col(translog.CheckpointRow.origin) == self.origin,
                col(translog.CheckpointRow.tree_size) >= least_size,
            )
            .order_by(col(translog.CheckpointRow.tree_size).desc())
            .limit(64)
        ).all()
        if not rows:
            return None
        want = [w.name for w in self.witnesses]
        have: dict[int, set[str]] = {}
        if want:  # one query for every candidate's cosignatures, whatever their number
            for cid, name in s.exec(
                select(
                    translog.CosignatureRow.checkpoint_id, translog.CosignatureRow.witness
                ).where(col(translog.CosignatureRow.checkpoint_id).in_([r.id for r in rows]))
            ).all():
                have.setdefault(cid, set()).add(name)
        best: tuple[translog.CheckpointRow, list[str]] | None = None
        for row in rows:
            assert row.id is not None
            missing = [name for name in want if name not in have.get(row.id, ())]
            if best is None or len(missing) < len(best[1]):
                best = (row, missing)
            if not missing:
                break
        assert best is not None
        return best[0], self._with_cosignatures(s, best[0]), best[1]

    def match_index(self, match_id: str) -> tuple[int, int]:
        """The log and the index of a match's entry (its commitment; for v2, its lock)."""
        with self.db.read() as s:  # one read: the match, then the log holding its entry
            m = s.get(Match, match_id)
            if m is None:
                raise NotFound(f"no match {match_id}")
            if m.log_index is not None and m.log_index >= 0:  # qahwa-fair/1: its commitment
                index = int(m.log_index)
            elif m.lock_index is None:  # qahwa-fair/2: its lock, once it is locked
                raise Conflict(
                    f"match {match_id} is not locked yet: nothing is logged", "not_locked"
                )
            else:
                index = int(m.lock_index)
            log_id = translog.log_of_entry(s, match_id, index)
        if log_id is None:
            raise NotFound(f"match {match_id}'s entry {index} is in no log")
        return log_id, index

    def reveal_index(self, match_id: str) -> tuple[int, int]:
        """The log and the index of a match's reveal record (fairness-v2 §8), found by its
        match id: 409 ``not_finished`` before the match ends, 404 when no log holds it."""
        with self.db.read() as s:
            m = s.get(Match, match_id)
            if m is None:
                raise NotFound(f"no match {match_id}")
            found = translog.reveal_of(s, match_id)
            finished = m.status == Status.FINISHED
        if found is None and not finished:
            raise Conflict(
                f"match {match_id} has not ended: no reveal record is logged yet", "not_finished"
            )
        if found is None:
            raise NotFound(f"match {match_id} has no reveal record in the log")
        return found

    def proof(self, index: int) -> Proven:
        """The tlog-proof of entry ``index`` (the entry in its ``extra`` line) under the
        checkpoint :meth:`_witnessed` picks, and the configured witnesses whose cosignature
        that checkpoint lacks. An entry no checkpoint holds yet (just appended, before the
        checkpointer's next round) gets one signed now: the proof never waits."""
        self.newest()
        for _ in range(2):
            with self.db.read() as s:
                if index >= translog.size(s, log=self.log_id):
                    raise NotFound(f"no log entry {index}")
                found = self._witnessed(s, index + 1)
                if found is not None:
                    row, note, missing = found
                    hashes = translog.inclusion_path(s, index, row.tree_size, log=self.log_id)
                    leaf = translog.leaves_between(s, index, index + 1, log=self.log_id)[0]
                    # The entry itself rides in the extra line: a player holding only the
                    # transcript needs it to recompute the leaf hash (the proof
                    # authenticates it).
                    return Proven(
                        tlog.TlogProof(index, tuple(hashes), note, extra=leaf).text, missing
                    )
            if self.is_frozen:
                break  # its final checkpoint holds every entry
            self.checkpoint_now()  # stores one holding the entry (or another process did)
            self.poke()  # and the witnesses hear of it on the checkpointer's next round
        raise AssertionError(f"log {self.origin!r}: no checkpoint holds entry {index}")

    # -- witness lag ---------------------------------------------------------------------

    def _cosigned_size(self, w: WitnessConfig) -> int:
        """The size of the newest checkpoint ``w`` is known to have cosigned (0: none)."""
        known = self._known.get(w.name)
        if known is not None:
            return known
        with self.db.read() as s:  # once per process and witness: then kept in _known
            top = s.exec(
                select(func.max(col(translog.CheckpointRow.tree_size)))
                .join(
                    translog.CosignatureRow,
                    col(translog.CosignatureRow.checkpoint_id) == col(translog.CheckpointRow.id),
                )
                .where(
                    col(translog.CheckpointRow.origin) == self.origin,
                    col(translog.CosignatureRow.witness) == w.name,
                )
            ).one()
        return self._known.setdefault(w.name, 0 if top is None else int(top))

    def note_lag(self, newest: int | None = None) -> dict[str, int]:
        """Per configured witness, the entries between the newest checkpoint (of size
        ``newest``, read when None) and the newest one it cosigned; told to ``on_lag``."""
        if not self.witnesses:
            return {}
        if newest is None:
            newest = self.newest().tree_size
        lag = {w.name: max(0, newest - self._cosigned_size(w)) for w in self.witnesses}
        if self.on_lag is not None:
            for name, n in lag.items():
                self.on_lag(name, n)
        return lag

    # -- witnesses -----------------------------------------------------------------------

    def submit(self, w: WitnessConfig, row: translog.CheckpointRow) -> bool:
        """Ask witness ``w`` to cosign ``row``; store its verified cosignature. False (and
        logged) when it did not cosign."""
        cp = tlog.parse_checkpoint(tlog.split_note(row.note)[0])
        old = self._known.get(w.name, 0)
        for _ in range(3):
            if old > row.tree_size:
                log.warning(
                    "witness %s has cosigned size %d, beyond checkpoint %d",
                    w.name,
                    old,
                    row.tree_size,
                )
                return False
            with self.db.read() as s:
                proof = (
                    translog.consistency_path(s, old, row.tree_size, log=self.log_id)
                    if 0 < old
                    else []
                )
            body = (
                f"old {old}\n" + "".join(tlog.note.b64(h) + "\n" for h in proof) + "\n" + row.note
            )
            try:
                r = self.http.post(
                    w.url + "/add-checkpoint",
                    content=body.encode(),
                    timeout=self.settings.witness_timeout_seconds,
                )
            except httpx.HTTPError as exc:
                log.warning("witness %s: %s", w.name, type(exc).__name__)
                return False
            if r.status_code == 409:
                text = r.text
                if (
                    not r.headers.get("content-type", "").startswith("text/x.tlog.size")
                    or not text.endswith("\n")
                    or not text[:-1].isdigit()
                ):
                    log.warning("witness %s: a 409 without a size", w.name)
                    return False
                old = int(text[:-1])
                self._known[w.name] = old
                continue
            if r.status_code != 200:
                log.warning(
                    "witness %s refused checkpoint %d: %d %s",
                    w.name,
                    row.tree_size,
                    r.status_code,
                    r.text[:200].strip(),
                )
                return False
            line = self._verified_cosignature(w, cp, r.text)
            if line is None:
                return False
            assert row.id is not None
            # False: another process stored this witness's cosignature first
            self.db.insert_once(
                translog.CosignatureRow(
                    checkpoint_id=row.id, witness=w.name, line=line, created_at=now_iso()
                )
            )
            self._known[w.name] = row.tree_size
            return True
        log.warning("witness %s: still out of step after three tries", w.name)
        return False

    def _verified_cosignature(self, w: WitnessConfig, cp: tlog.Checkpoint, text: str) -> str | None:
        """The one line of ``text`` that is ``w``'s valid cosignature of ``cp``, or None."""
        good = None
        for line in text.split("\n"):
            if not line:
                continue
            try:
                sig = tlog.parse_signature_line(line)
            except tlog.NoteError:
                log.warning("witness %s: a malformed signature line", w.name)
                return None
            if (sig.name, sig.key_id) != (w.verifier.name, w.verifier.key_id):
                continue  # another key of theirs: ignored
            if not w.verifier.verify(cp.text, sig.sig):
                log.warning("witness %s: its cosignature does not verify", w.name)
                return None
            good = sig.line
        if good is None:
            log.warning("witness %s: no cosignature by its key in its answer", w.name)
        return good

    def submit_all(self) -> dict[str, bool]:
        """Submit the newest checkpoint to every witness, one after another (tests)."""
        row = self.newest()
        return {w.name: self.submit(w, row) for w in self.witnesses}

    # -- the background threads ----------------------------------------------------------

    def start(self) -> None:
        if self.is_frozen:
            return  # nothing to checkpoint or submit: the log no longer grows
        self._stop.clear()
        self._threads = [threading.Thread(target=self._checkpointer, name="qahwa-checkpoint")]
        self._threads += [
            threading.Thread(target=self._witness_loop, args=(w,), name=f"qahwa-witness-{w.name}")
            for w in self.witnesses
        ]
        for t in self._threads:
            t.daemon = True
            t.start()

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        for ev in self._wake.values():
            ev.set()
        for t in self._threads:
            t.join(timeout=self.settings.witness_timeout_seconds + 1)
        self._threads = []
        if self._own_http and self._http is not None:
            self._http.close()
            self._http = None

    def poke(self) -> None:
        """Something was committed: the checkpointer looks at the log on its next round.
        Idle, it makes no query at all."""
        self._dirty.set()

    def _checkpointer(self) -> None:
        first = True
        while not self._stop.is_set():
            if not first:
                if self._stop.wait(self.settings.checkpoint_seconds):
                    return  # at most one checkpoint per checkpoint_seconds
                self._dirty.wait(self.poll_seconds)
                if self._stop.is_set():
                    return
                self._dirty.clear()
            first = False
            try:
                row = self.checkpoint_now()
            except Exception:  # keep going; logged without details
                log.exception("checkpoint failed")
                continue
            if row is not None or not all(self._known.get(w.name) for w in self.witnesses):
                for ev in self._wake.values():
                    ev.set()
            try:
                self.note_lag(None if row is None else row.tree_size)
            except Exception:
                log.exception("witness lag failed")

    def _witness_loop(self, w: WitnessConfig) -> None:
        ev = self._wake[w.name]
        fails = 0
        while True:
            ev.wait()
            if self._stop.is_set():
                return
            ev.clear()
            ok = True
            try:
                row = self.newest()
                with self.db.read() as s:
                    assert row.id is not None
                    done = w.name in translog.cosignatures(s, row.id)
                if not done:
                    ok = self.submit(w, row)
            except Exception:
                log.exception("witness %s: submission failed", w.name)
                ok = False
            fails = 0 if ok else fails + 1
            try:
                self.note_lag()
            except Exception:
                log.exception("witness lag failed")
            if fails and self._stop.wait(min(60.0, 2.0**fails)):
                return  # a witness that keeps failing is asked less often


class LogShelf:
    """Every log of the deployment (``log_identity``): the one this process signs
    checkpoints for, and the older ones, each opened read-only (:meth:`LogC2SP.frozen`) on
    its first request and kept. Its paths: ``/log/`` (the active log) and
    ``/logs/<id>/log/`` (any log, by its ``id``)."""

    def __init__(self, db: Database, settings: Settings, box: SecretBox, active: LogC2SP) -> None:
        self.db = db
        self.settings = settings
        self.box = box
        self.active = active
        self._open: dict[int, LogC2SP] = {}  # the older logs opened so far
        self._lock = threading.Lock()

    @staticmethod
    def open_frozen(db: Database, settings: Settings, box: SecretBox, log_id: int) -> LogC2SP:
        """Log ``log_id`` read-only (its final checkpoint signed if missing); a
        :class:`NotFound` when there is none."""
        with db.read() as s:
            row = s.get(LogIdentity, log_id)
        if row is None:
            raise NotFound(f"no log {log_id} (GET /v1/keys lists the logs)")
        seed = open_log_seed(box, row.origin, row.sealed)
        return LogC2SP.frozen(db, settings, seed, row.origin, log_id)

    def get(self, log_id: int) -> LogC2SP:
        """Log ``log_id``; a :class:`NotFound` when there is none."""
        if log_id == self.active.log_id:
            return self.active
        found = self._open.get(log_id)
        if found is not None:
            return found
        with self._lock:
            found = self._open.get(log_id)
            if found is None:
                found = self.open_frozen(self.db, self.settings, self.box, log_id)
                with self.db.read() as s:
                    if log_id < translog.active_log(s):
                        self._open[log_id] = found
                # else: the active log of the processes restarted after qahwa keys new-log
                # (this one was not): opened again per request, checkpointed as it grows
        return found

    def match_proof(self, match_id: str) -> Proven:
        """The tlog-proof of a match's entry, from the log that holds it."""
        log_id, index = self.active.match_index(match_id)
        return self.get(log_id).proof(index)

    def reveal_proof(self, match_id: str) -> Proven:
        """The tlog-proof of a match's reveal record, from the log that holds it."""
        log_id, index = self.active.reveal_index(match_id)
        return self.get(log_id).proof(index)

    def listing(self) -> list[dict[str, object]]:
        """Every log, oldest first: ``id``, ``origin``, ``vkey``, ``state`` (``active``:
        appended to; ``frozen``: read-only) and the ``path`` it is served under."""
        with self.db.read() as s:
            rows = s.exec(select(LogIdentity).order_by(col(LogIdentity.id))).all()
        newest = rows[-1].id if rows else None
        return [
            {
                "id": r.id,
                "origin": r.origin,
                "vkey": r.vkey,
                "state": "active" if r.id == newest else "frozen",
                "path": f"/logs/{r.id}/log/",
            }
            for r in rows
        ]
