"""Helpers for the fetch tests: real git repositories and a GitHub-shaped HTTP server."""
