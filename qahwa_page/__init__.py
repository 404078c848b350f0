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
#: the page's tag for its log row's script, which :func:`page_html` inlines
MERKLE_TAG = '<script src="/static/merkle.js"></script>'


def page_html() -> bytes:
    """The page as served (``/verify`` of the service and of ``verify page``): verify.html
    with merkle.js inlined in place of its ``<script src>``, so that a copy the player saves
    from the browser (even "HTML only") still has its log row and can check a match's log
    proof from the operator's server (a file:// page loads no /static/ script)."""
    html = PAGE.read_text(encoding="utf-8")
    js = (STATIC_DIR / "merkle.js").read_text(encoding="utf-8")
    if MERKLE_TAG not in html or "</script" in js.lower():
        raise ValueError("verify.html does not load merkle.js as expected")
    return html.replace(MERKLE_TAG, "<script>\n" + js + "</script>", 1).encode("utf-8")


__all__ = ["MERKLE_TAG", "PAGE", "STATIC_DIR", "page_html"]
