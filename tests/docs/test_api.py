"""docs/api.md: the worked example runs as written and prints what the page shows; the API is lazy."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import replicate
from replicate.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "fixtures" / "example" / "results"


def _blocks() -> tuple[str, str]:
    m = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", DOC, re.S)
    assert m, "docs/api.md has no python block followed by its output"
    return m[1], m[2]


def test_the_worked_example_prints_what_the_page_shows():
    code, shown = _blocks()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown


def test_the_example_agrees_with_the_command_line():
    files = [str(EXAMPLE / "alpha-2024-05_annotations.jsonl"), str(EXAMPLE / "alpha-2024-08_annotations.jsonl")]
    r = CliRunner().invoke(app, ["compare", *files, "--parser", "umbrela-fallback@1", "-f", "json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    old, new = replicate.load_runs(replicate.runs_from_files(files)).labelled("umbrela-fallback@1")
    lib = replicate.compare(old, new).to_json()
    assert cli["cells"] == lib["cells"] and cli["cells"]["only_old"] == 9
    for key in ("n", "regression_rate", "backward_rate", "change_rate", "changed", "independence_ratio"):
        assert cli[key] == lib[key], key


def test_every_public_name_resolves_to_the_object_in_its_module():
    for name, (module, attr) in replicate._EXPORTS.items():
        obj = getattr(replicate, name)
        assert obj is getattr(__import__(module, fromlist=[attr]), attr), name
    assert set(replicate.__all__) == {"__version__", *replicate._EXPORTS}
    assert set(replicate.__all__) <= set(dir(replicate))
    documented = set(re.findall(r"^\| (.+?) \| .+ \| `replicate\.", DOC, re.M))
    names = {n.strip("` ") for row in documented for n in row.split(",")}
    assert names == set(replicate._EXPORTS), "docs/api.md's table and replicate.__all__ differ"


def test_import_replicate_is_lazy():
    code = "import sys, replicate; print(sorted(m for m in ('numpy', 'scipy', 'git', 'requests') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[]\n"
    code = "import replicate; replicate.nope"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "module 'replicate' has no attribute 'nope'" in out.stderr
