"""The transparency log from the verifier's side (RFC 6962 / RFC 9162), without the service.

- :func:`root_from_inclusion` and :func:`consistent` check inclusion and consistency proofs
  (RFC 9162 §2.1.3.2 and §2.1.4.2); :class:`CompactRange` computes a root while the leaves
  stream past, keeping at most log₂ n hashes.
- :class:`HeadState` is the small state file (``$XDG_STATE_HOME/qahwa/heads.json``): the
  newest signed head seen per server key, the monitor's audit checkpoints, and beside it the
  evidence of any fork found (``evidence/*.json``).
- :func:`reconcile` requires a consistency proof from the remembered head to a new one: a
  head that does not extend the one seen before is a :class:`ForkDetected`, kept as evidence.
- :func:`check_transcript` is the ``log`` check of ``verify``: the transcript's commitment
  record is included at its ``log_index`` under a signed head.
- :func:`audit` is ``verify log --server URL``: the monitor.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from fairness import PROTOCOL, PROTOCOL_V2, SignatureError, canonical_json, verify_record

from .keys import KeySet

EMPTY_ROOT = hashlib.sha256(b"").digest()
STATE_VERSION = 1


# -- Merkle hashes and proofs ------------------------------------------------------------------

def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


class ProofError(ValueError):
    """A proof that is malformed or does not lead to the claimed root."""


def root_from_inclusion(index: int, tree_size: int, leaf_h: bytes,
                        path: Sequence[bytes]) -> bytes:
    """The root an inclusion proof leads to (RFC 9162 §2.1.3.2)."""
    if not 0 <= index < tree_size:
        raise ProofError(f"index {index} is outside a tree of size {tree_size}")
    fn, sn = index, tree_size - 1
    r = leaf_h
    for p in path:
        if sn == 0:
            raise ProofError("the audit path is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the audit path is too short")
    return r


def consistent(first: int, second: int, first_root: bytes, second_root: bytes,
               proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` shows the tree of size ``second`` extends that of size ``first``
    (RFC 9162 §2.1.4.2)."""
    if first == second:
        return not proof and first_root == second_root
    if not 0 < first < second:
        return False
    path = list(proof)
    if first & (first - 1) == 0:  # an exact power of two: the old root is a node of the new
        path.insert(0, first_root)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


