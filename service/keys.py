"""The server's secrets on disk: the master key (seals seeds) and the Ed25519 signing key.

``qahwa keys rotate`` (:func:`rotate`) makes a new signing key current: the keys it replaces
get ``retired_at`` and stay listed in ``/v1/keys``, so everything they signed stays
verifiable; a process refuses to start with a retired key.
"""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

from sqlalchemy import update
from sqlmodel import Session, col

from fairness import Signer, load_master_key, new_master_key, public_key_b64

from .models import SigningKey
from .settings import Settings


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


def master_key(settings: Settings) -> bytes:
    if settings.master_key:
        return load_master_key(settings.master_key)
    path = settings.master_key_path
    if not path.exists():
        _create_exclusive(path, base64.b64encode(new_master_key()).decode("ascii") + "\n")
    return load_master_key(_read_nonempty(path))


def signer(settings: Settings) -> Signer:
    if settings.signing_key:
        return Signer.from_seed_b64(settings.signing_key)
    path = settings.signing_key_path
    if not path.exists():
        _create_exclusive(path, Signer.generate().private_b64() + "\n")
    _read_nonempty(path)
    return Signer.load(path)


class RetiredKeyError(RuntimeError):
    """The configured signing key was retired by ``qahwa keys rotate``."""


def log_note_seed(settings: Settings) -> bytes:
    """The 32-byte seed of the log's own Ed25519 note key (it signs checkpoints only):
    ``QAHWA_LOG_KEY``, or the key file beside the signing key, generated on first start."""
    text = settings.log_key
    if not text:
        path = settings.log_key_path
        if not path.exists():
            _create_exclusive(path, base64.b64encode(os.urandom(32)).decode("ascii") + "\n")
        text = _read_nonempty(path)
    try:
        seed = base64.b64decode(text.strip(), validate=True)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise RuntimeError("the log note key is not base64 of a 32-byte Ed25519 seed")
    return seed


def register(session: Session, s: Signer, created_at: str) -> None:
    """Record the signing key's public half (every key ever used stays listed)."""
    row = session.get(SigningKey, s.key_id)
    if row is None:
        session.add(
            SigningKey(
                key_id=s.key_id,
                alg="ed25519",
                public_key=public_key_b64(s.public_key),
                created_at=created_at,
            )
        )
    elif row.retired_at is not None:
        raise RetiredKeyError(
            f"the signing key {s.key_id} was retired at {row.retired_at} (qahwa keys rotate); "
            "install the current key (QAHWA_SIGNING_KEY or the key file) and start again"
        )


def rotate(settings: Settings, session: Session, created_at: str) -> tuple[Signer, str | None]:
    """Make a new signing key current and retire every other one.

    With a key file (no ``QAHWA_SIGNING_KEY``) the new key replaces it and the old one is
    kept beside it as ``<file>.retired-<key_id>`` (0600) until the operator deletes it;
    returns ``(new signer, None)``. With ``QAHWA_SIGNING_KEY`` nothing is written: returns
    the new private key (base64) for the operator to install. Running processes sign with
    the key they started with until they are restarted.
    """
    new = Signer.generate()
    private: str | None = None
    if settings.signing_key:
        private = new.private_b64()
    else:
        path = settings.signing_key_path
        staged = path.with_name(path.name + ".new")
        staged.unlink(missing_ok=True)
        if not _create_exclusive(staged, new.private_b64() + "\n"):
            raise RuntimeError(f"could not create {staged}")
        if path.exists():
            old = Signer.load(path)
            os.replace(path, path.with_name(f"{path.name}.retired-{old.key_id}"))
        os.replace(staged, path)
    session.exec(
        update(SigningKey).where(col(SigningKey.retired_at).is_(None)).values(retired_at=created_at)
    )
    session.add(
        SigningKey(
            key_id=new.key_id,
            alg="ed25519",
            public_key=public_key_b64(new.public_key),
            created_at=created_at,
        )
    )
    return new, private
