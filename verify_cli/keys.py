"""The server's Ed25519 public keys: from a file (``--key``) or fetched from ``/v1/keys``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import tlog
from fairness import KeyFileError, key_id_of, load_public_key, public_key_b64
from fairness.announce import retired_problem


class UnusableInput(Exception):
    """Input that cannot be verified at all (exit code 2): the message is one line."""


@dataclass
class KeySet:
    """Public keys by key id, and where they came from (``file`` or ``server``)."""

    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    source: str = "file"  # "file" or "server"
    origin: str = ""  # the file path or the keys URL
    #: key id -> when it was retired (``/v1/keys``'s ``retired_at``): nothing it signed at
    #: or after that time is valid
    retired: dict[str, str] = field(default_factory=dict)
    #: the transparency log's note key (``/v1/keys``'s ``log.vkey``) when the keys came as
    #: that document: pinned keys (``--key keys.json``) pin the log too
    log_vkey: str | None = None

    def retired_problem(self, key_id: Any, record: dict[str, Any]) -> str | None:
        """Why ``record``, signed by ``key_id``, does not count as signed by it when that key
        is retired (``retired_at``), or None. A retired key's signature counts only on a
        record that names its own time (:func:`record_time`: a v2 transcript its
        ``ended_at``, a receipt its ``at``, …), before the key's ``retired_at``; a
        transcript's events are stamped before it too."""
        if isinstance(key_id, str) and key_id not in self.keys and len(self.keys) == 1:
            (key_id,) = self.keys  # pick() uses the only key whatever id is named
        at = self.retired.get(key_id) if isinstance(key_id, str) else None
        if at is None:
            return None
        assert isinstance(key_id, str)
        return retired_problem(key_id, at, record)

    def pick(self, key_id: Any) -> tuple[Ed25519PublicKey | None, str]:
        """The key for ``key_id`` and a note; a single key is used whatever id it is given."""
        if isinstance(key_id, str) and key_id in self.keys:
            return self.keys[key_id], ""
        if len(self.keys) == 1:
            ((kid, pub),) = self.keys.items()
            return pub, f"the transcript names key {key_id!r}, the only key given is {kid}"
        return None, f"key {key_id!r} is not among the keys ({', '.join(sorted(self.keys))})"

    def to_b64(self) -> dict[str, Any]:
        """A picklable form (for worker processes): every field, the keys in base64."""
        keys = {k: public_key_b64(v) for k, v in self.keys.items()}
        return {**vars(self), "keys": keys, "retired": dict(self.retired)}

    @classmethod
    def from_b64(cls, data: dict[str, Any]) -> KeySet:
        """The key set :meth:`to_b64` wrote."""
        return cls(**{**data, "keys": {k: load_public_key(v) for k, v in data["keys"].items()}})


def parse_keys(text: str, *, source: str, origin: str) -> KeySet:
    """A base64 raw public key, or the JSON of ``GET /v1/keys`` (or one of its entries)."""
    text = text.strip()
    if not text:
        raise UnusableInput(f"{origin}: no key in it")
    out = KeySet(source=source, origin=origin)
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            raise UnusableInput(f"{origin}: not JSON and not a base64 key") from None
        entries = doc.get("keys") if isinstance(doc, dict) and "keys" in doc else [doc]
        log = doc.get("log") if isinstance(doc, dict) and "keys" in doc else None
        if log is not None:
            vkey = log.get("vkey") if isinstance(log, dict) else None
            if not isinstance(vkey, str):
                raise UnusableInput(f"{origin}: its log has no vkey (a note key)")
            try:
                tlog.parse_vkey(vkey)
            except tlog.NoteError as exc:
                raise UnusableInput(f"{origin}: its log key is not a note key ({exc})") from None
            out.log_vkey = vkey
        if not isinstance(entries, list) or not entries:
            raise UnusableInput(f"{origin}: no keys listed")
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("public_key"), str):
                raise UnusableInput(f"{origin}: a key entry has no public_key")
            if entry.get("alg", "ed25519") != "ed25519":
                continue
            try:
                pub = load_public_key(entry["public_key"])
            except KeyFileError as exc:
                raise UnusableInput(f"{origin}: {exc}") from None
            kid = entry.get("key_id")
            kid = kid if isinstance(kid, str) else key_id_of(pub)
            out.keys[kid] = pub
            if isinstance(entry.get("retired_at"), str):
                out.retired[kid] = entry["retired_at"]
        if not out.keys:
            raise UnusableInput(f"{origin}: no ed25519 key listed")
        return out
    try:
        pub = load_public_key(text)
    except KeyFileError:
        raise UnusableInput(f"{origin}: not a base64 Ed25519 public key (32 bytes)") from None
    out.keys[key_id_of(pub)] = pub
    return out


def load_key_file(path: str) -> KeySet:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UnusableInput(f"cannot read key file {path}: {reason}") from None
    return parse_keys(text, source="file", origin=path)


def server_base(url: str) -> str:
    """``http://host:port/prefix`` of a URL under ``…/v1/…`` (or the URL's origin)."""
    if "/v1/" in url:
        return url[: url.index("/v1/")]
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def http_why(status: int, body: Any) -> str:
    """An HTTP answer's status and its error message, for a reason: ``HTTP 404: …``."""
    msg = ""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        msg = f": {body['error'].get('message', '')}"
    return ("unreachable" if status == 0 else f"HTTP {status}") + msg


def http_get_json(url: str, *, timeout: float = 15.0) -> Any:
    """GET a JSON document; UnusableInput with a one-line reason on any failure."""
    import httpx

    try:
        resp = httpx.get(url, timeout=timeout, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise UnusableInput(f"cannot fetch {url}: {exc.__class__.__name__}: {exc}") from None
    if resp.status_code != 200:
        try:
            body = resp.json()
        except ValueError:
            body = None
        raise UnusableInput(f"{url} answered {http_why(resp.status_code, body)}")
    from .inputs import InputError, parse_json

    try:
        return parse_json(resp.content)
    except InputError as exc:
        raise UnusableInput(f"{url} did not answer usable JSON: {exc}") from None


def fetch_keys(base: str) -> KeySet:
    url = base.rstrip("/") + "/v1/keys"
    return parse_keys(json.dumps(http_get_json(url)), source="server", origin=url)
