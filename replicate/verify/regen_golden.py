"""Regenerate ``tests/golden/note_example.md``, the golden verification note of the bundled example.

Run from anywhere in a source checkout::

    python -m replicate.verify.regen_golden

It runs exactly this command from the repository root (the test runs the same
command in a copy of the example and compares the note byte for byte)::

    replicate verify fixtures/example/claims.toml --root fixtures/example \\
        --date 2026-01-01 --no-plots --no-fail --out tests/golden/note_example.md
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

GOLDEN = "tests/golden/note_example.md"
ARGS = [
    "verify", "fixtures/example/claims.toml", "--root", "fixtures/example",
    "--date", "2026-01-01", "--no-plots", "--no-fail", "--out", GOLDEN,
]


def main() -> int:
    from typer.testing import CliRunner

    from replicate.cli.app import app

    root = Path(__file__).resolve().parents[2]
    if not (root / "fixtures" / "example" / "claims.toml").is_file():
        print(f"not a source checkout (no fixtures/example/claims.toml under {root})", file=sys.stderr)
        return 2
    os.chdir(root)
    (root / GOLDEN).parent.mkdir(parents=True, exist_ok=True)
    result = CliRunner().invoke(app, ARGS)
    if result.exit_code != 0:
        print(result.output, file=sys.stderr)
        return result.exit_code
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
