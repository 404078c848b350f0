"""The verify page: its static files, the Python it runs on Pyodide, and the runtime.

One package, shipped in the verifier's own distribution (``qahwa-verify``), that both the
service (``/verify``, ``/static/…``) and ``verify page`` (the player's own install) serve
from, so the two serve the same bytes:

- :data:`STATIC_DIR`: ``verify.html`` and its scripts (``verify.js``, ``merkle.js``,
  ``verify-worker.js``, ``sealed-verify.js``: bundles of clients/ts, ``make verify-js``) and, once
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
#: the page's tag for its checks (a bundle of clients/ts/page/verify.ts, ``make verify-js``),
#: which :func:`page_html` inlines; relative, so that verify.html opened from its folder
#: (file://) loads it too
VERIFY_TAG = '<script src="verify.js"></script>'


def page_html() -> bytes:
    """The page as served (``/verify`` of the service and of ``verify page``): verify.html
    with merkle.js and verify.js inlined in place of their ``<script src>``, so that a copy
    the player saves from the browser (even "HTML only") still checks a match and has its log
    row (a file:// page loads no /static/ script)."""
    html = PAGE.read_text(encoding="utf-8")
    for tag, name in ((MERKLE_TAG, "merkle.js"), (VERIFY_TAG, "verify.js")):
        js = (STATIC_DIR / name).read_text(encoding="utf-8")
        if tag not in html or "</script" in js.lower():
            raise ValueError(f"verify.html does not load {name} as expected")
        html = html.replace(tag, "<script>\n" + js + "\n</script>", 1)
    return html.encode("utf-8")
