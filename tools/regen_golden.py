"""Regenerate ``tests/golden/note_example.md``, the golden verification note of the bundled example.

Run from anywhere in a source checkout::

    python tools/regen_golden.py

It runs exactly this command from the repository root (the test runs the same
command in a copy of the example and compares the note byte for byte)::

    replicate verify fixtures/example/claims.toml --root fixtures/example \\
        --date 2026-01-01 --no-plots --no-fail --out tests/golden/note_example.md --force

The note carries the tool version, so a version bump changes the golden: the
test then fails with :func:`explain`'s message naming both versions and this
command, rather than with a byte diff.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

GOLDEN = "tests/golden/note_example.md"
ARGS = [
    "verify", "fixtures/example/claims.toml", "--root", "fixtures/example",
    "--date", "2026-01-01", "--no-plots", "--no-fail", "--out", GOLDEN, "--force",  # the golden is the repository's
]

COMMAND = "python tools/regen_golden.py"
_TOOL_ROW = re.compile(r"^\| Tool +\| replicate (\S+) +\|$", re.M)


def explain(golden: str, written: str) -> str | None:
    """None when the notes are equal; else what differs and how to regenerate the golden."""
    if golden == written:
        return None
    old, new = _TOOL_ROW.search(golden), _TOOL_ROW.search(written)
    if old and new and old[1] != new[1] and _TOOL_ROW.sub("", golden) == _TOOL_ROW.sub("", written):
        return (f"the golden note was written by replicate {old[1]}, this is replicate {new[1]}; "
                f"nothing else differs. Regenerate it with: {COMMAND}")
    diff = difflib.unified_diff(golden.splitlines(), written.splitlines(), "golden", "written", lineterm="", n=1)
    lines = list(diff)
    shown = "\n".join(lines[:40]) + (f"\n... ({len(lines) - 40} more diff lines)" if len(lines) > 40 else "")
    return f"the verification note differs from {GOLDEN}; if the change is intended, regenerate with: {COMMAND}\n{shown}"


def main() -> int:
    from typer.testing import CliRunner

    from replicate.cli.app import app

    root = Path(__file__).resolve().parents[1]
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
