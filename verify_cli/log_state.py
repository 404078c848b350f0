"""The verifier's memory of a log: the heads and checkpoints it has seen, and the check that
a new one extends them (a fork otherwise, kept as evidence).

- :class:`HeadState` is the small state file (``$XDG_STATE_HOME/qahwa/heads.json``): the
  newest signed head seen per server key, the newest checkpoint seen per log origin, the
  monitor's audit positions, and beside it the evidence of any fork found
  (``evidence/*.json``).
- :func:`reconcile` requires a consistency proof from the remembered JSON head to a new one;
  :func:`reconcile_checkpoint` does the same for C2SP checkpoints, computing the proof from
  the log's tiles.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tlog
from fairness import PROTOCOL
from fairness.records import RecordError, check_signature, open_tree_head

from .keys import KeySet, UnusableInput
from .keys import http_why as _why

STATE_VERSION = 1


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
    """A tree head's shape (:func:`fairness.records.open_tree_head`, unsigned) and the key
    it names."""
    try:
        rec = open_tree_head(doc, None, what=what.removeprefix("the "), protocols=(PROTOCOL,))
    except RecordError as exc:
        raise LogCheckFailed(str(exc)) from None
    sig = rec.get("signature")
    if not isinstance(sig, dict) or not isinstance(sig.get("key_id"), str):
        raise LogCheckFailed(f"{what} is not signed")
    return Head(rec["tree_size"], bytes.fromhex(rec["root_hash"]), sig["key_id"], rec)


def parse_head(doc: Any, keys: KeySet, what: str = "the tree head") -> Head:
    """A signed tree head, its signature checked against ``keys``."""
    head = _head_shape(doc, what)
    _check_signed(doc, keys, what)
    return head


def _check_signed(doc: dict[str, Any], keys: KeySet, what: str) -> None:
    """``doc``'s signature by one of ``keys`` (:func:`fairness.records.check_signature`),
    else LogCheckFailed."""
    try:
        check_signature(doc, keys, what)
    except RecordError as exc:
        if exc.step == "key":
            raise LogCheckFailed(f"{what} is signed by an unlisted key: {exc.reason}") from None
        if exc.step == "unsigned":
            raise LogCheckFailed(f"{what}: record has no signature object") from None
        raise LogCheckFailed(f"{what}: {exc.reason}") from None


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
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    dirty: bool = False

    @classmethod
    def load(cls, path: Path | None) -> HeadState:
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
        st.checkpoints = doc.get("checkpoints") or {}
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
        doc = {
            "version": STATE_VERSION,
            "heads": self.heads,
            "audits": self.audits,
            "checkpoints": self.checkpoints,
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)
        self.dirty = False

    def fork(self, reason: str, server: str | None, key_id: str, **seen: Any) -> ForkDetected:
        """The error of a fork found in ``server``'s log (``key_id``: its key, or its
        checkpoints' origin), its evidence (``seen``: what was remembered and what is seen
        now) kept in memory and, with a state file, in ``evidence/`` beside it."""
        doc = {"kind": "fork", "detected_at": _now(), "server": server, "key_id": key_id}
        doc.update(reason=reason, **seen)
        self.evidence.append(doc)
        out = None
        if self.path is not None:
            d = self.path.parent / "evidence"
            d.mkdir(parents=True, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            out = d / f"fork-{stamp}-{re.sub(r'[^A-Za-z0-9._-]', '_', key_id)}.json"
            out.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
        return ForkDetected(f"log fork: {reason}", out)


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
            return 0, {
                "error": {"code": "unreachable", "message": f"{exc.__class__.__name__}: {exc}"}
            }
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, None

    def raw(self, path: str) -> tuple[int, bytes]:
        """GET ``base + path`` → (status, body bytes, gzip undone); status 0 when
        unreachable. Safe to call from several threads at once."""
        import httpx

        try:
            resp = self._client.get(self.base + path)
        except httpx.HTTPError as exc:
            return 0, f"{exc.__class__.__name__}: {exc}".encode()
        return resp.status_code, resp.content

    def close(self) -> None:
        self._client.close()


# -- consistency with what was seen before -------------------------------------------------


def _fork(
    state: HeadState, server: str | None, reason: str, old: Head, new: Head, consistency: Any = None
) -> ForkDetected:
    seen = {"remembered_head": old.doc, "new_head": new.doc, "consistency": consistency}
    return state.fork(reason, server, new.key_id, **seen)


def reconcile(
    state: HeadState, new: Head, keys: KeySet, fetch: Fetch | None, server: str | None
) -> tuple[bool | None, str]:
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
            raise _fork(
                state,
                server,
                f"two signed heads of size {new.tree_size} with "
                f"different roots ({old.root.hex()[:16]}… seen before, "
                f"{new.root.hex()[:16]}… now)",
                old,
                new,
            )
        return True, f"the same head of size {new.tree_size} as seen before"
    small, big = (old, new) if old.tree_size < new.tree_size else (new, old)
    if small.tree_size == 0:
        if new.tree_size > old.tree_size:
            state.remember(new, server)
        return True, "extends the empty head seen before"
    if fetch is None:
        return None, (
            f"consistency with the head of size {old.tree_size} seen before not "
            "checked (no server to ask for the proof)"
        )
    status, body = fetch("/v1/log/consistency", {"first": small.tree_size, "second": big.tree_size})
    if status in (400, 404):
        raise _fork(
            state,
            server,
            f"the server cannot prove that its head of size "
            f"{big.tree_size} extends the one of size {small.tree_size} "
            f"({_why(status, body)})",
            old,
            new,
            body,
        )
    if status != 200 or not isinstance(body, dict):
        raise LogCheckFailed(
            f"no consistency proof {small.tree_size}→{big.tree_size}: {_why(status, body)}"
        )
    first = parse_head(body.get("first_head"), keys, "the consistency proof's first head")
    second = parse_head(body.get("second_head"), keys, "the consistency proof's second head")
    for mine, theirs in ((small, first), (big, second)):
        if theirs.tree_size != mine.tree_size:
            raise LogCheckFailed(
                f"the consistency proof is for size {theirs.tree_size}, not {mine.tree_size}"
            )
        if theirs.root != mine.root:
            raise _fork(
                state,
                server,
                f"two signed heads of size {mine.tree_size} with different roots",
                old,
                new,
                body,
            )
    proof = _hex_list(body.get("proof"), "the consistency proof")
    if not tlog.consistent(small.tree_size, big.tree_size, small.root, big.root, proof):
        raise _fork(
            state,
            server,
            f"the head of size {big.tree_size} is not an extension "
            f"of the head of size {small.tree_size} (the consistency proof fails)",
            old,
            new,
            body,
        )
    if new.tree_size > old.tree_size:
        state.remember(new, server)
        return True, f"consistent with the head of size {old.tree_size} seen before"
    return True, f"the head of size {old.tree_size} seen before is consistent with it"


# -- checkpoints (c2sp.org/tlog-checkpoint) --------------------------------------------------


def tile_fetcher(fetch: Any, prefix: str = "/log/") -> Callable[[tlog.Tile], bytes]:
    """``fetch.raw`` as a tile source for :class:`tlog.TileHashReader` (TileError if a tile
    cannot be had)."""

    def get(tile: tlog.Tile) -> bytes:
        status, body = fetch.raw(prefix + tile.path)
        if status != 200:
            raise tlog.TileError(f"no {tile.path} from the server: {_why(status, None)}")
        return bytes(body)

    return get


def reconcile_checkpoint(
    state: HeadState,
    cp: tlog.Checkpoint,
    note: str,
    fetch: Any,
    server: str | None,
    slot: str | None = None,
) -> str:
    """Check a verified checkpoint against the one remembered for its origin — the newer of
    the two must extend the older, by a consistency proof computed from the server's tiles —
    and remember it when newer. ForkDetected (with evidence) when it does not. ``slot``: the
    name it is remembered under (default its origin; ``verify --server`` adds the log key's
    id, so two logs that share an origin name but not a key are not taken for one)."""
    slot = cp.origin if slot is None else slot
    entry = state.checkpoints.get(slot)
    old: tlog.Checkpoint | None = None
    if isinstance(entry, dict):
        try:
            old = tlog.parse_checkpoint(tlog.split_note(entry["note"])[0])
        except (KeyError, TypeError, tlog.NoteError):
            old = None

    def remember() -> None:
        state.checkpoints[slot] = {"server": server, "seen_at": _now(), "note": note}
        state.dirty = True

    def fork(reason: str) -> ForkDetected:
        assert isinstance(entry, dict)
        seen = {"remembered_checkpoint": entry.get("note"), "new_checkpoint": note}
        return state.fork(reason, server, cp.origin, origin=cp.origin, **seen)

    if old is None:
        remember()
        return f"first checkpoint seen for {cp.origin} (remembered)"
    if old.size == cp.size:
        if old.root != cp.root:
            raise fork(
                f"two checkpoints of size {cp.size} with different roots "
                f"({old.root.hex()[:16]}… seen before, {cp.root.hex()[:16]}… now)"
            )
        return f"the same checkpoint of size {cp.size} as seen before"
    small, big = (old, cp) if old.size < cp.size else (cp, old)
    if small.size == 0:
        if cp.size > old.size:
            remember()
        return "extends the empty checkpoint seen before"
    reader = tlog.TileHashReader(big.size, big.root, tile_fetcher(fetch))
    try:
        proof = tlog.prove_tree(big.size, small.size, reader)
        tlog.check_tree(proof, big.size, big.root, small.size, small.root)
    except tlog.ProofError as exc:
        raise fork(
            f"the checkpoint of size {big.size} does not extend the one of size "
            f"{small.size} ({exc})"
        ) from None
    except tlog.TileError as exc:
        raise LogCheckFailed(f"no consistency proof {small.size}→{big.size}: {exc}") from None
    if cp.size > old.size:
        remember()
        return f"consistent with the checkpoint of size {old.size} seen before"
    return f"the checkpoint of size {old.size} seen before is consistent with it"
