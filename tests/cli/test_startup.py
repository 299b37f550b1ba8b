"""Start-up stays cheap: the command line imports no scipy, git or matplotlib until a command needs them."""

from __future__ import annotations

import subprocess
import sys


def test_cli_start_up_imports_no_scipy():
    code = "import sys, replicate.cli.app; print(sorted(m for m in ('scipy', 'scipy.stats', 'git', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_matrix_over_the_example_computes_its_figures_without_importing_scipy_stats(tmp_path):
    # the clustered McNemar p goes through scipy.special; scipy.stats costs about a second to import
    from support.paths import ROOT

    code = (
        "import runpy, sys\n"
        f"sys.argv = ['replicate', 'matrix', '--runs', {str(ROOT / 'fixtures' / 'example' / 'runs.toml')!r},"
        " '-p', 'umbrela-fallback@1', '-f', 'json']\n"
        "try:\n    runpy.run_module('replicate', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "sys.stderr.write(f'\\nEXIT={code} SCIPY_STATS={\"scipy.stats\" in sys.modules}\\n')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert '"pairs"' in p.stdout
    assert "EXIT=0 SCIPY_STATS=False" in p.stderr
