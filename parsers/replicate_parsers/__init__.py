"""Built-in plugins of replicate (import name ``replicate_parsers``).

They are registered through the same entry-point groups that third-party
plugins use (see pyproject.toml): ``replicate.parsers`` for judge-output
parsers, ``replicate.scorers`` for K-trial response scorers.
"""
