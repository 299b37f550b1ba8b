"""`replicate verify` end to end: the golden note, exit codes, JSON, fetched-release provenance, plots."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.verify.plots import NO_MATPLOTLIB
from support.tools import load_tool

regen_golden = load_tool("regen_golden")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
GOLDEN = ROOT / regen_golden.GOLDEN

needs_example = pytest.mark.skipif(
    not (EXAMPLE / "results").is_dir(), reason="the bundled example release (fixtures/example) is not present"
)


def run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def example_copy(tmp_path, monkeypatch):
    """A working directory laid out like the repository: fixtures/example and tests/golden."""
    shutil.copytree(EXAMPLE, tmp_path / "fixtures" / "example")
    (tmp_path / "tests" / "golden").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@needs_example
def test_golden_note_byte_for_byte(example_copy):
    result = run(*regen_golden.ARGS)
    assert result.exit_code == 0, result.output
    written = (example_copy / regen_golden.GOLDEN).read_bytes()
    if written != GOLDEN.read_bytes():
        pytest.fail(regen_golden.explain(GOLDEN.read_text(encoding="utf-8"), written.decode("utf-8"))
                    or "the notes differ in bytes but not in text (line endings?)", pytrace=False)


def test_golden_mismatch_explains_a_version_bump_and_how_to_regenerate():
    golden = GOLDEN.read_text(encoding="utf-8")
    assert regen_golden.explain(golden, golden) is None
    row = next(line for line in golden.splitlines() if line.startswith("| Tool "))
    version = row.split("replicate ")[1].split()[0]
    bumped_row = row.replace(f"replicate {version} ", "replicate 9.9.9" + " " * (len(version) - 4), 1)
    assert len(bumped_row) == len(row)
    bumped = golden.replace(row, bumped_row)
    assert regen_golden.explain(golden, bumped) == (
        f"the golden note was written by replicate {version}, this is replicate 9.9.9; nothing else differs. "
        "Regenerate it with: python tools/regen_golden.py"
    )
    # any other change: a short diff and the same command
    other = regen_golden.explain(golden, bumped.replace("## Summary", "## Overview"))
    assert other.startswith("the verification note differs from tests/golden/note_example.md; if the change is "
                            "intended, regenerate with: python tools/regen_golden.py\n--- golden\n")
    assert "-## Summary\n+## Overview" in other


@needs_example
def test_exit_1_when_a_claim_mismatches_under_the_first_parser(example_copy):
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example",
                 "--parser", "umbrela-fallback@1", "--parser", "umbrela-strict@1")
    assert result.exit_code == 1
    reader_line, error = result.stderr.splitlines()
    assert reader_line.startswith("reader: judge-jsonl@1 (chosen by content; --reader to choose) for fixtures/example/")
    assert error == "Error: 2 claim(s) mismatch: t1-mae-2025-04, s4-change-2025"
    assert result.stdout.splitlines()[-1] == (
        "14 of 16 claims match under umbrela-fallback@1; 5 of 16 under umbrela-strict@1"
    )
    # the same claims with strict first fail on more of them
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example",
                 "--parser", "umbrela-strict@1", "--parser", "umbrela-fallback@1")
    assert result.exit_code == 1 and result.stderr.splitlines()[-1].startswith("Error: 11 claim(s) mismatch:")
    # --no-fail: 0
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example", "--no-fail")
    assert result.exit_code == 0, result.output


@needs_example
def test_exit_0_when_every_claim_matches(example_copy):
    claims = (example_copy / "fixtures/example/claims.toml").read_text()
    keep = "\n[[claims]]".join(
        part for part in claims.split("\n[[claims]]") if "t1-mae-2025-04" not in part and "s4-change-2025" not in part
    )
    (example_copy / "ok.toml").write_text(keep)
    result = run("verify", "ok.toml", "--root", "fixtures/example", "--parser", "umbrela-fallback@1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "14 of 14 claims match under umbrela-fallback@1"
    assert result.stderr.endswith(" and 7 more\n") and result.stderr.count("\n") == 1  # the reader chosen, only
    result = run("verify", "ok.toml", "--root", "fixtures/example", "-p", "umbrela-fallback@1", "--reader", "judge-jsonl@1")
    assert result.exit_code == 0 and result.stderr == ""


@needs_example
def test_json_output(example_copy):
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example", "--format", "json",
                 "--parser", "umbrela-fallback@1", "--parser", "umbrela-checked@1", "--date", "2026-01-01")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["summary"] == {
        "umbrela-fallback@1": {"match": 14, "mismatch": 2, "not_computable": 0},
        "umbrela-checked@1": {"match": 2, "mismatch": 14, "not_computable": 0},
    }
    reg = next(c for c in out["claims"] if c["id"] == "s4-regression")
    assert reg["metric"] == "regression_rate" and reg["printed"] == "14.3"
    assert reg["computed"]["umbrela-fallback@1"] == 39 / 273  # rates as fractions, from the cells
    assert reg["verdict"] == {"umbrela-fallback@1": "match", "umbrela-checked@1": "mismatch"}
    assert reg["interval"] == "[14.25, 14.35]"
    edge = next(e for e in out["edges"] if e["parser"] == "umbrela-fallback@1"
                and (e["old"], e["new"]) == ("alpha-2024-08", "alpha-2025-01"))
    assert edge["cells"] == {"both": 101, "only_old": 39, "only_new": 36, "neither": 97}
    assert out["date"] == "2026-01-01" and out["tool"]["name"] == "replicate"
    assert [p["name"] for p in out["parsers"]] == ["umbrela-fallback@1", "umbrela-checked@1"]
    assert len(out["sources"]) == 10 and all(len(s["sha256"]) == 64 for s in out["sources"])
    assert {f["kind"] for f in out["flags"]} >= {"unparsed", "rewritten", "impossible"}


@needs_example
def test_markdown_to_stdout_is_the_note(example_copy):
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example", "-f", "markdown",
                 "--date", "2026-01-01", "--no-fail")
    assert result.exit_code == 0
    assert result.stdout.startswith("# Verification note: Alpha judge upgrades (SYNTHETIC example)\n")
    assert "Figures are drawn beside the note when it is written with `--out`." in result.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--parser", "umbrela-nope@1"], "Error: unknown parser 'umbrela-nope@1'"),
        (["--date", "2026-13-01"], "Error: --date must be a calendar date YYYY-MM-DD, got '2026-13-01'"),
        (["--root", "no-such-dir"], "Error: --root 'no-such-dir' is not a directory"),
    ],
)
def test_exit_2_for_bad_usage(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    Path("c.toml").write_text('[runs]\na = ["a.jsonl"]\n[[claims]]\nid = "x"\nmetric = "n"\nrun = "a"\n'
                              'value = "1"\nunit = "count"\n')
    result = run("verify", "c.toml", "--root", "data", *args, "--no-fail")
    assert result.exit_code == 2
    assert result.stderr.startswith(message)


def test_exit_2_for_bad_claims_and_missing_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("c.toml").write_text(
        '[runs]\na = ["a.jsonl", "sub/b.jsonl"]\n'
        '[[claims]]\nid = "x"\nmetric = "nn"\nrun = "a"\nvalue = "1"\nunit = "count"\n'
        '[[claims]]\nid = "y"\nmetric = "n"\nrun = "b"\nvalue = 1\nunit = "count"\n'
    )
    result = run("verify", "c.toml", "--no-fail")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Error: c.toml: 3 problems in the claims file:"
    assert lines[1].startswith("       claim 'x': unknown metric 'nn'")
    assert lines[2] == '       claim \'y\': value must be a string as printed (write value = "1"), got int 1'
    assert lines[3] == "       claim 'y': unknown run 'b' in run; runs: a"
    Path("c.toml").write_text('[runs]\na = ["a.jsonl", "sub/b.jsonl"]\n[[claims]]\nid = "x"\nmetric = "n"\n'
                              'run = "a"\nvalue = "1"\nunit = "count"\n')
    result = run("verify", "c.toml", "--no-fail")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: c.toml: 2 file(s) named in [runs] not found under .:\n"
        "       a: a.jsonl\n"
        "       a: sub/b.jsonl\n"
    )


# -- provenance from a fetched release ------------------------------------------------------
COMMIT = "d72d25d" + "0" * 33
GOLD = [0, 1, 2, 3, 1, 2, 0, 3]
OLD = ["final score: 0", "final score: 1", "final score: 1", "final score: 3",
       "final score: 1", "final score: 0", "final score: 0", "final score: 2"]
NEW = ["final score: 0", "final score: 2", "final score: 2", "final score: 3",
       "final score: 0", "final score: 2", "final score: 1", "nothing"]


def _jsonl(outputs):
    return "".join(
        json.dumps({"query_id": "1", "corpus_id": str(i), "original_qrel_score": float(g), "model_output": o}) + "\n"
        for i, (g, o) in enumerate(zip(GOLD, outputs))
    ).encode()


@pytest.fixture
def fetched(tmp_path, monkeypatch):
    rel = tmp_path / "release"
    (rel / "results").mkdir(parents=True)
    files = {"results/old_annotations.jsonl": _jsonl(OLD), "results/new_annotations.jsonl": _jsonl(NEW)}
    for path, data in files.items():
        (rel / path).write_bytes(data)
    manifest = {
        "schema_version": 1, "source": "ielab/judge-backbone-evolution", "commit": COMMIT, "via": "http",
        "fetched_at": "2026-01-01T00:00:00Z",
        "files": [{"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for p, d in files.items()],
        "repository": {"licence": None, "default_branch": "main"},
    }
    (rel / "replicate-manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "claims.toml").write_text("""\
