"""Run selection for floor/matrix: files, RUNS.toml names ([runs] and [repeats]), --edge/--main values."""

from __future__ import annotations

import pytest

from replicate.errors import BadInput, UsageError
from replicate.judge.select import select_runs


@pytest.fixture
def release(tmp_path):
    for name in ("a", "b", "c", "d"):
        (tmp_path / f"{name}.jsonl").write_text("")
    (tmp_path / "runs.toml").write_text('[runs]\nA = ["a.jsonl"]\nB = ["b.jsonl", "c.jsonl"]\n\n[repeats]\nA2 = "d.jsonl"\n')
    return tmp_path


def test_names_from_both_tables_and_files(release):
    sel = select_runs(["A", "A2"], release / "runs.toml", extra=["B", str(release / "c.jsonl")])
    assert sel.main == ("A", "A2") and sel.extra == ("B", "c")
    assert [s.name for s in sel.specs] == ["A", "A2", "B", "c"]
    assert sel.specs[2].paths == (release / "b.jsonl", release / "c.jsonl")


def test_no_run_arguments_means_every_run_but_the_extras(release):
    sel = select_runs([], release / "runs.toml", extra=["B"])
    assert sel.main == ("A",) and sel.extra == ("B",)


def test_files_only_and_repeated_roles_load_once(release):
    a = str(release / "a.jsonl")
    sel = select_runs([a, str(release / "b.jsonl")], None, extra=[a])
    assert sel.main == ("a", "b") and sel.extra == ("a",)
    assert [s.name for s in sel.specs] == ["a", "b"]


def test_errors_name_the_problem(release):
    with pytest.raises(UsageError, match="no runs given: pass RUN files"):
        select_runs([], None)
    with pytest.raises(UsageError, match=r"run 'Z' is neither a run named in runs_toml nor an existing file or run directory; runs in .*: A, B, A2"):
        select_runs(["Z"], release / "runs.toml")
    (release / "A.jsonl").write_text("")
    with pytest.raises(UsageError, match="a file and a run in runs_toml are both named A; rename one"):
        select_runs(["B", str(release / "A.jsonl")], release / "runs.toml")
    (release / "clash.toml").write_text('[runs]\nA = ["a.jsonl"]\n[repeats]\nA = ["d.jsonl"]\n')
    with pytest.raises(BadInput, match=r"clash.toml: \[runs\] and \[repeats\] both name A"):
        select_runs([], release / "clash.toml")
    (release / "none.toml").write_text('[repeats]\nA = ["d.jsonl"]\n')
    with pytest.raises(BadInput, match=r"no \[runs\] table"):
        select_runs([], release / "none.toml")
