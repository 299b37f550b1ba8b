"""Start-up stays cheap: the command line imports no scipy, git or matplotlib until a command needs them."""

from __future__ import annotations

import subprocess
import sys


def test_cli_start_up_imports_no_scipy():
    code = "import sys, replicate.cli.app; print(sorted(m for m in ('scipy', 'scipy.stats', 'git', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
