"""`python -m verify_cli`: the verify command."""

from .main import app

app()