class CompactRange:
    """The complete subtrees of the leaves appended so far (at most log₂ n hashes)."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        if len(hashes) != bin(size).count("1"):
            raise ValueError(f"a compact range of size {size} has {bin(size).count('1')} "
                             f"hashes, not {len(hashes)}")
        self.size = size
        self.hashes = list(hashes)  # largest subtree first

    def append(self, h: bytes) -> None:
        i = self.size
        while i & 1:
            h = node_hash(self.hashes.pop(), h)
            i >>= 1
        self.hashes.append(h)
        self.size += 1

    def root(self) -> bytes:
        if not self.hashes:
            return EMPTY_ROOT
        r = self.hashes[-1]
        for h in reversed(self.hashes[:-1]):
            r = node_hash(h, r)
        return r


# -- signed heads --------------------------------------------------------------------------

class LogCheckFailed(Exception):
    """The log check failed (exit 1); the message says why in one line."""


class ForkDetected(LogCheckFailed):
    """The server showed a head that is not an extension of one it showed before."""

    def __init__(self, message: str, evidence: Path | None) -> None:
        super().__init__(message + (f" (evidence kept in {evidence})" if evidence else ""))
        self.evidence = evidence


@dataclass(frozen=True)
class Head:
    tree_size: int
    root: bytes
    key_id: str
    doc: dict[str, Any]


def _head_shape(doc: Any, what: str) -> Head:
    if not isinstance(doc, dict) or doc.get("type") != "tree_head":
        raise LogCheckFailed(f"{what} is not a tree head")
    if doc.get("protocol") != PROTOCOL:
        raise LogCheckFailed(f"{what} has protocol {doc.get('protocol')!r}, not {PROTOCOL}")
    size, root_hex, sig = doc.get("tree_size"), doc.get("root_hash"), doc.get("signature")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise LogCheckFailed(f"{what} has no valid tree_size")
    if not isinstance(root_hex, str) or len(root_hex) != 64:
        raise LogCheckFailed(f"{what} has no valid root_hash")
    try:
        root = bytes.fromhex(root_hex)
    except ValueError:
        raise LogCheckFailed(f"{what} has no valid root_hash") from None
    if not isinstance(sig, dict) or not isinstance(sig.get("key_id"), str):
        raise LogCheckFailed(f"{what} is not signed")
    return Head(size, root, sig["key_id"], doc)


def parse_head(doc: Any, keys: KeySet, what: str = "the tree head") -> Head:
    """A signed tree head, its signature checked against ``keys``."""
    head = _head_shape(doc, what)
    _check_signed(doc, keys, what)
    return head


def _check_signed(doc: dict[str, Any], keys: KeySet, what: str) -> None:
    kid = doc["signature"].get("key_id") if isinstance(doc.get("signature"), dict) else None
    pub, note = keys.pick(kid)
    if pub is None:
        raise LogCheckFailed(f"{what} is signed by an unlisted key: {note}")
    try:
        verify_record(doc, pub)
    except SignatureError as exc:
        raise LogCheckFailed(f"{what}: {exc}") from None


def _hex_list(value: Any, what: str) -> list[bytes]:
    if not isinstance(value, list):
        raise LogCheckFailed(f"{what} is not a list of hashes")
    out = []
    for h in value:
        if not isinstance(h, str) or len(h) != 64:
            raise LogCheckFailed(f"{what} holds something other than 32-byte hex hashes")
        try:
            out.append(bytes.fromhex(h))
        except ValueError:
            raise LogCheckFailed(f"{what} holds something other than hex") from None
    return out


# -- the state file ------------------------------------------------------------------------

def default_state_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "qahwa" / "heads.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class HeadState:
    """Heads seen per key id, the monitor's checkpoints; ``path=None`` keeps them in memory."""

    path: Path | None
    heads: dict[str, dict[str, Any]] = field(default_factory=dict)
    audits: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    dirty: bool = False

    @classmethod
    def load(cls, path: Path | None) -> HeadState:
        from .keys import UnusableInput

        st = cls(path)
        if path is None or not path.exists():
            return st
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UnusableInput(f"cannot read the state file {path}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION:
            raise UnusableInput(f"{path} is not a qahwa heads file (version {STATE_VERSION})")
        st.heads = doc.get("heads") or {}
        st.audits = doc.get("audits") or {}
        return st

    def head_for(self, key_id: str) -> Head | None:
        entry = self.heads.get(key_id)
        if not isinstance(entry, dict):
            return None
        try:
            return _head_shape(entry.get("head"), "the remembered head")
        except LogCheckFailed:
            return None

    def remember(self, head: Head, server: str | None) -> None:
        self.heads[head.key_id] = {"server": server, "seen_at": _now(), "head": head.doc}
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"version": STATE_VERSION, "heads": self.heads, "audits": self.audits}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)
        self.dirty = False

    def keep_evidence(self, doc: dict[str, Any]) -> Path | None:
        self.evidence.append(doc)
        if self.path is None:
            return None
        d = self.path.parent / "evidence"
        d.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        out = d / f"fork-{stamp}-{doc.get('key_id', 'unknown')}.json"
        out.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
        return out

    def seen_db_path(self, server: str) -> Path | None:
        if self.path is None:
            return None
        tag = hashlib.sha256(server.encode()).hexdigest()[:16]
        return self.path.parent / f"monitor-{tag}.sqlite"


# -- talking to a server -------------------------------------------------------------------

Fetch = Callable[[str, dict[str, Any]], tuple[int, Any]]


class HttpFetch:
    """GET ``base + path`` → (HTTP status, JSON or None); status 0 when unreachable."""

    def __init__(self, base: str, *, timeout: float = 30.0) -> None:
        import httpx

        self.base = base.rstrip("/")
        self._client = httpx.Client(timeout=timeout, follow_redirects=True)
        self._lock = threading.Lock()

    def __call__(self, path: str, params: dict[str, Any]) -> tuple[int, Any]:
        import httpx

        try:
            with self._lock:
                resp = self._client.get(self.base + path, params=params)
        except httpx.HTTPError as exc:
            return 0, {"error": {"code": "unreachable",
                                 "message": f"{exc.__class__.__name__}: {exc}"}}
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, None

    def close(self) -> None:
        self._client.close()


