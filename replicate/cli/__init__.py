"""The command line: a thin Typer layer over the library.

Each command module turns options into arguments, calls one library function
and renders its result. Errors become ``Error: ...`` and an exit code in one
place (:class:`replicate.cli.base.ReplicateGroup`).
"""
