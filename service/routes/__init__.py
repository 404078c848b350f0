"""HTTP routes: thin wrappers over :class:`service.matches.MatchService`; each answers with
:func:`service.front.json_response`, and takes its dependencies (the services on
``app.state``, the seat token) from :mod:`service.front`, the request layer."""
