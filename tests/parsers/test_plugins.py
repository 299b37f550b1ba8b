"""Plugin discovery end to end: a real installed package, a real `python -m replicate` process.

The example package in docs/examples/replicate-parser-example is installed into
a temporary --target directory (pip, no network, no build isolation) and found
through its entry point next to the built-ins. A second, deliberately broken
plugin must be reported without breaking anything else.

pip can only build the example when the environment's setuptools can build
wheels (setuptools >= 70.1, or the `wheel` package). Without that the example is
installed by writing the files pip would write (the package and a dist-info with
the entry points read from the example's own pyproject.toml), and the pip test
is skipped with that reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.plugins import install_example, write_dist

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "replicate-parser-example"




@pytest.fixture(scope="module")
def example_site(tmp_path_factory) -> tuple[Path, str]:
    target = tmp_path_factory.mktemp("site")
    how = install_example(EXAMPLE, target, tmp_path_factory.mktemp("build"))
    return target, how


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory) -> Path:
    """A plugin whose module raises on import, installed the way an installer would."""
    target = tmp_path_factory.mktemp("broken")
    (target / "replicate_broken_example.py").write_text('raise RuntimeError("broken on purpose")\n')
    write_dist(
        target,
        "replicate-broken-example",
        "0.1",
        {"replicate.parsers": {"broken": "replicate_broken_example:PARSERS"}},
    )
    return target


def _replicate(*args: str, path: list[Path]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    return subprocess.run(
        [sys.executable, "-m", "replicate", *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def test_example_plugin_is_listed_next_to_the_builtins(example_site):
    target, _ = example_site
    assert (target / "replicate_parser_example" / "__init__.py").exists()
    run = _replicate("parsers", "list", "--format", "json", path=[target])
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    origins = {p["name"]: p["origin"] for p in data["parsers"]}
    assert origins["answer-line@1"] == "replicate-parser-example"
    for name in ("umbrela-strict@1", "umbrela-fallback@1", "umbrela-checked@1"):
        assert origins[name] == "replicate-audit"
    assert data["broken"] == []


def test_example_plugin_parses_and_shows_its_rules(example_site):
    target, _ = example_site
    run = _replicate("parsers", "show", "answer-line@1", path=[target])
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("answer-line@1\nGrade 0-3 from the last line that reads 'Answer: N'.\n")
    assert "origin: replicate-parser-example" in run.stdout
    assert "`Answer: 4`" in run.stdout
    # and the parser itself, loaded the way the registry loads it
    code = (
        "from replicate.parsing import PARSERS; p = PARSERS.get('answer-line@1');"
        "print([p(t) for t in ['Answer: 2', 'x\\nanswer:3\\n', 'Answer: 4', 'Answer: 2.5', 'The answer: 2']])"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[2, 3, None, None, None]"


def test_example_installs_with_pip(example_site):
    _, how = example_site
    if how != "pip":
        pytest.skip("this Python's setuptools cannot build wheels (needs setuptools>=70.1 or 'wheel'); "
                    "the example was installed by writing its dist-info instead")
    assert how == "pip"


def test_broken_plugin_is_reported_and_harmless(example_site, broken_site):
    target, _ = example_site
    run = _replicate("parsers", "list", "--format", "json", path=[target, broken_site])
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["broken"] == [
        {
            "entry_point": "broken",
            "value": "replicate_broken_example:PARSERS",
            "distribution": "replicate-broken-example",
            "error": "RuntimeError: broken on purpose",
        }
    ]
    assert "answer-line@1" in {p["name"] for p in data["parsers"]}

    table = _replicate("parsers", "list", path=[broken_site])
    assert table.returncode == 0
    assert "\nPlugins that failed to load:\n\n" in table.stdout
    assert "RuntimeError: broken on purpose" in table.stdout

    clean = CliRunner().invoke(app, ["parsers", "show", "umbrela-strict@1"])  # no broken plugin: in this interpreter
    show = _replicate("parsers", "show", "umbrela-strict@1", path=[broken_site])
    assert show.returncode == 0, show.stderr
    assert show.stdout == clean.stdout

    # an unknown name still says that plugins failed to load
    unknown = _replicate("parsers", "show", "answer-line@1", path=[broken_site])
    assert unknown.returncode == 2
    assert "1 plugin(s) failed to load (see 'replicate parsers list')" in unknown.stderr
