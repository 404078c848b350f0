"""The verify page's backend for sealed deals (games.sealed_backend): the checks of
``qahwa_page/static/sealed-verify.js`` (over the vendored @noble/curves), called from Pyodide.

The page's worker (``qahwa_page/static/verify-worker.js``) loads the vendored libraries and the
verifier only for qahwa-fair/3 transcripts, publishes ``jsonBackend(sealedVerifier(lib))`` as
the worker's global ``qahwaSealed`` and then calls :func:`install`. Every call crosses as JSON
(bytes as lowercase hex): ``qahwaSealed.run(kind, args)`` answers ``{"ok": true, "value"}`` or
``{"ok": false, "error"}``, the JavaScript verifier's SealedError message, which becomes a
:class:`games.sealed_backend.SealedCheckError` here. Outside Pyodide there is no ``js`` module:
:class:`JsBackend` takes any object with that ``run`` (tests use it so).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from games.sealed_backend import HandResult, SealedCheckError, use

GLOBAL = "qahwaSealed"


def _ctx(match_id: str, hand: int, seat: int) -> dict[str, Any]:
    return {"match_id": match_id, "hand": hand, "seat": seat}


class JsBackend:
    """games.sealed_backend.SealedBackend through the JavaScript verifier."""

    name = "js"

    def __init__(self, runner: Any = None) -> None:
        if runner is None:
            import js  # type: ignore[import-not-found]  # Pyodide's own module

            runner = getattr(js, GLOBAL, None)
            if runner is None:
                raise RuntimeError(
                    f"the page's sealed verifier is not loaded (no global {GLOBAL} in the worker)"
                )
        self._run = runner.run

    def _call(self, kind: str, **args: Any) -> Any:
        out = json.loads(str(self._run(kind, json.dumps(args, separators=(",", ":")))))
        if not out["ok"]:
            raise SealedCheckError(out["error"])
        return out["value"]

    def item_point(self, game: str, code: str) -> bytes:
        return bytes.fromhex(self._call("item_point", game=game, code=code))

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        return bytes.fromhex(self._call("hand_key", keys=[k.hex() for k in keys]))

    def verify_key(self, match_id: str, hand: int, seat: int, key: bytes, proof: bytes) -> None:
        self._call("verify_key", ctx=_ctx(match_id, hand, seat), key=key.hex(), proof=proof.hex())

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        self._call("check_revealed", key=key.hex(), secret=secret.hex(), seat=seat)

    def verify_shuffle(
        self,
        match_id: str,
        hand: int,
        seat: int,
        hand_key: bytes,
        deck_in: bytes,
        deck_out: bytes,
        proof: bytes,
    ) -> None:
        self._call(
            "verify_shuffle",
            ctx=_ctx(match_id, hand, seat),
            hand_key=hand_key.hex(),
            deck_in=deck_in.hex(),
            deck_out=deck_out.hex(),
            proof=proof.hex(),
        )

    def verify_share(
        self,
        match_id: str,
        hand: int,
        seat: int,
        key: bytes,
        A: bytes,
        B: bytes,
        share: bytes,
        proof: bytes,
    ) -> None:
        self._call(
            "verify_share",
            ctx=_ctx(match_id, hand, seat),
            key=key.hex(),
            A=A.hex(),
            B=B.hex(),
            share=share.hex(),
            proof=proof.hex(),
        )

    def check_opening(
        self,
        game: str,
        code: str,
        A: bytes,
        B: bytes,
        match_id: str,
        hand: int,
        keys: Sequence[bytes],
        shares: Sequence[tuple[bytes, bytes]],
    ) -> None:
        self._call(
            "check_opening",
            game=game,
            code=code,
            A=A.hex(),
            B=B.hex(),
            ctx=_ctx(match_id, hand, 0),
            keys=[k.hex() for k in keys],
            shares=[[D.hex(), p.hex()] for D, p in shares],
        )

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> tuple[str, ...]:
        codes = self._call(
            "open_deck",
            game=game,
            items=list(items),
            deck=deck.hex(),
            secrets=[x.hex() for x in secrets],
        )
        return tuple(codes)

    def verify_hand(
        self, match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
    ) -> HandResult:
        v = self._call(
            "verify_hand", match_id=match_id, entry=entry, seats=seats, house=sorted(house)
        )
        return HandResult(
            bytes.fromhex(v["hand_key"]),
            bytes.fromhex(v["deck"]),
            {int(k): c for k, c in v["opened"].items()},
            None if v["order"] is None else tuple(v["order"]),
        )


def install(runner: Any = None) -> JsBackend:
    """Make the JavaScript verifier the backend of games.sealed_backend (the page's worker
    calls this once it has loaded it)."""
    b = JsBackend(runner)
    use(b)
    return b
