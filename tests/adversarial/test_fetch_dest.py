"""Issue 43, items 4, 5, 8 and 13: one fetch into a --dest at a time, a rerun after a kill completes it, file names
in the skipped table stay on their row, and tampering that keeps a file's size is caught."""

from __future__ import annotations

import json

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import UsageError
from replicate.fetch import api as fetch_api, check, fetch
from replicate.fetch.destlock import JOURNAL_NAME, LOCK_NAME, dest_lock
from replicate.fetch.render import render_fetch
from replicate.provenance import MANIFEST_NAME
from support.repos import build_release, commit_files, init_repo

RUN_A = "results/dl19/run_a.jsonl"


def _names(dest) -> list[str]:
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())


def test_a_second_fetch_into_a_dest_in_use_refuses_at_once(release, cache, tmp_path):
    dest = tmp_path / "d"
    with dest_lock(dest):  # another fetch is writing into dest
        with pytest.raises(UsageError, match=r"d is being written by another fetch \(process \d+, lock .*"
                                             r"\.replicate-fetch\.lock\): wait for it to finish, or fetch into "
                                             r"another dest"):
            fetch(release.url, include=["results/dl19/**"], dest=dest)
        assert _names(dest) == [LOCK_NAME]
    assert not dest.exists()  # made for the fetch, left empty, removed
    r = fetch(release.url, include=["results/dl19/**"], dest=dest)
    assert _names(dest) == [MANIFEST_NAME, *r.written]  # no lock file left behind


def test_two_repositories_never_share_one_dest(release, cache, tmp_path):
    other = init_repo(tmp_path / "other")
    commit_files(other, {"x.txt": b"x\n"})
    dest = tmp_path / "d"
    with dest_lock(dest):
        with pytest.raises(UsageError, match="being written by another fetch"):
            fetch((tmp_path / "other").as_uri(), dest=dest)
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    with pytest.raises(UsageError, match="holds files fetched from"):
        fetch((tmp_path / "other").as_uri(), dest=dest)


