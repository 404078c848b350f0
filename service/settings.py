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
    # Operations (docs/deploy.md): limits, timeouts, connections.
    create_rate_per_minute: int = Field(default=600, ge=1)
    rate_per_second_per_ip: int = Field(default=2000, ge=0)  # 0: no per-address limit
    #: requests a second per seat or session token (``Authorization: Bearer``): such a
    #: request counts against its token instead of its address (0: no per-token limit)
    rate_per_second_per_token: int = Field(default=2000, ge=0)
    max_session_draws: int = Field(default=10_000, ge=1)
    max_transcript_bytes: int = Field(default=4 * 1024 * 1024, ge=4096)
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    body_timeout_seconds: float = Field(default=15.0, gt=0)
    max_connections: int = Field(default=10_000, ge=8)  # and at most the file limit - 64
    #: the log's origin line and note key name (default: the database's, or on the first
    #: start ``<host name>/log``)
    log_origin: str | None = None
    #: the log's Ed25519 note key (base64 seed); else ``log_key_file`` beside the signing key
    log_key: str | None = None
    log_key_file: Path | None = None
    #: how often a process re-reads the signing keys (a key staged by ``qahwa keys rotate``)
    key_poll_seconds: float = Field(default=5.0, gt=0)
    #: a new checkpoint at most this often (seconds)
    checkpoint_seconds: float = Field(default=1.0, gt=0)
    #: witnesses, ``;``-separated, each ``name vkey url``
    witnesses: str = ""
    #: how long one call to a witness may take (seconds)
    witness_timeout_seconds: float = Field(default=10.0, gt=0)
    # The built-in lobby, POST /play/tables (service/play.py, docs/play.md).
    #: on (1) or off (0); unset: on only for a request that reached a loopback address
    #: from a loopback address, not through a proxy
    play_lobby: bool | None = None
    #: tables the lobby creates a minute, from every address together
    play_lobby_per_minute: float = Field(default=20.0, gt=0)
    #: house-bot threads the lobby runs at once (its tables' house seats, waiting or playing)
    play_lobby_bots: int = Field(default=32, ge=1)
    #: a table whose people have not all committed by then closes, unlocked and unlogged
    play_lobby_seat_seconds: float = Field(default=300.0, gt=0)

    @property
    def log_key_path(self) -> Path:
        return self.log_key_file or self.signing_key_path.with_name("log-note.key")

    @property
    def origin(self) -> str:
        import socket

        return self.log_origin or f"{socket.gethostname()}/log"

    @property
    def signing_key_path(self) -> Path:
        return self.signing_key_file or self.data_dir / "signing.key"

    @property
    def master_key_path(self) -> Path:
        return self.data_dir / "master.key"

    @property
    def operator_key_path(self) -> Path:
        return self.data_dir / "operator.key"
