"""Built-in K-trial response scorers (being written)."""

SCORERS: list = []
