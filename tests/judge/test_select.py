"""Run specs (files, runs.toml), the bundled example release and its generator."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.errors import BadInput, UsageError
from replicate.examples.judge_release import write_example
from replicate.judge.api import load_runs
from replicate.judge.select import RunSpec, run_name, runs_from_files, runs_from_table, runs_from_toml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"


def test_run_names_from_files():
    assert run_name("results/gpt-4o_annotations.jsonl") == "gpt-4o"
    assert run_name("x/run.jsonl.gz") == "run"
    assert run_name("x/_annotations.jsonl") == "_annotations"
    specs = runs_from_files(["results/m.jsonl", "results_2020/m_annotations.jsonl", "results/n.jsonl"])
    assert [s.name for s in specs] == ["results/m", "results_2020/m", "n"]
    specs = runs_from_files(["a/m.jsonl", "a/m_annotations.jsonl"])
    assert [s.name for s in specs] == ["a/m.jsonl", "a/m_annotations.jsonl"]
    assert specs[0].paths == (Path("a/m.jsonl"),)
    with pytest.raises(UsageError, match="given twice"):
        runs_from_files(["a/m.jsonl", "a/m.jsonl"])


def test_runs_from_table_and_errors(tmp_path):
    specs = runs_from_table({"v1": ["a.jsonl", "b.jsonl"], "v2": "c.jsonl"}, root=tmp_path, where="t.toml")
    assert specs == [RunSpec("v1", (tmp_path / "a.jsonl", tmp_path / "b.jsonl")), RunSpec("v2", (tmp_path / "c.jsonl",))]
    with pytest.raises(BadInput, match=r"t.toml: run 'v1': expected a path or a non-empty list of paths, got \[\]"):
        runs_from_table({"v1": []}, root=tmp_path, where="t.toml")
    with pytest.raises(BadInput, match=r"t.toml: run 'v1': expected a path or a non-empty list of paths, got 3"):
        runs_from_table({"v1": 3}, root=tmp_path, where="t.toml")
    with pytest.raises(BadInput, match=r"t.toml: \[runs\] lists no runs"):
        runs_from_table({}, root=tmp_path, where="t.toml")
    with pytest.raises(BadInput, match=r"t.toml: run 'v1' lists a file twice"):
        runs_from_table({"v1": ["a", "a"]}, root=tmp_path, where="t.toml")


def test_runs_from_toml_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[runs\n")
    with pytest.raises(BadInput, match=r"bad.toml:1: not valid TOML: Expected"):
        runs_from_toml(bad)
    none = tmp_path / "none.toml"
    none.write_text("[other]\nx = 1\n")
    with pytest.raises(BadInput, match=r"none.toml: no \[runs\] table"):
        runs_from_toml(none)
    with pytest.raises(BadInput, match=r"missing.toml: runs file not found"):
        runs_from_toml(tmp_path / "missing.toml")


def test_example_runs_toml_lists_the_version_line():
    specs = runs_from_toml(EXAMPLE / "runs.toml")
    assert [s.name for s in specs] == ["alpha-2024-05", "alpha-2024-08", "alpha-2025-01", "alpha-2025-04"]
    assert all(len(s.paths) == 2 and all(p.is_file() for p in s.paths) for s in specs)


def test_example_release_is_small_and_has_the_odd_parts():
    total = sum(p.stat().st_size for p in EXAMPLE.rglob("*") if p.is_file())
    assert total < 1_000_000
    loaded = load_runs(runs_from_toml(EXAMPLE / "runs.toml"))
    files = [f for r in loaded.runs for f in r.files]
    assert {f.output_field for f in files} == {"model_output", "gemini_output"}
    assert sum(f.rewritten for f in files) == 2
    assert any(f.thoughts for f in files)
    assert {len(r) for r in loaded.runs} == {288}
    outputs = {o for r in loaded.runs for o in r.outputs}
    assert "" in outputs and "Final score: 2.5" in outputs
    assert any(o.startswith("O: ##final score:") for o in outputs)
    assert any(o.startswith("##M:") and "final" not in o for o in outputs)


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            # gzip bytes depend on the zlib build; compare what they hold
            out[p.relative_to(root).as_posix()] = gzip.decompress(data) if p.suffix == ".gz" else data
    return out


def test_fixture_files_are_exactly_what_the_script_generates(tmp_path):
    out = tmp_path / "example"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "make_example.py"), str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    generated, committed = _tree(out), _tree(EXAMPLE)
    assert generated == {k: committed.get(k) for k in generated}
    # no stale generated-looking file is left in the committed folder
    ours = {k for k in committed if k.split("/")[0] in {"results", "results_2020", "exam", "runs.toml"}}
    assert ours == set(generated)


def test_write_example_refuses_to_replace_a_foreign_directory(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="refusing to replace it"):
        write_example(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


SHAPES = {
    "final score": r"^##final score: [0-3]$",
    "M/T/O then final": r"^M: [0-3]  \nT: [0-3]  \nO: [0-3]  \n##final score: [0-3]$",
    "M/T/O, no final": r"^##M: [0-3]  \n##T: [0-3]  \n##O: [0-3]$",
    "bare digit": r"^[0-3]$",
    "digit: digit": r"^[0-3]: [0-3]$",
    "glued final": r"^[0-3]final score: [0-3]$",
    "spaced final": r"^[0-3] final score: [0-3]$",
    "three lines": r"^[0-3]\n[0-3]\n[0-3]$",
    "reasoning, Final score": r"\.\n\nFinal score: [0-3]$",
    "reasoning, O:": r"\.\n\nO: [0-3]$",
    "reasoning, Answer:": r"\.\nAnswer: [0-3]$",
    "bold": r"^\*\*Final score: [0-3]\*\*$",
    "fractional": r"^Final score: 2\.5$",
    "several finals": r"^##final score: [0-3]\n##final score: [0-3]\n##final score: [0-3]$",
    "O: then final": r"^O: ##final score: [0-3]$",
    "empty": r"^$",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_example_release_has_every_odd_output_shape(shape):
    import re

    loaded = load_runs(runs_from_toml(EXAMPLE / "runs.toml"))
    outputs = {o for r in loaded.runs for o in r.outputs}
    assert any(re.search(SHAPES[shape], o) for o in outputs), shape