def _why(status: int, body: Any) -> str:
    msg = ""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        msg = f": {body['error'].get('message', '')}"
    return ("unreachable" if status == 0 else f"HTTP {status}") + msg


# -- consistency with what was seen before -------------------------------------------------

def _fork(state: HeadState, server: str | None, reason: str, old: Head, new: Head,
          consistency: Any = None) -> ForkDetected:
    path = state.keep_evidence({
        "kind": "fork", "detected_at": _now(), "server": server, "key_id": new.key_id,
        "reason": reason, "remembered_head": old.doc, "new_head": new.doc,
        "consistency": consistency})
    return ForkDetected(f"log fork: {reason}", path)


def reconcile(state: HeadState, new: Head, keys: KeySet, fetch: Fetch | None,
              server: str | None) -> tuple[bool | None, str]:
    """Check ``new`` against the head remembered for its key; remember it when newer.

    Returns (True, detail) when consistent, (None, detail) when it cannot be checked here
    (no server to ask for the proof); raises ForkDetected when ``new`` is not an extension
    of (or extended by) the remembered head, LogCheckFailed when the proof cannot be had.
    """
    old = state.head_for(new.key_id)
    if old is None:
        state.remember(new, server)
        return True, f"first head seen for key {new.key_id} (remembered)"
    if old.tree_size == new.tree_size:
        if old.root != new.root:
            raise _fork(state, server, f"two signed heads of size {new.tree_size} with "
                        f"different roots ({old.root.hex()[:16]}… seen before, "
                        f"{new.root.hex()[:16]}… now)", old, new)
        return True, f"the same head of size {new.tree_size} as seen before"
    small, big = (old, new) if old.tree_size < new.tree_size else (new, old)
    if small.tree_size == 0:
        if new.tree_size > old.tree_size:
            state.remember(new, server)
        return True, "extends the empty head seen before"
    if fetch is None:
        return None, (f"consistency with the head of size {old.tree_size} seen before not "
                      "checked (no server to ask for the proof)")
    status, body = fetch("/v1/log/consistency", {"first": small.tree_size,
                                                  "second": big.tree_size})
    if status in (400, 404):
        raise _fork(state, server, f"the server cannot prove that its head of size "
                    f"{big.tree_size} extends the one of size {small.tree_size} "
                    f"({_why(status, body)})", old, new, body)
    if status != 200 or not isinstance(body, dict):
        raise LogCheckFailed(f"no consistency proof {small.tree_size}→{big.tree_size}: "
                             f"{_why(status, body)}")
    first = parse_head(body.get("first_head"), keys, "the consistency proof's first head")
    second = parse_head(body.get("second_head"), keys, "the consistency proof's second head")
    for mine, theirs in ((small, first), (big, second)):
        if theirs.tree_size != mine.tree_size:
            raise LogCheckFailed(f"the consistency proof is for size {theirs.tree_size}, "
                                 f"not {mine.tree_size}")
        if theirs.root != mine.root:
            raise _fork(state, server, f"two signed heads of size {mine.tree_size} with "
                        f"different roots", old, new, body)
    proof = _hex_list(body.get("proof"), "the consistency proof")
    if not consistent(small.tree_size, big.tree_size, small.root, big.root, proof):
        raise _fork(state, server, f"the head of size {big.tree_size} is not an extension "
                    f"of the head of size {small.tree_size} (the consistency proof fails)",
                    old, new, body)
    if new.tree_size > old.tree_size:
        state.remember(new, server)
        return True, f"consistent with the head of size {old.tree_size} seen before"
    return True, f"the head of size {old.tree_size} seen before is consistent with it"


# -- the `log` check of a transcript -------------------------------------------------------

