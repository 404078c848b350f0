"""Verify one transcript (fairness-v1.md §6): the checks, in order, and a JSON-ready report.

A report is a dict::

    {"source", "status": "verified" | "failed" | "unchecked" | "unusable",
     "match_id", "game", "ruleset", "seats": [{"seat", "name", "seed_source"}],
     "counts": {"events", "actions", "chance", "rounds"|"hands"|"games"|"draws": n},
     "checks": [{"name", "ok": true|false|null, "detail"}],
     "failures": [{"check", "message", "seq", "expected", "found"}],
     "signature": {"checked", "key_id", "key_source", "key_origin"},
     "draws": [{"seq", "label", "kind", "text"}], "draws_total": n, "reason"}

``unchecked``: everything checked out except the signature, which could not be checked
(no key); ``unusable``: the input is no transcript we can verify (``reason`` says why).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fairness import SignatureError, verify_record

from .keys import KeySet, UnusableInput
from .replay_core import NotATranscript, Report, assemble, check_rules, check_shape
from .replay_core import count_units as count_units

VERIFIED = "verified"
FAILED = "failed"
UNCHECKED = "unchecked"
UNUSABLE = "unusable"


def load_document(path: str) -> Any:
    """Read and parse a transcript file (UnusableInput when unreadable or not JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise UnusableInput(f"{path}: is a directory") from None
    except OSError as exc:
        raise UnusableInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UnusableInput(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UnusableInput(f"{path}: not JSON ({exc})") from None


def _without_source(source: str, reason: str) -> str:
    """The reason without the file or URL in it: every report names its source already."""
    if reason.startswith(f"{source}: "):
        return reason[len(source) + 2:]
    if reason.startswith(f"{source} "):
        return reason[len(source) + 1:]
    return reason.replace(f" {source}", "", 1)


def unusable(source: str, reason: str) -> dict[str, Any]:
    reason = _without_source(source, reason)
    return {"source": source, "status": UNUSABLE, "reason": reason, "checks": [],
            "failures": [], "draws": [], "draws_total": 0}


def verify_document(doc: Any, keys: KeySet | None, *, source: str = "<transcript>",
                    draws_limit: int | None = 12, allow_unsigned: bool = False,
                    ) -> dict[str, Any]:
    """Verify a parsed transcript; never raises for bad content (see the module doc)."""
    try:
        cls = check_shape(doc)
    except NotATranscript as exc:
        return unusable(source, str(exc))
    rep = Report(source, doc)
    ctx = check_rules(rep, doc, cls)  # 1.–4. commitment, match key, replay, result

    # 5. the signature
    sig_info: dict[str, Any] = {"checked": False, "key_id": None, "key_source": None,
                                "key_origin": None}
    sig = doc.get("signature")
    if isinstance(sig, dict):
        sig_info["key_id"] = sig.get("key_id")
    if keys is None:
        rep.skip("signature", "signature not checked: no server key (use --key or --server)")
    elif not isinstance(sig, dict):
        rep.fail("signature", "the transcript carries no signature")
    else:
        pub, note = keys.pick(sig.get("key_id"))
        sig_info.update(key_source=keys.source, key_origin=keys.origin)
        if pub is None:
            rep.fail("signature", note)
        else:
            try:
                verify_record(doc, pub)
            except SignatureError as exc:
                rep.fail("signature", f"{exc}" + (f" ({note})" if note else ""))
            else:
                sig_info["checked"] = True
                where = ("fetched from the server, so only as trustworthy as that server"
                         if keys.source == "server" else f"from {keys.origin}")
                rep.ok("signature", f"Ed25519 signature valid for key {sig.get('key_id')} "
                       f"({where})")

    if rep.failures:
        status = FAILED
    elif not sig_info["checked"]:
        status = VERIFIED if allow_unsigned else UNCHECKED
    else:
        status = VERIFIED
    return assemble(rep, doc, ctx, status=status, signature=sig_info, draws_limit=draws_limit)


def verify_item(item: tuple[str, Any, str], keys_b64: dict[str, Any] | None,
                draws_limit: int | None, allow_unsigned: bool) -> dict[str, Any]:
    """Worker entry point: ``item`` is ("file", path, source) or ("doc", document, source)."""
    kind, payload, source = item
    try:
        doc = load_document(payload) if kind == "file" else payload
    except UnusableInput as exc:
        return unusable(source, str(exc))
    keys = KeySet.from_b64(keys_b64) if keys_b64 is not None else None
    try:
        return verify_document(doc, keys, source=source, draws_limit=draws_limit,
                               allow_unsigned=allow_unsigned)
    except Exception as exc:  # a bug must not turn into a traceback for the user
        return unusable(source, f"internal error while verifying: {exc.__class__.__name__}: {exc}")
