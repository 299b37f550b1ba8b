"""The ``replicate`` console script: the result cache's fast path, then the Typer application.

A command run again over unchanged inputs is answered from the result cache
(:mod:`replicate.cli.resultcache`) before typer, numpy or any command module
is imported.
"""

from __future__ import annotations

import sys


def _app() -> None:
    from replicate.cli.app import main

    main()


def main() -> None:
    from replicate.cli.resultcache import run

    sys.exit(run(sys.argv[1:], _app))
