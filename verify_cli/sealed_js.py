"""The verify page's backend for sealed deals (``games.sealed_backend``): the checks of
``qahwa_page/static/sealed-verify.js`` (clients/ts's sealed cryptography over @noble/curves,
one bundle), called from Pyodide,
where ``rbcl`` (the CLI's backend, libsodium) does not exist.

The page's worker (``qahwa_page/static/verify-worker.js``) loads the verifier only for
qahwa-fair/3 transcripts, publishes its ``jsonBackend()`` as
the worker's global ``qahwaSealed`` and then calls :func:`install`. Every call crosses as JSON
(bytes as lowercase hex): ``qahwaSealed.run(kind, args)`` answers ``{"ok": true, "value"}`` or
``{"ok": false, "error"}`` (the JavaScript verifier's SealedError message, which is the
``sealed`` package's, word for word), which becomes a
:class:`games.sealed_backend.SealedStepError` worded as :class:`~games.sealed_backend.RbclBackend`
words it. Outside Pyodide there is no ``js`` module: :class:`JsBackend` takes any object with
that ``run`` (the tests pass one that runs node).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from games.sealed_backend import Ctx, SealedStepError, set_backend

GLOBAL = "qahwaSealed"


def _ctx(ctx: Ctx) -> dict[str, Any]:
    match_id, hand, seat = ctx
    return {"match_id": match_id, "hand": hand, "seat": seat}


class JsBackend:
    """:class:`games.sealed_backend.SealedBackend` through the JavaScript verifier."""

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
            raise SealedStepError(out["error"])
        return out["value"]

    def verify_key(self, ctx: Ctx, key: bytes, proof: bytes) -> None:
        self._call("verify_key", ctx=_ctx(ctx), key=key.hex(), proof=proof.hex())

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        return bytes.fromhex(self._call("hand_key", keys=[k.hex() for k in keys]))

    def starting_deck(self, game: str, items: Sequence[str]) -> bytes:
        return bytes.fromhex(self._call("starting_deck", game=game, items=list(items)))

    def verify_shuffle(
        self, ctx: Ctx, hand_key: bytes, deck_in: bytes, deck_out: bytes, proof: bytes
    ) -> None:
        try:
            self._call(
                "verify_shuffle",
                ctx=_ctx(ctx),
                hand_key=hand_key.hex(),
                deck_in=deck_in.hex(),
                deck_out=deck_out.hex(),
                proof=proof.hex(),
            )
        except SealedStepError as exc:
            raise SealedStepError(f"shuffle of seat {ctx[2]}: {exc}") from None

    def verify_share(self, ctx: Ctx, key: bytes, item: bytes, share: bytes, proof: bytes) -> None:
        self._call(
            "verify_share",
            ctx=_ctx(ctx),
            key=key.hex(),
            A=item[:32].hex(),
            B=item[32:].hex(),
            share=share.hex(),
            proof=proof.hex(),
        )

    def verify_shares(
        self, ctx: Ctx, key: bytes, shares: Sequence[tuple[bytes, bytes, bytes]]
    ) -> None:
        for item, share, proof in shares:
            self.verify_share(ctx, key, item, share, proof)

    def opens_to(self, game: str, code: str, item: bytes, shares: Sequence[bytes]) -> bool:
        return bool(
            self._call(
                "opens_to",
                game=game,
                code=code,
                A=item[:32].hex(),
                B=item[32:].hex(),
                shares=[D.hex() for D in shares],
            )
        )

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        self._call("check_revealed", key=key.hex(), secret=secret.hex(), seat=seat)

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> list[str]:
        found: list[str | None] = self._call(
            "lookup",
            game=game,
            items=list(items),
            deck=deck.hex(),
            secrets=[x.hex() for x in secrets],
        )
        out = [c for c in found if c is not None]
        if len(out) != len(found):
            raise SealedStepError("the revealed keys do not open every item of the deck")
        if sorted(out) != sorted(items):
            raise SealedStepError("the final deck does not hold every item once")
        return out

    def verify_hand(
        self, match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
    ) -> tuple[tuple[str, ...] | None, dict[int, str]]:
        """A hand's whole §9 entry (sealed.verify_hand's checks): (every item's code by
        position once every key is revealed, else None; the opened items)."""
        v = self._call(
            "verify_hand", match_id=match_id, entry=entry, seats=seats, house=sorted(house)
        )
        order = None if v["order"] is None else tuple(v["order"])
        return order, {int(k): c for k, c in v["opened"].items()}


def install(runner: Any = None) -> JsBackend:
    """Make the JavaScript verifier the backend of every sealed engine (the page's worker
    calls this once it has loaded it)."""
    b = JsBackend(runner)
    set_backend(b)
    return b