[study]
title = "Backbone study"
reference = "arXiv:2610.09820"
release = "ielab/judge-backbone-evolution"
commit = "d72d25d"

[runs]
old = ["results/old_annotations.jsonl"]
new = ["results/new_annotations.jsonl"]

[[claims]]
id = "reg"
metric = "regression_rate"
old = "old"
new = "new"
value = "42.9"
unit = "percent"
""")
    monkeypatch.chdir(tmp_path)
    return rel, files


def test_note_carries_release_provenance_and_licence_status(fetched):
    rel, files = fetched
    result = run("verify", "claims.toml", "--root", "release", "--parser", "umbrela-fallback@1",
                 "--out", "note.md", "--no-plots", "--date", "2026-01-01")
    # old right on items 0,1,3,4,6, new on 0,2,3,5 (7 unparsed): 3 regressions of 7 = 42.86%
    assert result.exit_code == 0, result.output
    note = Path("note.md").read_text()
    assert "| Data        | ielab/judge-backbone-evolution at commit `" + COMMIT + "`, fetched into `release` |" in note
    assert "| Licence     | no licence: reuse of the data is not licensed" in note
    for path, data in files.items():
        assert f"| `{path}` " in note and hashlib.sha256(data).hexdigest() in note
    assert note.count("matches manifest") == 2
    assert (
        f"replicate fetch ielab/judge-backbone-evolution --rev {COMMIT} --include 'results/**' --dest release\n"
        "replicate fetch --check release\n"
        "replicate verify claims.toml --root release --parser umbrela-fallback@1 --out note.md\n"
    ) in note
    assert "- source:" not in note  # the claims file's short commit is a prefix of the fetched one


def test_changed_file_is_flagged(fetched):
    rel, files = fetched
    (rel / "results/new_annotations.jsonl").write_bytes(_jsonl(NEW).replace(b"nothing", b"final score: 3"))
    result = run("verify", "claims.toml", "--root", "release", "--parser", "umbrela-fallback@1", "-f", "json",
                 "--no-fail")
    out = json.loads(result.stdout)
    hash_flags = [f["message"] for f in out["flags"] if f["kind"] == "hash"]
    assert len(hash_flags) == 1 and "results/new_annotations.jsonl no longer matches its fetch manifest" in hash_flags[0]
    src = {s["release"]["repo_path"]: s for s in out["sources"]}
    assert src["results/new_annotations.jsonl"]["matches_manifest"] is False
    assert src["results/old_annotations.jsonl"]["release"]["licence"] is None


@needs_example
def test_a_pipe_in_a_path_does_not_split_the_note_tables(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLE, tmp_path / "ex|1")
    monkeypatch.chdir(tmp_path)
    result = run("verify", "ex|1/claims.toml", "--root", "ex|1", "--out", "note.md", "--no-plots", "--no-fail")
    assert result.exit_code == 0, result.output
    note = Path("note.md").read_text(encoding="utf-8")
    assert "| Claims file | `ex\\|1/claims.toml`" in note
    for table in re.findall(r"(?:^\|.*\n)+", note, flags=re.MULTILINE):
        columns = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(columns) == 1, table  # every row has as many cells as the header


# -- plots ----------------------------------------------------------------------------------
@needs_example
def test_without_matplotlib_the_note_says_how_to_get_figures(example_copy, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example", "--out", "note.md",
                 "--no-fail")
    assert result.exit_code == 0, result.output
    note = " ".join(Path("note.md").read_text().split())  # prose is wrapped at 100 columns
    assert NO_MATPLOTLIB in note and "pip install 'replicate-audit[plots]'" in note
    assert not list(Path(".").glob("note-*"))


@needs_example
def test_plots_are_written_beside_the_note_and_linked(example_copy):
    pytest.importorskip("matplotlib", reason="the plots extra (matplotlib) is not installed")
    Path("out").mkdir()
    result = run("verify", "fixtures/example/claims.toml", "--root", "fixtures/example", "--out", "out/note.md",
                 "--no-fail", "--parser", "umbrela-fallback@1")
    assert result.exit_code == 0, result.output
    note = Path("out/note.md").read_text()
    for stem in ("note-regression", "note-cells"):
        assert Path(f"out/{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in Path(f"out/{stem}.svg").read_bytes()[:2000]
        assert f"]({stem}.png)" in note and f"[SVG]({stem}.svg)" in note


def _bare_digit_runs(tmp_path):
    """Runs a and b of four items, gold 2 everywhere, outputs bare digits (umbrela-fallback@1 reads every one,
    umbrela-strict@1 none: n = 0 under intersect), and a claims file with one regression-rate claim a -> b."""
    for name, outs in (("a", "2103"), ("b", "0201")):
        rows = [{"query_id": "q", "corpus_id": str(k), "original_qrel_score": 2, "model_output": o} for k, o in enumerate(outs)]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "claims.toml").write_text(
        '[study]\ntitle = "t"\n[runs]\na = ["a.jsonl"]\nb = ["b.jsonl"]\n'
        '[[claims]]\nid = "r"\nmetric = "regression_rate"\nold = "a"\nnew = "b"\nvalue = "25.0"\nunit = "percent"\n',
        encoding="utf-8",
    )


def test_an_edge_with_no_comparable_pair_is_not_plotted_at_zero(tmp_path):
    from replicate.verify.api import verify
    from replicate.verify.plots import regression_points

    _bare_digit_runs(tmp_path)
    v = verify(tmp_path / "claims.toml", root=tmp_path, parsers=["umbrela-fallback@1", "umbrela-strict@1"], date="2026-01-01")
    points = regression_points(v)
    assert list(points) == ["umbrela-fallback@1", "umbrela-strict@1"]
    (e, x, y), = points["umbrela-fallback@1"]
    # cells: only_old = item 0, only_new = item 1, neither = items 2, 3; EM old = EM new = 1/4
    assert (e.cells.n, e.cells.both, e.cells.only_old, e.cells.only_new) == (4, 0, 1, 1)
    assert (x, y) == (100 * 1 / 4 * (1 - 1 / 4), 100 * 1 / 4)
    assert points["umbrela-strict@1"] == []
    pytest.importorskip("matplotlib", reason="the plots extra (matplotlib) is not installed")
    from replicate.verify.plots import figures_for

    assert len(figures_for(v, tmp_path / "note.md").files) == 2  # an empty series still draws


def test_runs_with_no_parsed_label_are_compared_not_crashed(tmp_path):
    """Under a parser that reads no output of either run (n = 0 under intersect), compare prints its empty
    table and verify calls the claim not computable: neither fails in the bootstrap (it did)."""
    _bare_digit_runs(tmp_path)
    res = CliRunner().invoke(app, ["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                                   "-p", "umbrela-strict@1", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["cells"] == {"both": 0, "only_old": 0, "only_new": 0, "neither": 0}
    res = CliRunner().invoke(app, ["verify", str(tmp_path / "claims.toml"), "--root", str(tmp_path),
                                   "-p", "umbrela-strict@1"])
    assert "a and b share no scored items" in res.output and "Traceback" not in res.output, res.output


def test_reproduce_block_fetches_each_release_into_its_own_directory(tmp_path, monkeypatch):
    # old run from one fetched release, new run from another: one fetch command per release
    root = tmp_path / "data"
    commits = {"a": "a" * 40, "b": "b" * 40}
    for sub, source, outputs in (("a", "org/first", OLD), ("b", "org/second", NEW)):
        d = root / sub / "results"
        d.mkdir(parents=True)
        data = _jsonl(outputs)
        (d / f"{sub}_annotations.jsonl").write_bytes(data)
        (root / sub / "replicate-manifest.json").write_text(json.dumps({
            "schema_version": 1, "source": source, "commit": commits[sub], "via": "git",
            "fetched_at": "2026-01-01T00:00:00Z",
            "files": [{"path": f"results/{sub}_annotations.jsonl", "size": len(data),
                       "sha256": hashlib.sha256(data).hexdigest()}],
            "repository": {"licence": "unknown"},
        }))
    (tmp_path / "claims.toml").write_text("""\
[study]
title = "Two releases"
[runs]
old = ["a/results/a_annotations.jsonl"]
new = ["b/results/b_annotations.jsonl"]
[[claims]]
id = "reg"
metric = "regression_rate"
old = "old"
new = "new"
value = "42.9"
unit = "percent"
""")
    monkeypatch.chdir(tmp_path)
    result = run("verify", "claims.toml", "--root", "data", "--parser", "umbrela-fallback@1",
                 "--out", "note.md", "--no-plots", "--date", "2026-01-01")
    assert result.exit_code == 0, result.output
    note = Path("note.md").read_text()
    assert (
        f"replicate fetch org/first --rev {commits['a']} --include 'results/**' --dest data/a\n"
        "replicate fetch --check data/a\n"
        f"replicate fetch org/second --rev {commits['b']} --include 'results/**' --dest data/b\n"
        "replicate fetch --check data/b\n"
        "replicate verify claims.toml --root data --parser umbrela-fallback@1 --out note.md\n"
    ) in note
