"""The server's secrets: the master key (seals seeds), the Ed25519 signing keys and the
transparency log's note key, and what every process of a deployment shares of them.

- **Signing keys** rotate in two phases without a restart (docs/deploy.md §10). ``qahwa keys
  rotate`` (:func:`rotate`) *stages* a new key: it is listed in ``/v1/keys`` as ``next``
  with its ``activates_at``, and the keys it replaces get that same moment as their
  ``retired_at``. Every key is kept in ``signing_keys`` sealed under the master key (as the
  server seeds are), so each process's :class:`KeyRing` loads the staged key from the
  database (it looks every ``QAHWA_KEY_POLL_SECONDS``) and switches at ``activates_at``.
  Nothing is signed by a key at or after its ``retired_at``: a record is signed by the key
  in force at its own time (``created_at``, ``locked_at``, ``ended_at``, ``timestamp``) or
  now, whichever is later; with no key in force (a staged key this process cannot open)
  signing answers 503 rather than use a retired key. A process that holds no key in force
  refuses to start (:class:`RetiredKeyError`, one line).
- **The log's note key and origin** (:func:`log_identity`) are the deployment's, not a
  host's: the first process to start records them in ``log_identity`` (the seed sealed
  under the master key); every other process signs checkpoints with that key under that
  origin, and one configured with another key or origin refuses to start
  (:class:`LogIdentityError`, one line).
"""

from __future__ import annotations

import base64
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

import tlog
from fairness import (
    SecretBox,
    SecretBoxError,
    Signer,
    load_master_key,
    new_master_key,
    public_key_b64,
    signed_time,
)
from fairness.announce import announcement_body

from .clock import SYSTEM_CLOCK, Clock, epoch_of, iso_of
from .db import Database
from .errors import Conflict, Unavailable
from .models import LogIdentity, SigningKey
from .settings import Settings

log = logging.getLogger("qahwa.keys")


def _create_exclusive(path: Path, content: str) -> bool:
    """Write ``content`` to a new file with mode 0600; False if the file already exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        fh.write(content)
    return True


def _read_nonempty(path: Path) -> str:
    # Another process may have created the file a moment ago and still be writing it.
    for _ in range(50):
        text = path.read_text(encoding="ascii").strip()
        if text:
            return text
        time.sleep(0.02)
    raise RuntimeError(f"{path} is empty")


def key_file(path: Path, make: Callable[[], str | bytes]) -> str:
    """The key in ``path``, written by ``make`` (bytes: as base64) on first use (0600)."""
    if not path.exists():
        new = make()
        text = new if isinstance(new, str) else base64.b64encode(new).decode("ascii")
        _create_exclusive(path, text + "\n")
    return _read_nonempty(path)


def master_key(settings: Settings) -> bytes:
    return load_master_key(
        settings.master_key or key_file(settings.master_key_path, new_master_key)
    )


def signer(settings: Settings) -> Signer:
    if settings.signing_key:
        return Signer.from_seed_b64(settings.signing_key)
    key_file(settings.signing_key_path, lambda: Signer.generate().private_b64())
    return Signer.load(settings.signing_key_path)


class StartupError(RuntimeError):
    """A process must not serve with this configuration: the message is one line."""


class RetiredKeyError(StartupError):
    """The process holds no signing key in force: only keys retired by ``qahwa keys rotate``."""


class LogIdentityError(StartupError):
    """The process's log note key or origin is not the deployment's (``log_identity``)."""


def _aad(key_id: str) -> str:
    return f"signing-key {key_id}"


def _seal_signer(box: SecretBox, s: Signer) -> str:
    return box.seal(base64.b64decode(s.private_b64()), _aad(s.key_id))


def _key_row(s: Signer, created_at: str, sealed: str | None, **extra: Any) -> SigningKey:
    return SigningKey(
        key_id=s.key_id,
        alg="ed25519",
        public_key=public_key_b64(s.public_key),
        created_at=created_at,
        sealed=sealed,
        **extra,
    )


def _open_signer(box: SecretBox, row: SigningKey) -> Signer | None:
    if row.sealed is None:
        return None
    try:
        raw = box.open(row.sealed, _aad(row.key_id))
    except SecretBoxError:
        return None
    s = Signer.from_seed_b64(base64.b64encode(raw).decode("ascii"))
    return s if s.key_id == row.key_id else None


class RecordSigner(Protocol):
    """What signs the service's records: a :class:`fairness.Signer` or a :class:`KeyRing`."""

    @property
    def key_id(self) -> str: ...

    @property
    def public_key(self) -> Ed25519PublicKey: ...

    def signed(self, record: dict[str, Any]) -> dict[str, Any]: ...

    def signed_json(self, record: dict[str, Any]) -> tuple[dict[str, Any], bytes]: ...


