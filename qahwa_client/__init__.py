"""qahwa_client: a typed Python client for the qahwa HTTP API (sync and async)."""
