"""Start-up stays cheap: the command line imports no scipy, git or matplotlib until a command needs them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support.cachecli import loaded_modules


def test_cli_start_up_imports_no_scipy():
    code = "import sys, replicate.cli.app; print(sorted(m for m in ('scipy', 'scipy.stats', 'git', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_matrix_over_the_example_computes_its_figures_without_importing_scipy_stats(tmp_path):
    # the clustered McNemar p goes through scipy.special; scipy.stats costs about a second to import
    from support.paths import ROOT

    # read at exit (atexit: a read-and-compute command leaves without the interpreter's teardown)
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'\\nSCIPY_STATS={\"scipy.stats\" in sys.modules}\\n'))\n"
        f"sys.argv = ['replicate', 'matrix', '--runs', {str(ROOT / 'fixtures' / 'example' / 'runs.toml')!r},"
        " '-p', 'umbrela-fallback@1', '-f', 'json']\n"
        "runpy.run_module('replicate', run_name='__main__')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert '"pairs"' in p.stdout
    assert p.returncode == 0 and "SCIPY_STATS=False" in p.stderr, p.stderr


# What each command family imports, computing its result (--no-cache), as the console script runs it.
# scipy.special is needed only where an exact McNemar p-value is shown (chain's table, every JSON edge);
# scipy.stats only by the K-trial tests (Fisher, BH) and power plans; numpy by anything that reads runs;
# pydantic (Typer's converter of option values) by none of them (replicate.cli.coerce).
RUNS = ["--runs", "runs.toml", "-p", "umbrela-fallback@1"]
FAMILIES = [
    (["--help"], {"numpy", "scipy", "tabulate", "pydantic"}, set()),
    (["parsers", "list"], {"numpy", "scipy", "pydantic"}, {"tabulate"}),
    (["scorers", "list"], {"numpy", "scipy", "pydantic"}, {"tabulate"}),
    (["readers", "list"], {"scipy", "pydantic"}, {"tabulate"}),
    (["parse", "results/alpha-2024-05_annotations.jsonl", "-p", "umbrela-fallback@1"], {"scipy", "pydantic"}, {"numpy"}),
    (["floor", *RUNS], {"scipy", "pydantic"}, {"numpy"}),
    (["matrix", *RUNS], {"scipy", "pydantic"}, {"numpy"}),  # bootstrap intervals are numpy alone
    (["matrix", *RUNS, "-f", "json"], {"scipy.stats", "pydantic"}, {"scipy.special", "numpy"}),
    (["chain", *RUNS], {"scipy.stats", "pydantic"}, {"scipy.special", "numpy", "tabulate"}),
]


@pytest.mark.parametrize(("args", "absent", "present"), FAMILIES, ids=[" ".join(f[0][:2]) for f in FAMILIES])
def test_each_command_family_imports_only_what_it_needs(example_copy, tmp_path, args, absent, present):
    p, loaded = loaded_modules(example_copy, tmp_path / "cache", "--no-cache", *args)
    assert p.returncode == 0, p.stderr
    assert not loaded & absent, f"{args} imported {sorted(loaded & absent)}"
    assert present <= loaded, f"{args} did not import {sorted(present - loaded)} (is the watch list stale?)"


def test_verify_and_harness_claims_with_their_default_root_import_no_pydantic(example_copy, tmp_path):
    # their --root defaults to Path("."): a default that went to Typer's converter would import pydantic
    from support.synth.lm_eval_logs import write_pair

    a, b = write_pair(example_copy / "lm")
    for args in (["verify", "claims.toml", "--no-plots", "--replicates", "50", "--no-fail"],
                 ["harness-claims", str(a.relative_to(example_copy)), str(b.relative_to(example_copy))]):
        p, loaded = loaded_modules(example_copy, tmp_path / "cache", "--no-cache", *args)
        assert p.returncode == 0, p.stderr
        assert "pydantic" not in loaded, f"{args[0]} imported pydantic"
        assert "numpy" in loaded, "is the watch list stale?"
