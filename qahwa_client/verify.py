"""``Client.verify``: run the ``verify`` tool's core on a transcript, here, not on the server.

Imported only when a transcript is verified, so using the client for play needs only
pydantic and httpx at import time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from qahwa_wire.models import KeysOut


def verify_transcript(
    doc: dict[str, Any], keys: KeysOut, *, source: str, receipts: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """verify's report on ``doc`` with the public ``keys`` (``GET /v1/keys``) and, for a
    qahwa-fair/2 transcript, the seats' ``receipts`` (as ``verify --receipt``)."""
    from verify_cli.core import verify_document
    from verify_cli.keys import parse_keys

    keyset = parse_keys(
        json.dumps(keys.model_dump(mode="json")), source="server", origin=f"{source}/v1/keys"
    )
    return verify_document(doc, keyset, source=source, draws_limit=0, receipts=list(receipts))
