"""UMBRELA-style judge output parsers (being written)."""

PARSERS: list = []