def check_inclusion(transcript: dict[str, Any], proof: Any, keys: KeySet) -> Head:
    """The transcript's commitment record is leaf ``log_index`` under a signed head."""
    idx = transcript.get("log_index")
    if not isinstance(idx, int) or isinstance(idx, bool):
        raise LogCheckFailed(f"the transcript's log_index is not an index: {idx!r}")
    if not isinstance(proof, dict):
        raise LogCheckFailed("the inclusion proof is not a JSON object")
    if proof.get("index") != idx:
        raise LogCheckFailed(f"the inclusion proof is for index {proof.get('index')!r}, "
                             f"the transcript's log_index is {idx}")
    leaf = proof.get("leaf")
    if not isinstance(leaf, dict) or leaf.get("type") != "commitment":
        raise LogCheckFailed(f"log entry {idx} is not a commitment record")
    for name in ("protocol", "match_id", "game", "ruleset", "commitment", "log_index"):
        if leaf.get(name) != transcript.get(name):
            raise LogCheckFailed(f"log entry {idx} is the commitment record of another match: "
                                 f"its {name} is {leaf.get(name)!r}, the transcript's "
                                 f"{transcript.get(name)!r}")
    _check_signed(leaf, keys, f"the commitment record at log index {idx}")
    head = parse_head(proof.get("tree_head"), keys)
    if proof.get("tree_size") != head.tree_size:
        raise LogCheckFailed(f"the proof's tree_size {proof.get('tree_size')!r} is not its "
                             f"head's {head.tree_size}")
    path = _hex_list(proof.get("audit_path"), "the audit path")
    try:
        got = root_from_inclusion(idx, head.tree_size, leaf_hash(canonical_json(leaf)), path)
    except ProofError as exc:
        raise LogCheckFailed(f"the inclusion proof of index {idx}: {exc}") from None
    if got != head.root:
        raise LogCheckFailed(f"the inclusion proof of index {idx} leads to root "
                             f"{got.hex()[:16]}…, the signed head says "
                             f"{head.root.hex()[:16]}…")
    return head


def check_transcript(transcript: dict[str, Any], keys: KeySet | None, proof: Any,
                     fetch: Fetch | None, server: str | None,
                     state: HeadState) -> tuple[bool | None, str]:
    """The ``log`` check: (ok, detail); ok None when it could not be made."""
    if transcript.get("protocol") == PROTOCOL_V2:
        # fairness-v2.md §8-§9: the lock is in the C2SP log at lock_index
        if proof is None and fetch is None:
            return None, ("not checked: no log source (give --server URL or --log-proof "
                          "FILE); the verdict does not depend on it")
        return None, ("not checked: this verifier does not yet check a qahwa-fair/2 lock's "
                      "inclusion in the log")
    idx = transcript.get("log_index")
    if idx is None:
        return None, "not checked: the transcript has no log_index"
    if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
        return False, f"the transcript's log_index is not an index: {idx!r}"
    if keys is None:
        return None, "not checked: no key to check the log's signatures (--key or --server)"
    if proof is None:
        if fetch is None:
            return None, "not checked: give --server URL or --log-proof FILE"
        status, proof = fetch("/v1/log/proof", {"index": idx})
        if status != 200:
            return False, (f"the server gives no inclusion proof of log index {idx}: "
                           f"{_why(status, proof)}")
    try:
        head = check_inclusion(transcript, proof, keys)
        ok, detail = reconcile(state, head, keys, fetch, server)
    except LogCheckFailed as exc:
        return False, str(exc)
    return ok, f"included at index {idx} of tree size {head.tree_size}; {detail}"


# -- the monitor ---------------------------------------------------------------------------

