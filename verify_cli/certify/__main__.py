"""``python -m verify_cli.certify`` = ``qahwa-certify``."""

from .cli import console

console()
