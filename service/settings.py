"""Service settings: environment variables with the prefix ``QAHWA_`` (see docs/api.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: the verify page and its assets (served at /verify and /static): the verifier's package
#: data (qahwa_page), so the service serves what ``verify page`` serves
from qahwa_page import STATIC_DIR as STATIC_DIR


class Settings(BaseSettings):
    """Everything the service reads from its environment.

    ``master_key``: base64 of 32 bytes sealing server seeds at rest; when unset it is
    generated once into ``{data_dir}/master.key`` (mode 0600).
    ``signing_key``: base64 of the 32-byte Ed25519 seed (``QAHWA_SIGNING_KEY``); when unset
    the key file ``signing_key_file`` (default ``{data_dir}/signing.key``) is loaded, or
    generated on first start.
    """

    model_config = SettingsConfigDict(env_prefix="QAHWA_", extra="ignore")

    database_url: str = "sqlite:///./data/qahwa.db"
    data_dir: Path = Path("./data")
    master_key: str | None = None
    signing_key: str | None = None
    signing_key_file: Path | None = None
    idle_timeout_seconds: float = Field(default=3600.0, gt=0)
    sweep_interval_seconds: float = Field(default=30.0, gt=0)
    max_body_bytes: int = Field(default=64 * 1024, ge=1024)
    long_poll_max_seconds: float = Field(default=30.0, ge=0)
    run_migrations: bool = True

    @property
    def signing_key_path(self) -> Path:
        return self.signing_key_file or self.data_dir / "signing.key"

    @property
    def master_key_path(self) -> Path:
        return self.data_dir / "master.key"