def predecessors(rows: Sequence[SigningKey], new: SigningKey) -> list[SigningKey]:
    """The keys that announce ``new`` (fairness-v2.md, revision "key announcements"): the
    keys :func:`rotate` retired when it staged ``new`` — in force when it was staged
    (``created_at``) and retired at its ``activates_at``. None for a key not staged."""
    if new.activates_at is None:
        return []
    staged, starts = epoch_of(new.created_at), epoch_of(new.activates_at)
    return [
        r
        for r in rows
        if r.key_id != new.key_id
        and r.retired_at is not None
        and epoch_of(r.retired_at) == starts
        and epoch_of(r.activates_at or r.created_at) <= staged
    ]


def announcement(new: SigningKey, by: Signer) -> dict[str, Any]:
    """``new``'s announcement signed by ``by`` (one of its :func:`predecessors`): the same
    bytes whenever and wherever it is made (Ed25519 is deterministic, and every field is
    the stored row's)."""
    assert new.activates_at is not None
    body = announcement_body(new.key_id, new.public_key, new.activates_at, new.created_at)
    return by.signed(body)


@dataclass(frozen=True)
class Held:
    signer: Signer
    activates: float
    retires: float | None


class KeyRing:
    """The signing keys one process holds, each in force from its ``activates_at`` until its
    ``retired_at``; re-read from the database every ``poll_seconds`` by a thread (and at
    once when a record's time is past every key it holds)."""

    def __init__(
        self,
        db: Database,
        box: SecretBox,
        configured: Signer,
        clock: Clock = SYSTEM_CLOCK,
        poll_seconds: float = 5.0,
    ) -> None:
        self.db = db
        self.box = box
        self.configured = configured
        self.clock = clock
        self.poll_seconds = poll_seconds
        self._held: tuple[Held, ...] = ()
        self._rows: tuple[SigningKey, ...] = ()
        self._announced: dict[tuple[str, str], dict[str, Any]] = {}
        self._opened: dict[str, Signer] = {configured.key_id: configured}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._refresh_lock = threading.Lock()

    # -- loading ---------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read ``signing_keys`` again: the keys this process can open, with their times."""
        with self._refresh_lock:
            with self.db.read() as s:
                rows = s.exec(select(SigningKey)).all()
            held = []
            for r in rows:
                signer = self._opened.get(r.key_id)
                if signer is None:
                    signer = _open_signer(self.box, r)
                    if signer is None:
                        continue
                    self._opened[r.key_id] = signer
                start = epoch_of(r.activates_at or r.created_at)
                end = epoch_of(r.retired_at) if r.retired_at else None
                held.append(Held(signer, start, end))
            self._held = tuple(sorted(held, key=lambda h: h.activates))
            self._rows = tuple(rows)

    def announcements(
        self, rows: Sequence[SigningKey] | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """key_id → the announcements of that key this process can sign (by each of its
        :func:`predecessors` it holds), as ``/v1/keys`` and the event stream publish them;
        made once per key and announcing key. ``rows``: the keys as just read (default: as
        the last :meth:`refresh` read them)."""
        rows = self._rows if rows is None else rows
        out: dict[str, list[dict[str, Any]]] = {}
        for new in rows:
            for old in predecessors(rows, new):
                signer = self._opened.get(old.key_id)
                if signer is None:
                    continue
                made = self._announced.get((new.key_id, old.key_id))
                if made is None:
                    made = announcement(new, signer)
                    self._announced[(new.key_id, old.key_id)] = made
                out.setdefault(new.key_id, []).append(made)
        return out

    def announced_since(self, now: float | None = None) -> list[dict[str, Any]]:
        """The announcements of the keys not retired at ``now`` (default: this ring's
        clock's now): the next key's, and the current one's if it was announced. What the
        event stream pushes."""
        now = self.clock.now() if now is None else now
        live = {
            r.key_id for r in self._rows if r.retired_at is None or epoch_of(r.retired_at) > now
        }
        return [a for kid, found in self.announcements().items() if kid in live for a in found]

    def _pick(self, t: float) -> Signer | None:
        best: Held | None = None
        for h in self._held:
            if h.activates <= t and (h.retires is None or t < h.retires):  # in force at t
                if h.signer is self.configured:
                    return h.signer
                if best is None or h.activates >= best.activates:
                    best = h
        return None if best is None else best.signer

    def at(self, t: float) -> Signer:
        """The key in force at ``t`` (epoch seconds); 503 when this process holds none."""
        found = self._pick(t)
        if found is None:
            self.refresh()
            found = self._pick(t)
        if found is None:
            raise Unavailable(
                "no signing key this process holds is in force now (a key staged by "
                "qahwa keys rotate that it cannot open?); nothing was signed, retry later"
            )
        return found

    # -- signing ---------------------------------------------------------------------------
    def current(self) -> Signer:
        return self.at(self.clock.now())

    @property
    def key_id(self) -> str:
        return self.current().key_id

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.current().public_key

    def signed(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` signed by the key in force at its own time or now, whichever is later
        (so never by a key at or after its ``retired_at``, by either clock)."""
        return self._for(record).signed(record)

    def signed_json(self, record: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """:meth:`signed` and the signed record's canonical JSON (Signer.signed_json)."""
        return self._for(record).signed_json(record)

    def _for(self, record: dict[str, Any]) -> Signer:
        """The key in force at the record's own time or now, whichever is later."""
        t = self.clock.now()
        own = signed_time(record)
        if own is not None and own[1] > t:
            t = own[1]
        return self.at(t)

    # -- the poller ------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return

        def poll() -> None:
            while not self._stop.wait(self.poll_seconds):
                try:
                    self.refresh()
                except Exception:  # the database may be away for a moment: try again
                    log.warning("could not re-read the signing keys; trying again")

        self._thread = threading.Thread(target=poll, name="qahwa-keys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


def open_ring(
    settings: Settings, db: Database, box: SecretBox, clock: Clock = SYSTEM_CLOCK
) -> KeyRing:
    """Register this process's configured key (public half, and sealed), load every key it
    can open; :class:`RetiredKeyError` when none is in force now."""
    configured = signer(settings)
    for attempt in range(2):
        try:
            with db.write() as s:
                row = s.get(SigningKey, configured.key_id)
                if row is None:
                    sealed = _seal_signer(box, configured)
                    s.add(_key_row(configured, iso_of(clock.now()), sealed))
                elif row.sealed is None:
                    row.sealed = _seal_signer(box, configured)
                    s.add(row)
            break
        except IntegrityError:  # another process registered it at the same moment
            if attempt:
                raise
    ring = KeyRing(db, box, configured, clock, settings.key_poll_seconds)
    ring.refresh()
    if ring._pick(clock.now()) is None:  # no key in force now
        with db.read() as s:
            row = s.get(SigningKey, configured.key_id)
        when = row.retired_at if row is not None else None
        raise RetiredKeyError(
            f"the signing key {configured.key_id} was retired at {when} (qahwa keys rotate) "
            "and no key in force is open to this process (none sealed in the database opens "
            "with its master key): install the current key as QAHWA_SIGNING_KEY or the key "
            "file and start again"
        )
    return ring


def rotate(
    settings: Settings,
    session: Session,
    box: SecretBox,
    now: float,
    delay: float,
    *,
    seal: bool = True,
) -> tuple[Signer, str | None, str]:
    """Stage a new signing key that activates ``delay`` seconds from ``now``; every key in
    force until then is retired at that moment. Returns ``(new signer, private key or
    None, activates_at)``.

    The new key is sealed under the master key into the database (unless ``seal`` is false),
    which is how running processes switch to it without a restart. With a key file (no
    ``QAHWA_SIGNING_KEY``) it also replaces the file, the old one kept beside it as
    ``<file>.retired-<key_id>`` (0600); with ``QAHWA_SIGNING_KEY`` nothing is written and
    the new private key (base64) is returned for the secret store. Refused (409) while an
    earlier rotation is still staged.
    """
    rows = session.exec(select(SigningKey)).all()
    staged = [r for r in rows if r.activates_at is not None and epoch_of(r.activates_at) > now]
    if staged:
        raise Conflict(
            f"the signing key {staged[0].key_id} is already staged to activate at "
            f"{staged[0].activates_at}; rotate again after that",
            "rotation_staged",
        )
    new = Signer.generate()
    at = iso_of(now + delay)
    private: str | None = None
    if settings.signing_key:
        private = new.private_b64()
    else:
        path = settings.signing_key_path
        staged_path = path.with_name(path.name + ".new")
        staged_path.unlink(missing_ok=True)
        if not _create_exclusive(staged_path, new.private_b64() + "\n"):
            raise RuntimeError(f"could not create {staged_path}")
        if path.exists():
            old = Signer.load(path)
            os.replace(path, path.with_name(f"{path.name}.retired-{old.key_id}"))
        os.replace(staged_path, path)
    for r in rows:
        if r.retired_at is None or epoch_of(r.retired_at) > now + delay:
            r.retired_at = at
            session.add(r)
    sealed = _seal_signer(box, new) if seal else None
    session.add(_key_row(new, iso_of(now), sealed, activates_at=at))
    return new, private, at


# -- the log's identity -------------------------------------------------------------------------
def _decode_seed(text: str) -> bytes:
    try:
        seed = base64.b64decode(text.strip(), validate=True)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise LogIdentityError("the log note key is not base64 of a 32-byte Ed25519 seed")
    return seed


def _identity_row(box: SecretBox, log_id: int, origin: str, seed: bytes) -> LogIdentity:
    return LogIdentity(
        id=log_id,
        origin=origin,
        vkey=tlog.NoteSigner.from_seed(origin, seed).vkey,
        sealed=box.seal(seed, f"log-note-key {origin}"),
        created_at=iso_of(time.time()),
    )


def open_log_seed(box: SecretBox, origin: str, sealed: str) -> bytes:
    """The note key seed of the log ``origin``, sealed in ``log_identity``."""
    try:
        return box.open(sealed, f"log-note-key {origin}")
    except SecretBoxError:
        raise LogIdentityError(
            f"the log note key of {origin!r} in the database does not open with this "
            "host's master key: every host needs the same QAHWA_MASTER_KEY"
        ) from None


def log_identity(settings: Settings, db: Database, box: SecretBox) -> tuple[int, str, bytes]:
    """The deployment's log: ``(log id, origin, note key seed)``.

    The first process on a database records its own (``QAHWA_LOG_ORIGIN`` or
    ``<host name>/log``; ``QAHWA_LOG_KEY``, the key file, or a new key written to the key
    file); every later process takes them from the database, and refuses to start
    (:class:`LogIdentityError`) if its configured origin or key is another.
    """
    path = settings.log_key_path
    text = settings.log_key or (_read_nonempty(path) if path.exists() else None)
    configured = None if text is None else _decode_seed(text)
    with db.write() as s:
        db.lock_table(s, "log_identity")
        current = s.exec(select(LogIdentity).order_by(col(LogIdentity.id).desc()).limit(1)).first()
        if current is None:
            origin = settings.origin
            if configured is None:  # a new note key (it signs checkpoints only) in the key file
                configured = _decode_seed(key_file(path, lambda: os.urandom(32)))
            # log 1: the log of any entry stored before the first was recorded
            s.add(_identity_row(box, 1, origin, configured))
            return 1, origin, configured
        assert current.id is not None
        log_id, origin, vkey = current.id, current.origin, current.vkey
        if settings.log_origin is not None and settings.log_origin != origin:
            raise LogIdentityError(
                f"QAHWA_LOG_ORIGIN is {settings.log_origin!r} but this deployment's log "
                f"(in the database) is {origin!r}: every host serves one log; unset it or "
                "set it to the database's (a new log: docs/deploy.md §10)"
            )
        if configured is not None:
            mine = tlog.NoteSigner.from_seed(origin, configured).vkey
            if mine != vkey:
                where = "QAHWA_LOG_KEY" if settings.log_key else str(settings.log_key_path)
                raise LogIdentityError(
                    f"the log note key in {where} ({mine}) is not this deployment's log key "
                    f"({vkey}, in the database): remove it (the key is taken from the "
                    "database) or install the deployment's"
                )
            return log_id, origin, configured
        return log_id, origin, open_log_seed(box, origin, current.sealed)


def new_log(
    settings: Settings, db: Database, box: SecretBox, origin: str, seed: bytes
) -> tuple[int, str]:
    """Start a new log (docs/deploy.md §10): ``origin`` with the note key ``seed`` becomes
    the deployment's log, appended to from index 0 from this commit on (it takes the log's
    append lock, so no entry lands in the old log after it); ``(its id, its vkey)``."""
    with db.write() as s:
        db.lock_table(s, "translog")  # appends wait, then go to the new log
        db.lock_table(s, "log_identity")
        if s.exec(select(LogIdentity).where(col(LogIdentity.origin) == origin)).first():
            raise Conflict(f"the log {origin!r} exists already: pick a new origin", "exists")
        top = s.exec(select(func.max(col(LogIdentity.id)))).one()
        log_id = 1 if top is None else int(top) + 1
        row = _identity_row(box, log_id, origin, seed)
        s.add(row)
    return log_id, row.vkey


def preflight(settings: Settings, db: Database) -> None:
    """What ``qahwa serve`` checks before it listens: :class:`StartupError` (one line) if
    this process would sign with a retired key or another log's key."""
    box = SecretBox(master_key(settings))
    open_ring(settings, db, box)
    log_identity(settings, db, box)
