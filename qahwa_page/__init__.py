"""The verify page: its static files, the Python it runs on Pyodide, and the runtime.

One package, shipped in the verifier's own distribution (``qahwa-verify``), that both the
service (``/verify``, ``/static/…``) and ``verify page`` (the player's own install) serve
from, so the two serve the same bytes:

- :data:`STATIC_DIR`: ``verify.html``, ``verify-worker.js``, ``merkle.js`` and, once
  fetched (``make pyodide``) or in a built wheel, the pinned Pyodide runtime in
  ``static/pyodide/``;
- :mod:`qahwa_page.pyodide`: the runtime's pin and fetch, the page's Python sources zipped
  from the installed ``fairness``, ``games`` and ``verify_cli`` (located, never imported),
  and every asset's bytes and headers.

It imports only the standard library: the service may import it (it never imports
``verify_cli``), and so may the verifier.
"""

from __future__ import annotations

from pathlib import Path

#: the verify page and its assets (served at /verify and /static)
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: the page itself
PAGE = STATIC_DIR / "verify.html"

__all__ = ["PAGE", "STATIC_DIR"]
