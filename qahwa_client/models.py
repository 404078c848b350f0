"""The wire models, as :mod:`qahwa_wire.models` defines them (kept importable from here)."""

from qahwa_wire.models import *  # noqa: F403
