"""The cryptography a sealed engine needs to check a deal step (fairness-v3 §3–§7), behind a
small interface so that the engines run where ``rbcl`` does not: in CPython the backend is
:class:`RbclBackend` (the ``sealed`` package, libsodium through ``rbcl``); the verify page
(Pyodide) installs its own with :func:`set_backend` (the JavaScript verifier over
@noble/curves). Nothing here imports ``sealed`` at import time.

Every value is bytes as fairness-v3 encodes it: a point or scalar 32 bytes, a ciphertext
``A || B`` 64 bytes, a deck the concatenation of its ciphertexts. A ``ctx`` is
``(match_id, hand, seat)``. A refused value raises :class:`SealedStepError` naming it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache, reduce
from typing import Any, Protocol

from .errors import IllegalActionError

Ctx = tuple[str, int, int]


class SealedStepError(IllegalActionError):
    """A sealed deal step whose proof, share, opening or key does not verify."""


class SealedBackend(Protocol):
    def verify_key(self, ctx: Ctx, key: bytes, proof: bytes) -> None:
        """§3: the key is a point other than the identity with a valid proof of knowledge."""

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        """§3: the sum of the seats' keys."""

    def starting_deck(self, game: str, items: Sequence[str]) -> bytes:
        """§4: every item as (identity, M(game, code)), in the given order."""

    def verify_shuffle(
        self, ctx: Ctx, hand_key: bytes, deck_in: bytes, deck_out: bytes, proof: bytes
    ) -> None:
        """§5.5: the output deck is the input deck permuted and re-masked under the hand key."""

    def verify_share(self, ctx: Ctx, key: bytes, item: bytes, share: bytes, proof: bytes) -> None:
        """§6: ``share`` is x·A of ``item`` for the x of ``key``, with its proof."""

    def verify_shares(
        self, ctx: Ctx, key: bytes, shares: Sequence[tuple[bytes, bytes, bytes]]
    ) -> None:
        """§6 for a share step: each ``(item, share, proof)`` as :meth:`verify_share`
        checks it (the same refusal for the first that fails)."""

    def opens_to(self, game: str, code: str, item: bytes, shares: Sequence[bytes]) -> bool:
        """§7: B − Σ shares = M(game, code)."""

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        """§3: a revealed secret is canonical and secret·G = key."""

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> list[str]:
        """§10: every item of ``deck`` opened with the sum of ``secrets``, as codes (each
        item of ``items`` once)."""


@contextmanager
def _refused(prefix: str = "") -> Iterator[None]:
    """The ``sealed`` package's refusal as a :class:`SealedStepError` (``prefix`` + why)."""
    import sealed

    try:
        yield
    except sealed.SealedError as exc:
        raise SealedStepError(f"{prefix}{exc}") from None


@lru_cache(maxsize=16)
def decoded_deck(deck: bytes) -> Any:
    """``deck`` (a deck's bytes) as the ``sealed`` package's ciphertexts, each point checked:
    a hand's deck is read again and again (the next shuffle's input, every share of its
    items), so the last few are kept, by their bytes."""
    import sealed

    return tuple(sealed.decode_deck(deck))


@lru_cache(maxsize=512)
def _ciphertext(item: bytes) -> Any:
    import sealed

    return sealed.decode_deck(item, 1)[0]


