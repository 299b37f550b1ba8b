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
from replicate.judge.uncertainty import Uncertainty
from replicate.output import dumps_json

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


def _cli_json(*args: str) -> dict:
    r = CliRunner().invoke(app, ["compare", *args, "-f", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_library_gives_the_commands_json():
    # same call, same defaults: the whole document is equal, not only the figures picked out here
    files = [str(EXAMPLE / "alpha-2024-05_annotations.jsonl"), str(EXAMPLE / "alpha-2024-08_annotations.jsonl")]
    cli = _cli_json(*files, "--parser", "umbrela-fallback@1")
    loaded = replicate.load_runs(replicate.runs_from_files(files))
    old, new = loaded.labelled("umbrela-fallback@1")
    cmp = replicate.compare(old, new)
    lib = json.loads(dumps_json(loaded.report(cmp)))
    assert cli == lib
    assert cli["cells"]["only_old"] == 9 and cli["uncertainty"]["replicates"] == 1000
    # the comparison itself carries every figure; the load adds only its own account
    figures = json.loads(dumps_json(cmp))
    assert set(cli) - set(figures) == {"label_cache", "out_of_scale"}
    assert figures["warnings"] == cli["warnings"]  # the load's warnings travel with the runs it labelled
    for key in ("ci", "independence_baselines", "mcnemar_clustered", "small_sample", "uncertainty", "agreement"):
        assert figures[key] == cli[key], key


def test_the_comparisons_json_carries_the_warnings_the_commands_does(tmp_path):
    # a blank line is skipped with a warning: compare(...).to_json() says so, as the command's JSON does
    files = []
    for name in ("alpha-2024-05", "alpha-2024-08"):
        lines = (EXAMPLE / f"{name}_annotations.jsonl").read_text(encoding="utf-8").splitlines()
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([lines[0], "", *lines[1:]]) + "\n", encoding="utf-8")
        files.append(str(path))
    cli = _cli_json(*files, "--parser", "umbrela-fallback@1", "--replicates", "50")
    loaded = replicate.load_runs(replicate.runs_from_files(files))
    old, new = loaded.labelled("umbrela-fallback@1")
    cmp = replicate.compare(old, new, uncertainty=Uncertainty(replicates=50, key_fields=loaded.key_names))
    figures = json.loads(dumps_json(cmp))
    assert figures["warnings"]["count"] == 2 and figures["warnings"] == cli["warnings"]
    assert [w["line"] for w in figures["warnings"]["first"]] == [2, 2]


def test_the_library_takes_the_commands_settings():
    files = [str(EXAMPLE / "alpha-2024-05_annotations.jsonl"), str(EXAMPLE / "alpha-2024-08_annotations.jsonl")]
    cli = _cli_json(*files, "-p", "umbrela-strict@1", "--unparsed", "wrong", "--replicates", "200", "--seed", "7",
                    "--cluster", "item", "--min-items", "500", "--jobs", "2")
    loaded = replicate.load_runs(replicate.runs_from_files(files), jobs=2)
    old, new = loaded.labelled("umbrela-strict@1")
    settings = Uncertainty(replicates=200, seed=7, cluster="item", key_fields=loaded.key_names, min_items=500)
    lib = json.loads(dumps_json(loaded.report(replicate.compare(old, new, policy="wrong", uncertainty=settings))))
    assert cli == lib and cli["small_sample"] is True and cli["uncertainty"]["replicates"] == 200


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