def _killed_before_the_manifest(monkeypatch, release, dest) -> None:
    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # as a kill between the last rename and the manifest

    monkeypatch.setattr(fetch_api, "write_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        fetch(release.url, include=["results/dl19/**"], dest=dest)
    monkeypatch.undo()
    (dest / LOCK_NAME).write_text("12345\n")  # a killed fetch leaves its lock file (the lock itself died with it)


def test_a_rerun_after_a_kill_before_the_manifest_completes_and_cleans_up(release, cache, tmp_path, monkeypatch):
    dest = tmp_path / "new"
    _killed_before_the_manifest(monkeypatch, release, dest)
    assert _names(dest) == [JOURNAL_NAME, LOCK_NAME, RUN_A, "results/dl19/run_b.jsonl"]
    res = CliRunner().invoke(app, ["fetch", release.url, "--include", "results/dl19/**", "--dest", str(dest)])
    assert res.exit_code == 0, res.output
    assert _names(dest) == [MANIFEST_NAME, RUN_A, "results/dl19/run_b.jsonl"]  # no journal, no lock file
    assert check(dest).ok


def test_a_rerun_after_a_kill_still_refuses_the_users_own_files(release, cache, tmp_path, monkeypatch):
    dest = tmp_path / "new"
    _killed_before_the_manifest(monkeypatch, release, dest)
    (dest / RUN_A).write_bytes((dest / RUN_A).read_bytes().replace(b'"label": 1', b'"label": 2'))  # edited since
    with pytest.raises(UsageError, match="is not empty and holds no replicate-manifest.json"):
        fetch(release.url, include=["results/dl19/**"], dest=dest)
    (dest / RUN_A).unlink()
    (dest / "mine.txt").write_text("the user's\n")
    with pytest.raises(UsageError, match="is not empty and holds no replicate-manifest.json"):
        fetch(release.url, include=["results/dl19/**"], dest=dest)


def test_file_names_with_newlines_and_tabs_stay_on_their_row(cache, tmp_path):
    repo = init_repo(tmp_path / "src")
    commit_files(repo, {"ok.txt": b"ok\n", "a\nb.txt": b"x\n", "c\td.txt": b"y\n"})
    r = fetch((tmp_path / "src").as_uri(), dest=tmp_path / "d")
    text = render_fetch(r, "table")
    rows = text.split("skipped:\n")[1].splitlines()
    assert len(rows) == 4  # header, rule and one line per file
    assert rows[2].startswith("a\\nb.txt  refused-path") and rows[3].startswith("c\\td.txt  refused-path")
    assert len(rows[1].split()[0]) == len("a\\nb.txt")  # the column's width is that of the name shown
    shown = CliRunner().invoke(app, ["fetch", (tmp_path / "src").as_uri(), "--dest", str(tmp_path / "d")])
    assert "a\\nb.txt" in shown.stdout and "a\nb.txt" not in shown.stdout


def test_check_and_refetch_catch_a_tamper_that_keeps_the_size(release, cache, tmp_path):
    dest = tmp_path / "d"
    fetch(release.url, rev="v1", include=["results/dl19/**"], dest=dest)
    original = (dest / RUN_A).read_bytes()
    tampered = original.replace(b'"label": 2', b'"label": 1')
    assert tampered != original and len(tampered) == len(original)
    (dest / RUN_A).write_bytes(tampered)
    res = check(dest)
    assert not res.ok and [(m.path, m.problem) for m in res.mismatches] == [(RUN_A, "changed")]
    cli = CliRunner().invoke(app, ["fetch", "--check", str(dest), "--format", "json"])
    assert cli.exit_code == 1 and json.loads(cli.stdout)["mismatches"][0]["path"] == RUN_A
    again = fetch(release.url, rev="v1", include=["results/dl19/**"], dest=dest)
    assert again.written == (RUN_A,) and (dest / RUN_A).read_bytes() == original
    assert check(dest).ok


def test_the_journal_names_what_was_about_to_be_written(release, cache, tmp_path, monkeypatch):
    dest = tmp_path / "new"
    _killed_before_the_manifest(monkeypatch, release, dest)
    journal = orjson.loads((dest / JOURNAL_NAME).read_bytes())
    assert journal["source"] == release.path.resolve().as_uri() and journal["commit"] == release.head
    assert sorted(journal["files"]) == [RUN_A, "results/dl19/run_b.jsonl"]
    assert all(v.startswith("git:") and len(v) == 44 for v in journal["files"].values())


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return build_release(tmp_path_factory.mktemp("src"))


BIG = bytes(range(256)) * 64  # an LFS object of 16 KiB
SMALL = b'{"doc_id": 0, "label": 1}\n' * 10


@pytest.fixture
def lfs_release(tmp_path):
    """A release whose outputs are Git LFS pointers, and the LFS endpoint on 127.0.0.1 serving their objects."""
    from support.hubserver import FakeHub, lfs_pointer

    repo = init_repo(tmp_path / "src" / "study")
    commit_files(repo, {".gitattributes": b"outputs/** filter=lfs diff=lfs merge=lfs -text\n",
                        "README.md": b"# study\n", "outputs/big.parquet": lfs_pointer(BIG),
                        "outputs/small.jsonl": lfs_pointer(SMALL)})
    server = FakeHub().start()
    server.add_lfs(BIG)
    server.add_lfs(SMALL)
    yield f"file://{repo.working_tree_dir}", server
    server.stop()


def _lfs_killed_before_the_manifest(monkeypatch, url, server, dest) -> None:
    monkeypatch.setattr(fetch_api, "write_manifest", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        fetch(url, dest=dest, lfs_url=server.lfs_url())
    monkeypatch.undo()
    (dest / LOCK_NAME).write_text("12345\n")


def test_a_rerun_after_a_kill_that_had_fetched_an_lfs_object_completes(lfs_release, cache, tmp_path, monkeypatch):
    import hashlib

    url, server = lfs_release
    dest = tmp_path / "new"
    _lfs_killed_before_the_manifest(monkeypatch, url, server, dest)
    journal = orjson.loads((dest / JOURNAL_NAME).read_bytes())["files"]
    assert journal["outputs/big.parquet"] == "sha256:" + hashlib.sha256(BIG).hexdigest()  # by the object's sha256
    assert journal["outputs/small.jsonl"] == "sha256:" + hashlib.sha256(SMALL).hexdigest()
    assert journal["README.md"].startswith("git:")
    server.log.clear()
    res = CliRunner().invoke(app, ["fetch", url, "--dest", str(dest), "--lfs-url", server.lfs_url()])
    assert res.exit_code == 0, res.output
    assert not any("/lfs-objects/" in line for line in server.log)  # no object downloaded twice
    assert _names(dest) == sorted([MANIFEST_NAME, ".gitattributes", "README.md", "outputs/big.parquet",
                                   "outputs/small.jsonl"])  # no journal, no lock file
    assert (dest / "outputs/big.parquet").read_bytes() == BIG
    files = {f["path"]: f for f in orjson.loads((dest / MANIFEST_NAME).read_bytes())["files"]}
    assert files["outputs/big.parquet"]["lfs"] and files["outputs/big.parquet"]["sha256"] == hashlib.sha256(
        BIG).hexdigest()
    assert check(dest).ok


def test_a_rerun_refuses_an_lfs_file_changed_since_the_kill_even_at_its_size(lfs_release, cache, tmp_path,
                                                                                monkeypatch):
    url, server = lfs_release
    dest = tmp_path / "new"
    _lfs_killed_before_the_manifest(monkeypatch, url, server, dest)
    small = dest / "outputs/small.jsonl"
    small.write_bytes(SMALL.replace(b'"label": 1', b'"label": 2', 1))  # the user's edit, same size
    assert small.stat().st_size == len(SMALL)
    with pytest.raises(UsageError, match="is not empty and holds no replicate-manifest.json"):
        fetch(url, dest=dest, lfs_url=server.lfs_url())
    assert small.read_bytes() != SMALL  # the user's file is kept