class RbclBackend:
    """The backend of CPython: the ``sealed`` package (libsodium through ``rbcl``)."""

    def verify_key(self, ctx: Ctx, key: bytes, proof: bytes) -> None:
        import sealed

        with _refused():
            sealed.verify_key(sealed.Context(*ctx), key, sealed.KeyProof.decode(proof))

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        import sealed

        with _refused():
            return sealed.hand_key(list(keys))

    def starting_deck(self, game: str, items: Sequence[str]) -> bytes:
        import sealed

        with _refused():
            return sealed.encode_deck(sealed.starting_deck(game, items))

    def verify_shuffle(
        self, ctx: Ctx, hand_key: bytes, deck_in: bytes, deck_out: bytes, proof: bytes
    ) -> None:
        import sealed

        with _refused(f"shuffle of seat {ctx[2]}: "):
            n = len(deck_in) // 64
            d_in = decoded_deck(deck_in)
            d_out = (
                decoded_deck(deck_out)
                if len(deck_out) == len(deck_in)
                else sealed.decode_deck(deck_out, n)
            )
            pr = sealed.ShuffleProof.decode(proof, n)
            sealed.verify_shuffle(sealed.Context(*ctx), hand_key, d_in, d_out, pr)

    def verify_share(self, ctx: Ctx, key: bytes, item: bytes, share: bytes, proof: bytes) -> None:
        import sealed

        with _refused():
            c = _ciphertext(item)
            sh = sealed.Share(share, sealed.ShareProof.decode(proof))
            sealed.verify_share(sealed.Context(*ctx), key, c, sh)

    def verify_shares(
        self, ctx: Ctx, key: bytes, shares: Sequence[tuple[bytes, bytes, bytes]]
    ) -> None:
        """A share step's shares: their proofs' first equations as one random linear
        combination (``sealed.verify_shares``). A proof that does not decode is refused after
        the shares before it are checked, as one by one."""
        import sealed

        with _refused():
            c = sealed.Context(*ctx)
            parsed: list[tuple[sealed.Ciphertext, sealed.Share]] = []
            for item, share, proof in shares:
                try:
                    parsed.append(
                        (_ciphertext(item), sealed.Share(share, sealed.ShareProof.decode(proof)))
                    )
                except sealed.SealedError:
                    sealed.verify_shares(c, key, parsed)
                    raise
            sealed.verify_shares(c, key, parsed)

    def opens_to(self, game: str, code: str, item: bytes, shares: Sequence[bytes]) -> bool:
        import sealed

        c = _ciphertext(item)
        return sealed.unmask(c, list(shares)) == sealed.item_point(game, code)

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        import sealed

        with _refused():
            sealed.check_revealed(key, secret, seat)

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> list[str]:
        import sealed
        from sealed.group import mul, s_add, sub

        x = reduce(s_add, secrets[1:], secrets[0])
        table = sealed.item_table(game, items)
        out: list[str] = []
        for c in sealed.decode_deck(deck):
            code = table.get(sub(c.B, mul(x, c.A)))
            if code is None:
                raise SealedStepError("the revealed keys do not open every item of the deck")
            out.append(code)
        if sorted(out) != sorted(items):
            raise SealedStepError("the final deck does not hold every item once")
        return out


class StoredSteps:
    """A backend over steps read back from a log that checked every proof before it kept
    the step (the service's own database, :func:`stored_steps`): the proofs of keys,
    shuffles and shares are not checked again. What a step computes or the rules compare is
    still computed by the backend underneath: the hand key, the starting deck, an opening's
    shares against its code, a revealed key against its public key, the whole deck opened."""

    def __init__(self, inner: SealedBackend) -> None:
        self.inner = inner

    def verify_key(self, ctx: Ctx, key: bytes, proof: bytes) -> None:
        return None

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        return self.inner.hand_key(keys)

    def starting_deck(self, game: str, items: Sequence[str]) -> bytes:
        return self.inner.starting_deck(game, items)

    def verify_shuffle(
        self, ctx: Ctx, hand_key: bytes, deck_in: bytes, deck_out: bytes, proof: bytes
    ) -> None:
        return None

    def verify_share(self, ctx: Ctx, key: bytes, item: bytes, share: bytes, proof: bytes) -> None:
        return None

    def verify_shares(
        self, ctx: Ctx, key: bytes, shares: Sequence[tuple[bytes, bytes, bytes]]
    ) -> None:
        return None

    def opens_to(self, game: str, code: str, item: bytes, shares: Sequence[bytes]) -> bool:
        return self.inner.opens_to(game, code, item, shares)

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        self.inner.check_revealed(key, secret, seat)

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> list[str]:
        return self.inner.open_deck(game, items, deck, secrets)


_backend: SealedBackend | None = None
#: set while this context feeds an engine steps its own log verified (:func:`stored_steps`)
_stored: ContextVar[StoredSteps | None] = ContextVar("qahwa_sealed_stored", default=None)


def get_backend() -> SealedBackend:
    """The backend installed by :func:`set_backend`, else :class:`RbclBackend`; inside
    :func:`stored_steps`, that backend without its proof checks."""
    global _backend
    if _backend is None:
        _backend = RbclBackend()
    stored = _stored.get()
    if stored is not None and stored.inner is _backend:
        return stored
    return _backend


@contextmanager
def stored_steps() -> Iterator[None]:
    """In this context (this thread, or this task), the sealed engines take the proofs of
    keys, shuffles and shares as verified: for a server rebuilding a match's state from its
    own log, whose every step was verified once, before it was stored (fairness-v3 §9a; a
    restart, an engine evicted from its cache, or another process's steps on one database).
    Nothing that reads steps from elsewhere (a transcript, the public log) may use it."""
    token = _stored.set(StoredSteps(get_backend()))
    try:
        yield
    finally:
        _stored.reset(token)


def set_backend(backend: SealedBackend | None) -> None:
    """Install the backend every sealed engine uses (None: back to the default)."""
    global _backend
    _backend = backend
