"""Rewrite the output of every `$ replicate ...` console block of the docs tests/docs/test_judge.py checks.

Run after a change that alters what those commands print, then read the diff: the docs must show
real output (tests/docs/test_judge.py re-runs every block and compares). Blocks that read
../shared/data are left as they are when it is absent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from docs.test_judge import BLOCK, DOCS, run_shown  # noqa: E402


def main() -> None:
    os.chdir(ROOT)
    shared = (ROOT.parent / "shared" / "data").is_dir()
    for path in DOCS:
        text = path.read_text(encoding="utf-8")

        def again(m):
            command = m.group(1)
            if "../shared/" in command and not shared:
                return m.group(0)
            return f"```console\n$ {command}\n{run_shown(command)}```"

        new = BLOCK.sub(again, text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
