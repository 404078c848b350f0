"""qahwa_wire: the models of the qahwa HTTP API, in one place for the server and its clients.

``service`` publishes them in its OpenAPI document and ``qahwa_client`` is typed with them;
neither imports the other, both import this. See :mod:`qahwa_wire.models`.
"""