class _Seen:
    """Match ids seen so far, on disk (bounded memory), committed at checkpoints."""

    def __init__(self, path: Path | None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="qahwa-monitor-")
            path = Path(self._tmp.name) / "seen.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS seen (match_id TEXT PRIMARY KEY, "
                        "idx INTEGER NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self.db.commit()

    def upto(self) -> int | None:
        row = self.db.execute("SELECT v FROM meta WHERE k = 'size'").fetchone()
        return int(row[0]) if row else None

    def reset(self) -> None:
        self.db.execute("DELETE FROM seen")
        self.db.execute("DELETE FROM meta")
        self.db.commit()

    def add(self, pairs: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
        """Add (match_id, idx); returns (match_id, idx, earlier idx) of duplicates."""
        dups = []
        ids = [m for m, _ in pairs]
        earlier: dict[str, int] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            q = f"SELECT match_id, idx FROM seen WHERE match_id IN ({','.join('?' * len(chunk))})"
            earlier.update(dict(self.db.execute(q, chunk).fetchall()))
        fresh = []
        for m, idx in pairs:
            if m in earlier:
                dups.append((m, idx, earlier[m]))
            else:
                earlier[m] = idx
                fresh.append((m, idx))
        self.db.executemany("INSERT INTO seen VALUES (?, ?)", fresh)
        return dups

    def checkpoint(self, size: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('size', ?)", (str(size),))
        self.db.commit()

    def close(self) -> None:
        self.db.rollback()
        self.db.close()
        if self._tmp is not None:
            self._tmp.cleanup()


@dataclass
class AuditResult:
    server: str
    ok: bool
    tree_size: int = 0
    root_hash: str = ""
    audited_from: int = 0
    audited: int = 0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "ok": self.ok, "tree_size": self.tree_size,
                "root_hash": self.root_hash, "audited_from": self.audited_from,
                "audited": self.audited, "failures": self.failures, "notes": self.notes,
                "evidence": self.evidence}


MAX_FAILURES = 50


def _entry_problems(entry: Any, pos: int, keys: KeySet) -> tuple[list[str], str | None, bytes]:
    """(problems, match id, leaf hash) of the entry at position ``pos``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("leaf"), dict):
        return [f"entry {pos}: not a log entry"], None, b""
    probs = []
    if entry.get("index") != pos:
        probs.append(f"entry {pos}: the server calls it index {entry.get('index')!r}")
    leaf = entry["leaf"]
    h = leaf_hash(canonical_json(leaf))
    if entry.get("leaf_hash") != h.hex():
        probs.append(f"entry {pos}: leaf_hash is not SHA-256(0x00 ‖ leaf)")
    if leaf.get("type") != "commitment" or leaf.get("protocol") != PROTOCOL:
        probs.append(f"entry {pos}: not a {PROTOCOL} commitment record")
    if leaf.get("log_index") != pos:
        probs.append(f"entry {pos}: its log_index is {leaf.get('log_index')!r}")
    mid = leaf.get("match_id")
    if not isinstance(mid, str) or not mid:
        probs.append(f"entry {pos}: no match_id")
        mid = None
    try:
        _check_signed(leaf, keys, f"entry {pos}")
    except LogCheckFailed as exc:
        probs.append(str(exc))
    return probs, mid, h


@contextmanager
def _prefetch(fetch: Fetch, start: int, end: int, batch: int) -> Iterator[
        Iterator[tuple[int, int, Any]]]:
    """Pages of /v1/log/entries from ``start`` to ``end``, the next one fetched meanwhile."""
    pool = ThreadPoolExecutor(max_workers=1)

    def page(a: int) -> Future[tuple[int, Any]]:
        return pool.submit(fetch, "/v1/log/entries", {"start": a, "limit": min(batch, end - a)})

    def gen() -> Iterator[tuple[int, int, Any]]:
        a = start
        fut = page(a) if a < end else None
        while fut is not None:
            status, body = fut.result()
            got = body.get("entries") if isinstance(body, dict) else None
            n = len(got) if isinstance(got, list) else 0
            nxt = a + n
            fut = page(nxt) if status == 200 and n and nxt < end else None
            yield a, status, body
            a = nxt

    try:
        yield gen()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def audit(server: str, keys: KeySet, state: HeadState, fetch: Fetch, *,
          batch: int = 1000, checkpoint_every: int = 50_000, restart: bool = False,
          progress: Callable[[int, int], None] | None = None, jobs: int = 1) -> AuditResult:
    """Audit the whole log of ``server`` (or from the last checkpoint): see docs/verify.md."""
    res = AuditResult(server, ok=False)
    status, body = fetch("/v1/log", {})
    if status != 200:
        res.failures.append(f"no signed head from the server: {_why(status, body)}")
        return res
    try:
        head = parse_head(body, keys)
    except LogCheckFailed as exc:
        res.failures.append(str(exc))
        return res
    res.tree_size, res.root_hash = head.tree_size, head.root.hex()
    # Consistency with every head seen before for this key (verify's or an earlier audit's).
    try:
        _, detail = reconcile(state, head, keys, fetch, server)
        res.notes.append(detail)
    except ForkDetected as exc:
        res.failures.append(str(exc))
        if exc.evidence:
            res.evidence.append(str(exc.evidence))
        return res
    except LogCheckFailed as exc:
        res.failures.append(str(exc))
        return res

    seen = _Seen(state.seen_db_path(server))
    try:
        return _audit_entries(res, server, head, keys, state, fetch, seen, batch,
                              checkpoint_every, restart, progress, max(1, jobs))
    finally:
        seen.close()


_Checked = tuple[list[str], str | None, bytes]


def check_page(entries: list[Any], start: int, keys_b64: dict[str, Any]) -> list[_Checked]:
    """Worker entry point: the checks of one page of entries (see _entry_problems)."""
    keys = KeySet.from_b64(keys_b64)
    return [_entry_problems(e, start + off, keys) for off, e in enumerate(entries)]


def _audit_entries(res: AuditResult, server: str, head: Head, keys: KeySet, state: HeadState,
                   fetch: Fetch, seen: _Seen, batch: int, checkpoint_every: int,
                   restart: bool, progress: Callable[[int, int], None] | None,
                   jobs: int) -> AuditResult:
    rng = CompactRange()
    cp = None if restart else state.audits.get(server)
    if cp is not None and cp.get("key_id") == head.key_id and seen.upto() == cp.get("tree_size"):
        try:
            rng = CompactRange(int(cp["tree_size"]), [bytes.fromhex(h) for h in cp["range"]])
        except (KeyError, TypeError, ValueError):
            rng = CompactRange()
    if rng.size > head.tree_size:
        # reconcile() already compared heads; an audited size beyond the head is a shrink.
        res.failures.append(f"log fork: the log was audited up to size {rng.size}, the "
                            f"server's head now has {head.tree_size}")
        return res
    if rng.size == 0:
        seen.reset()
    else:
        res.notes.append(f"resumed from the audit of size {rng.size}")
    res.audited_from = rng.size
    end = head.tree_size
    next_cp = rng.size + checkpoint_every
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    keys_b64 = keys.to_b64()
    pending: deque[Future[list[_Checked]]] = deque()
    page_failure = ""

    def consume(fut: Future[list[_Checked]]) -> None:
        nonlocal next_cp
        pairs = []
        checked = fut.result()
        for probs, mid, h in checked:
            res.failures.extend(probs[: max(0, MAX_FAILURES - len(res.failures))])
            if mid is not None:
                pairs.append((mid, rng.size))
            rng.append(h)
        for mid, idx, before in seen.add(pairs):
            if len(res.failures) < MAX_FAILURES:
                res.failures.append(f"entry {idx}: match id {mid} is logged twice "
                                    f"(first at {before})")
        res.audited += len(checked)
        if progress is not None:
            progress(rng.size, end)
        if rng.size >= next_cp and not res.failures and rng.size < end:
            _checkpoint(res, server, rng, keys, state, fetch, seen)
            next_cp = rng.size + checkpoint_every

    try:
        with _prefetch(fetch, rng.size, end, batch) as pages:
            for a, status, body in pages:
                got = body.get("entries") if isinstance(body, dict) else None
                if status != 200 or not isinstance(got, list) or not got:
                    page_failure = (f"the server did not give the entries from {a}: "
                                    + (_why(status, body) if status != 200 else "none"))
                    break
                got = got[: end - a]
                if pool is not None:
                    pending.append(pool.submit(check_page, got, a, keys_b64))
                else:
                    done: Future[list[_Checked]] = Future()
                    done.set_result([_entry_problems(e, a + off, keys)
                                     for off, e in enumerate(got)])
                    pending.append(done)
                while len(pending) > 2 * jobs:  # a bounded window of pages in flight
                    consume(pending.popleft())
        while pending:  # the pages before a failed one are still checked and saved
            consume(pending.popleft())
        if page_failure:
            res.failures.append(page_failure)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if res.failures:
        return res
    if rng.size != end:
        res.failures.append(f"audited {rng.size} entries, the head has {end}")
        return res
    if rng.root() != head.root:
        res.failures.append(f"the recomputed root of the {end} entries is "
                            f"{rng.root().hex()[:16]}…, the signed head says "
                            f"{head.root.hex()[:16]}…")
        return res
    _save_audit(server, rng, head, state, seen)
    res.ok = True
    return res


def _checkpoint(res: AuditResult, server: str, rng: CompactRange, keys: KeySet,
                state: HeadState, fetch: Fetch, seen: _Seen) -> None:
    """Save progress, once a signed head of this size agrees with the recomputed root."""
    status, body = fetch("/v1/log", {"tree_size": rng.size})
    try:
        head = parse_head(body, keys) if status == 200 else None
    except LogCheckFailed:
        head = None
    if head is None or head.tree_size != rng.size or head.root != rng.root():
        return  # the final comparison with the signed head will say what is wrong
    _save_audit(server, rng, head, state, seen)


def _save_audit(server: str, rng: CompactRange, head: Head, state: HeadState,
                seen: _Seen) -> None:
    seen.checkpoint(rng.size)
    state.audits[server] = {"key_id": head.key_id, "tree_size": rng.size,
                            "root_hash": rng.root().hex(), "range": [h.hex() for h in rng.hashes],
                            "audited_at": _now()}
    state.dirty = True
    state.save()


# -- hooks for `verify check` ----------------------------------------------------------------

def load_proofs(paths: Sequence[str]) -> dict[str, Any]:
    """``--log-proof`` files (the JSON of ``GET /v1/log/proof``) by their leaf's match id."""
    from .keys import UnusableInput

    out: dict[str, Any] = {}
    for p in paths:
        try:
            doc = json.loads(Path(p).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UnusableInput(f"cannot read the log proof {p}: {exc}") from None
        leaf = doc.get("leaf") if isinstance(doc, dict) else None
        if not isinstance(leaf, dict) or not isinstance(leaf.get("match_id"), str):
            raise UnusableInput(f"{p} is not an inclusion proof (GET /v1/log/proof) "
                                "with a commitment record as its leaf")
        out[leaf["match_id"]] = doc
    return out


def apply_log_checks(reports: list[dict[str, Any]], docs: list[Any],
                     keysets: list[KeySet | None], bases: list[str | None],
                     proofs: dict[str, Any], state: HeadState) -> None:
    """Add the ``log`` check to each report (in place); a failure makes it ``failed``."""
    fetchers: dict[str, HttpFetch] = {}
    try:
        for rep, doc, keys, base in zip(reports, docs, keysets, bases, strict=True):
            if rep.get("status") == "unusable" or not isinstance(doc, dict):
                continue
            fetch = None
            if base is not None:
                fetch = fetchers.get(base) or fetchers.setdefault(base, HttpFetch(base))
            proof = proofs.get(str(doc.get("match_id")))
            ok, detail = check_transcript(doc, keys, proof, fetch, base, state)
            rep["checks"].append({"name": "log", "ok": ok, "detail": detail})
            if ok is False:
                rep["failures"].append({"check": "log", "message": detail, "seq": None,
                                        "expected": None, "found": None})
                rep["status"] = "failed"
    finally:
        for f in fetchers.values():
            f.close()
    state.save()


def log_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--no-state", is_flag=True,
                     help="Neither read nor write the file of heads seen before.")(f)
    f = click.option("--state", "state_file", metavar="FILE",
                     help="The file of heads seen before (default: "
                     "$XDG_STATE_HOME/qahwa/heads.json).")(f)
    return f


def open_state(state_file: str | None, no_state: bool) -> HeadState:
    if no_state and state_file:
        raise click.UsageError("--state and --no-state exclude each other")
    if no_state:
        return HeadState.load(None)
    return HeadState.load(Path(state_file) if state_file else default_state_path())


def log_hook(reports: list[dict[str, Any]], items: list[tuple[str, Any, str]],
             keys_b64: list[dict[str, Any] | None], server: str | None,
             proofs: dict[str, Any], state: HeadState) -> None:
    """``verify check``'s log step, after the transcripts themselves were checked."""
    from .core import load_document
    from .keys import UnusableInput, server_base

    docs: list[Any] = []
    keysets: list[KeySet | None] = []
    bases: list[str | None] = []
    for (kind, payload, label), kb in zip(items, keys_b64, strict=True):
        doc: Any = payload
        if kind == "file":
            try:
                doc = load_document(payload)
            except UnusableInput:
                doc = None
        docs.append(doc)
        keysets.append(KeySet.from_b64(kb) if kb is not None else None)
        bases.append(server.rstrip("/") if server else server_base(label) if kind == "doc"
                     else None)
    apply_log_checks(reports, docs, keysets, bases, proofs, state)


@click.command("log", help="Monitor a server's transparency log: audit every entry (or those "
               "after the last audit), recompute the root, check it against the signed head "
               "and every head seen before.")
@click.option("--server", required=True, metavar="URL", help="The server's base URL.")
@click.option("--key", "key_file", metavar="FILE", help="The server's public key(s) "
              "(default: fetched from its /v1/keys).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document for machines.")
@log_options
@click.option("--restart", is_flag=True, help="Audit from entry 0, ignoring the checkpoint.")
@click.option("--batch", type=click.IntRange(1, 1000), default=1000, show_default=True,
              help="Entries per request.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes checking signatures (default: all cores).")
def log_cmd(server: str, key_file: str | None, as_json: bool, state_file: str | None,
            no_state: bool, restart: bool, batch: int, jobs: int | None) -> int:
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from .keys import fetch_keys, load_key_file
    from .output import make_console

    if not server.startswith(("http://", "https://")):
        raise click.UsageError(f"--server must be an http(s) URL, got {server!r}")
    base = server.rstrip("/")
    state = open_state(state_file, no_state)
    keys = load_key_file(key_file) if key_file else fetch_keys(base)
    fetch = HttpFetch(base)
    bar = Progress("[progress.description]{task.description}", BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                   console=make_console(stderr=True), disable=as_json, transient=False)
    with bar:
        task = bar.add_task("auditing", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            res = audit(base, keys, state, fetch, batch=batch, restart=restart,
                        progress=progress, jobs=jobs or os.cpu_count() or 1)
        finally:
            fetch.close()
    state.save()
    unreachable = res.tree_size == 0 and any(
        f.startswith("no signed head from the server") for f in res.failures)
    code = 0 if res.ok else 2 if unreachable else 1
    if as_json:
        click.echo(json.dumps({"ok": res.ok, "exit_code": code, **res.to_json()}, indent=2,
                              ensure_ascii=False))
        return code
    console = make_console()
    if res.ok:
        console.print(f"[bold green]LOG VERIFIED[/]  {escape(base)}: {res.tree_size} entries, "
                      f"root {res.root_hash[:16]}…")
        console.print(f"  [green]✔[/] {res.audited} entries audited ({res.audited_from} → "
                      f"{res.tree_size}): each a signed commitment record at its own "
                      "log_index, no match id twice")
        console.print("  [green]✔[/] the recomputed root equals the signed head")
    else:
        verdict = "UNUSABLE INPUT" if code == 2 else "LOG FAILED"
        console.print(f"[bold red]{verdict}[/]  {escape(base)}")
        for f in res.failures:
            console.print(f"  [red]✘[/] {escape(f)}")
    for n in res.notes:
        console.print(f"  [dim]{escape(n)}[/]")
    for e in res.evidence:
        console.print(f"  evidence kept in {escape(e)}")
    if key_file is None:
        console.print("[dim]note: the public key was fetched from the server, so the "
                      "signatures are only as trustworthy as that server.[/]")
    return code
