"""Signed refusals (fairness-v2.md §7, refusals): every 4xx answer to a seat's request — a
commit, a reveal, an action, a resignation — carries ``"refusal"``, the server's signed
record of the request's hash, the status, the error code and the time, beside the error.

A seat keeps it as the answer to its request: the server cannot later say it never got the
request, nor that it refused it for another reason. A request that met neither a receipt nor
a signed refusal (a 5xx, no answer, an unsigned 4xx) stays unreceipted, and a timeout that
follows it is a ``censored`` dispute. Which statuses are signed is
:func:`service.errors.signs_refusal`, beside the table that maps errors to statuses: not a
413 (the body too large was not read whole) nor a 429 (the rate limits, outside this
middleware, changed nothing).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fairness import format_time_ms
from fairness.records import Refusal, request_sha256

from .clock import Clock
from .errors import signs_refusal
from .keys import RecordSigner

#: the seat's requests: ``POST`` to these paths (the match id is group 1)
SEAT_REQUEST = re.compile(
    r"^/v1/matches/([^/]{1,64})/(?:actions|resign|seats/\d+/(?:commit|reveal))$"
)


class SignedRefusals:
    """ASGI middleware: a refusal of a seat's request gets its signed :class:`Refusal`."""

    def __init__(self, app: ASGIApp, signer: RecordSigner, clock: Clock) -> None:
        self.app = app
        self.signer = signer
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = (
            SEAT_REQUEST.match(scope.get("path", ""))
            if scope["type"] == "http" and scope.get("method") == "POST"
            else None
        )
        if found is None:
            await self.app(scope, receive, send)
            return
        match_id = found.group(1)
        chunks: list[bytes] = []
        read_all = False

        async def reading() -> Message:
            nonlocal read_all
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                read_all = not message.get("more_body", False)
            return message

        start: Message | None = None
        held: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and signs_refusal(message["status"]):
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            held.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            while not read_all:  # refused before the body was read: it is still signed
                if (await reading())["type"] != "http.request":
                    break
            body = self.sign(match_id, start["status"], b"".join(held), b"".join(chunks))
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, reading, sending)

    def sign(self, match_id: str, status: int, answer: bytes, request: bytes) -> bytes:
        """The error answer with its signed refusal added (as it is, if not the error
        shape)."""
        try:
            doc: Any = json.loads(answer)
        except ValueError:
            return answer
        error = doc.get("error") if isinstance(doc, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            return answer
        doc["refusal"] = Refusal(
            match_id,
            request_sha256(request),
            status,
            error["code"],
            format_time_ms(int(self.clock.now() * 1_000_000)),
        ).sign(self.signer)
        return json.dumps(doc, separators=(",", ":")).encode()
