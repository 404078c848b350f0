"""HTTP routes: thin wrappers over :class:`service.matches.MatchService`."""
