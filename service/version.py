"""The one version of this server and the protocols it serves.

``VERSION`` is the installed ``qahwa`` distribution's version (pyproject.toml, the one place
it is written); the verifier it depends on (``qahwa-verify``) carries the same one, pinned
exactly. OpenAPI's ``info.version``, the front page, ``qahwa --version``, the
``qahwa_build_info`` metric and the ``Qahwa-Version`` header of ``/v1/log`` all say it.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from fairness import PROTOCOLS as _PROTOCOLS


def _version() -> str:
    try:
        return version("qahwa")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout never installed
        return "0+unknown"


VERSION = _version()
#: the protocols this server serves: new matches are qahwa-fair/2; qahwa-fair/1 matches made
#: before keep being served and verified
PROTOCOLS: tuple[str, ...] = tuple(_PROTOCOLS)
