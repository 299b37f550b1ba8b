"""Issue 30, items 6 and 13-17: hostile input files end in `Error: FILE...: ...` and exit 2, never a traceback,
and a zip bomb is refused before it inflates."""

from __future__ import annotations

import io
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT
from support.repos import commit_files, init_repo

READERS = ROOT / "tests" / "readers" / "data"
INSPECT_OLD, INSPECT_NEW = READERS / "inspect" / "old.eval", READERS / "inspect" / "new.eval"
HELM = READERS / "helm" / "runs" / "v1"
DEEP = 20_000


def _run(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def _refused(res, name: str) -> str:
    """The error line: exit 2, `Error: ` naming the file, no traceback."""
    assert res.exit_code == 2, (res.exit_code, res.output[-2000:], res.exception)
    assert "Traceback" not in res.output and not isinstance(res.exception, (RecursionError, ValueError, OSError))
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("Error: "))
    assert name in line, line
    return line


def test_a_qrels_grade_of_thousands_of_digits(tmp_path):
    bad = tmp_path / "huge.txt"
    bad.write_text("q1 0 d1 1\nq1 0 d2 " + "9" * 5000 + "\n")
    line = _refused(_run("compare", bad, READERS / "new.txt", "--reader", "trec-qrels@1",
                         "--gold", READERS / "gold.txt"), "huge.txt:2")
    assert "too large (at most 127)" in line and len(line) < 300


def test_fetch_into_a_dangling_symlink(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_files(repo, {"a.txt": b"a\n"})
    dest = tmp_path / "dest"
    dest.symlink_to(tmp_path / "nowhere")
    env = {"REPLICATE_CACHE_DIR": str(tmp_path / "cache")}
    line = _refused(_run("fetch", (tmp_path / "repo").as_uri(), "-i", "a.txt", "-d", dest, env=env), "dest")
    assert "symbolic link to nothing" in line
    assert not (tmp_path / "nowhere").exists()


def test_a_toml_nested_thousands_deep(tmp_path):
    cfg = tmp_path / "deep.toml"
    cfg.write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    line = _refused(_run("collect", cfg, "--items", ROOT / "fixtures" / "collect" / "items.jsonl", "--archive",
                         tmp_path / "a.jsonl", "--dry-run"), "deep.toml")
    assert "nested too deeply" in line


def _eval_with(tmp_path: Path, name: str, data: bytes, *, method: int = zipfile.ZIP_DEFLATED) -> Path:
    """The old.eval fixture with one sample member replaced by ``data``."""
    out = tmp_path / "hostile.eval"
    with zipfile.ZipFile(INSPECT_OLD) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename == name:
                dst.writestr(name, data, compress_type=method)
            else:
                dst.writestr(info, src.read(info))
    return out


def test_an_eval_member_nested_thousands_deep(tmp_path):
    p = _eval_with(tmp_path, "samples/1_epoch_1.json", b"[" * DEEP + b"]" * DEEP)
    line = _refused(_run("compare", p, INSPECT_NEW, "--inspect-scorer", "match"), "hostile.eval")
    assert "samples/1_epoch_1.json" in line and "nested too deeply" in line


def test_an_eval_zip_bomb_is_refused_before_it_inflates(tmp_path):
    p = _eval_with(tmp_path, "samples/1_epoch_1.json", b" " * (64 << 20) + b"{}")
    assert p.stat().st_size < 1 << 20
    line = _refused(_run("compare", p, INSPECT_NEW, "--inspect-scorer", "match"), "hostile.eval")
    assert "samples/1_epoch_1.json" in line and "zip bomb" in line and "times its compressed size" in line


def test_an_eval_member_over_the_size_bound_is_refused(tmp_path, monkeypatch):
    from replicate_parsers import inspect_layout

    monkeypatch.setattr(inspect_layout, "MAX_MEMBER", 1 << 16)
    big = os.urandom(1 << 17).hex().encode()  # incompressible-ish: the ratio check alone would pass it
    p = _eval_with(tmp_path, "samples/1_epoch_1.json", big)
    line = _refused(_run("compare", p, INSPECT_NEW, "--inspect-scorer", "match"), "hostile.eval")
    assert "zip bomb" in line and "more than" in line


@pytest.mark.parametrize("body,message", [
    (b"[" * DEEP + b"]" * DEEP, "nested too deeply"),
    (b'[{"instance_id": "id0", "stats": [{"name": {"name": "exact_match"}, "mean": ' + b"1" * 5000 + b"}]}]",
     "4300 digits"),
])
def test_a_helm_stats_file_nested_deeply_or_with_a_huge_integer(tmp_path, body, message):
    runs = sorted(p for p in HELM.iterdir() if p.is_dir())
    a, b = tmp_path / "RUN_A", tmp_path / "RUN_B"
    shutil.copytree(runs[0], a)
    shutil.copytree(runs[1], b)
    (a / "per_instance_stats.json").write_bytes(body)
    line = _refused(_run("compare", a, b, "--reader", "helm-run@1", "--correct-field", "exact_match"),
                    "per_instance_stats.json")
    assert message in line


def test_the_zip_fixture_is_what_it_was():
    # the hostile logs above are the fixture with one member replaced: check the fixture reads as it did
    assert _run("compare", INSPECT_OLD, INSPECT_NEW, "--inspect-scorer", "match").exit_code == 0
    assert zipfile.ZipFile(io.BytesIO(INSPECT_OLD.read_bytes())).testzip() is None
