"""Small helpers shared by the test modules."""

from __future__ import annotations

from hypothesis import settings


def examples(n: int) -> int:
    """``n`` hypothesis examples under the default profile, scaled with the loaded profile's
    ``max_examples`` (``QAHWA_HYPOTHESIS_PROFILE=thorough`` gives 5n): a fixed
    ``max_examples`` in ``@settings`` would otherwise override the profile."""
    return max(n, n * settings().max_examples // 100)
