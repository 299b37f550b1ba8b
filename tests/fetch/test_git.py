"""The git transport against real repositories built with gitpython, over file:// and local paths."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess

import orjson
import pytest

from replicate.errors import CheckFailed, UsageError
from replicate.fetch import OfflineMissing, RevisionNotFound, TransportError, check, fetch
from replicate.fetch.errors import IntegrityError
from replicate.fetch.writer import write_verified
from replicate.provenance import MANIFEST_NAME
from support.repos import LFS_POINTER, blob_bytes, build_release

SELECTED = ["results/big.bin", "results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl",
            "results/model.jsonl", "results/notes.txt", "results/readme_link"]


def _manifest(dest) -> dict:
    return orjson.loads((dest / MANIFEST_NAME).read_bytes())


def test_file_url_fetch_writes_selected_blobs_and_manifest(release, cache, tmp_path):
    dest = tmp_path / "out"
    r = fetch(release.url, include=["results/**"], dest=dest)
    assert r.manifest.commit == release.head
    written = ["results/big.bin", "results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl", "results/notes.txt"]
    assert list(r.written) == written
    for rel in written:
        assert (dest / rel).read_bytes() == blob_bytes(release.repo, release.head, rel)
    assert not (dest / "results_2020").exists() and not (dest / "README.md").exists()
    m = _manifest(dest)
    assert m["schema_version"] == 1 and m["via"] == "git" and m["rev"] is None
    assert m["source"] == release.path.resolve().as_uri()
    assert m["commit"] == release.head and m["include"] == ["results/**"]
    assert m["repository"] == {"metadata_from": "git", "default_branch": "main", "created_at": None,
                               "licence": "unknown", "licence_files": [], "description": None}
    assert [f["path"] for f in m["files"]] == written
    for f in m["files"]:
        data = (dest / f["path"]).read_bytes()
        assert f["sha256"] == hashlib.sha256(data).hexdigest() and f["size"] == len(data)
    assert [(s["path"], s["reason"]) for s in m["skipped"]] == [
        ("results/model.jsonl", "lfs-pointer"), ("results/readme_link", "symlink")]
    lfs = m["skipped"][0]
    assert lfs["lfs"] == {"oid": "sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393",
                          "size": 12345678}
    assert lfs["size"] == len(LFS_POINTER)
    assert not (dest / "results" / "model.jsonl").exists()  # a pointer is never passed on as data
    assert not os.path.lexists(dest / "results" / "readme_link")
    assert r.not_selected == 3 and r.listing_complete
    # the manifest is as readable as the files it lists (it used to keep mkstemp's owner-only mode)
    assert {(dest / p).stat().st_mode & 0o777 for p in [*written, "replicate-manifest.json"]} == {0o644}


def test_local_path_gives_the_same_release(release, cache, tmp_path):
    a = fetch(release.url, include=["results_2020/**"], dest=tmp_path / "a")
    b = fetch(str(release.path), include=["results_2020/**"], dest=tmp_path / "b", via="git")
    assert a.manifest.files == b.manifest.files and a.manifest.source == b.manifest.source
    assert b.written == ("results_2020/run_a.jsonl",)


@pytest.mark.parametrize("rev, which", [("v1", "first"), ("main", "head"), ("HEAD~1", "second")])
def test_rev_resolves_to_full_commit(release, cache, tmp_path, rev, which):
    r = fetch(release.url, rev=rev, include=["results/dl19/run_a.jsonl"], dest=tmp_path / "o")
    commit = getattr(release, which)
    assert r.manifest.commit == commit and r.manifest.rev == rev
    assert (tmp_path / "o/results/dl19/run_a.jsonl").read_bytes() == blob_bytes(
        release.repo, commit, "results/dl19/run_a.jsonl")


def test_short_and_full_commit_ids(release, cache, tmp_path):
    short = fetch(release.url, rev=release.first[:8], include=["README.md"], dest=tmp_path / "s")
    full = fetch(release.url, rev=release.first, include=["README.md"], dest=tmp_path / "f")
    assert short.manifest.commit == full.manifest.commit == release.first


def test_unknown_rev_names_branches_and_tags(release, cache, tmp_path):
    with pytest.raises(RevisionNotFound, match=r"has no commit, branch or tag 'nope' \(branches and tags: main, v1\)"):
        fetch(release.url, rev="nope", dest=tmp_path / "o")
    with pytest.raises(RevisionNotFound, match="cannot start with '-'"):
        fetch(release.url, rev="--upload-pack=x", dest=tmp_path / "o")


def _missing_objects(git_dir) -> set[str]:
    out = subprocess.run(["git", "-C", str(git_dir), "rev-list", "--objects", "--all", "--missing=print"],
                         capture_output=True, text=True, check=True).stdout
    return {line[1:] for line in out.split() if line.startswith("?")}


def test_cache_is_a_bare_partial_clone(release, cache, tmp_path):
    fetch(release.url, include=["results_2020/**"], dest=tmp_path / "o")
    (git_dir,) = (cache / "git").glob("*.git")
    assert subprocess.run(["git", "-C", str(git_dir), "config", "core.bare"], capture_output=True,
                          text=True).stdout.strip() == "true"
    assert not (git_dir / "results_2020").exists()  # nothing checked out
    missing = _missing_objects(git_dir)
    old_run_a = release.repo.git.rev_parse(f"{release.first}:results/dl19/run_a.jsonl")
    wanted = release.repo.git.rev_parse(f"{release.head}:results_2020/run_a.jsonl")
    assert old_run_a in missing  # only the selected blobs were downloaded
    assert wanted not in missing


def test_hooks_from_the_environment_never_run(release, tmp_path, monkeypatch):
    # A user-level hooks directory with a hook git runs on every ref update.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    hook = hooks / "reference-transaction"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    cfg = tmp_path / "gitconfig"
    cfg.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    # Control: plain git runs it, so the assertion below can fail.
    subprocess.run(["git", "clone", "-q", "--bare", release.url, str(tmp_path / "plain.git")], check=True)
    assert marker.exists()
    marker.unlink()
    fetch(release.url, include=["README.md"], dest=tmp_path / "o", cache_dir=tmp_path / "c")
    assert not marker.exists()


def test_size_limit_skips_unless_allowed(release, cache, tmp_path):
    r = fetch(release.url, include=["results/*.bin"], dest=tmp_path / "a", max_size="4K")
    assert r.written == ()
    (s,) = r.skipped
    assert (s.path, s.reason, s.size) == ("results/big.bin", "too-large", 5120)
    assert s.detail == ("5.0 KiB is over the size limit of 4.0 KiB: not fetched; "
                        "pass --allow-large or a higher --max-size")
    r = fetch(release.url, include=["results/*.bin"], dest=tmp_path / "b", max_size="4K", allow_large=True)
    assert r.written == ("results/big.bin",) and r.skipped == ()


def test_refetch_is_a_no_op(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/**"], dest=dest)
    before = (dest / MANIFEST_NAME).read_bytes()
    mtime = (dest / "results/notes.txt").stat().st_mtime_ns
    r = fetch(release.url, include=["results/**"], dest=dest)
    assert r.written == () and r.downloaded == 0
    assert list(r.unchanged) == ["results/big.bin", "results/dl19/run_a.jsonl",
                                 "results/dl19/run_b.jsonl", "results/notes.txt"]
    assert (dest / MANIFEST_NAME).read_bytes() == before
    assert (dest / "results/notes.txt").stat().st_mtime_ns == mtime


def test_refetch_repairs_an_edited_file_from_the_cache(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    (dest / "results/dl19/run_b.jsonl").write_text("edited\n")
    r = fetch(release.url, include=["results/dl19/**"], dest=dest)
    assert r.written == ("results/dl19/run_b.jsonl",) and r.downloaded == 0
    assert (dest / "results/dl19/run_b.jsonl").read_bytes() == blob_bytes(
        release.repo, release.head, "results/dl19/run_b.jsonl")


def test_new_commit_and_narrower_include_remove_unselected_files(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/**"], dest=dest)
    (dest / "results/notes.txt").write_text("my edit\n")  # edited: must be left alone
    r = fetch(release.url, rev="v1", include=["results/dl19/**"], dest=dest)
    assert r.removed == ("results/big.bin",) and r.stale == ("results/notes.txt",)
    assert r.written == ("results/dl19/run_a.jsonl",) and r.unchanged == ("results/dl19/run_b.jsonl",)
    assert not (dest / "results/big.bin").exists()
    assert (dest / "results/notes.txt").read_text() == "my edit\n"
    assert _manifest(dest)["commit"] == release.first


def test_offline_uses_only_the_cache(tmp_path):
    rel = build_release(tmp_path / "src")
    c = tmp_path / "cache"
    fetch(rel.url, include=["results/dl19/**"], dest=tmp_path / "a", cache_dir=c)
    moved = tmp_path / "gone"
    shutil.move(rel.path, moved)  # the remote disappears
    r = fetch(rel.url, include=["results/dl19/**"], dest=tmp_path / "b", cache_dir=c, offline=True)
    assert r.manifest.commit == rel.head and r.downloaded == 0
    assert r.manifest.files == fetch(rel.url, include=["results/dl19/**"], dest=tmp_path / "a",
                                     cache_dir=c, offline=True).manifest.files
    with pytest.raises(OfflineMissing, match=r"offline: 2 file\(s\) of .* are not in the cache: "
                                             r"README.md, results_2020/run_a.jsonl; fetch once online"):
        fetch(rel.url, include=["README.md", "results_2020/**"], dest=tmp_path / "c", cache_dir=c, offline=True)
    # The default branch's name resolves offline too (it was what "no --rev" meant).
    assert fetch(rel.url, rev="main", include=["results/dl19/**"], dest=tmp_path / "b", cache_dir=c,
                 offline=True).manifest.commit == rel.head
    with pytest.raises(OfflineMissing, match="no resolution of revision 'v1'"):
        fetch(rel.url, rev="v1", dest=tmp_path / "d", cache_dir=c, offline=True)
    with pytest.raises(TransportError, match="git fetch failed for file://"):
        fetch(rel.url, include=["results/dl19/**"], dest=tmp_path / "e", cache_dir=c)


def test_offline_with_an_empty_cache(release, tmp_path):
    with pytest.raises(OfflineMissing, match="no resolution of the default branch"):
        fetch(release.url, dest=tmp_path / "o", cache_dir=tmp_path / "empty", offline=True)


def test_check_names_missing_and_changed_files(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/dl19/**", "README.md"], dest=dest)
    ok = check(dest)
    assert ok.ok and ok.matched == ("README.md", "results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl")
    ok.raise_for_status()
    (dest / "results/dl19/run_a.jsonl").write_text("changed\n")
    (dest / "README.md").unlink()
    (dest / "extra.txt").write_text("mine\n")
    res = check(dest)
    assert [(m.path, m.problem) for m in res.mismatches] == [("README.md", "missing"),
                                                             ("results/dl19/run_a.jsonl", "changed")]
    assert res.unlisted == ("extra.txt",)
    with pytest.raises(CheckFailed, match=r"^2 of 3 files do not match replicate-manifest.json: "
                                          r"README.md \(missing\), results/dl19/run_a.jsonl \(changed\)$"):
        res.raise_for_status()


def test_dest_must_be_empty_or_a_fetched_directory(release, cache, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("x")
    with pytest.raises(UsageError, match=r"is not empty and holds no replicate-manifest.json"):
        fetch(release.url, dest=tmp_path / "mine")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        fetch(release.url, dest=tmp_path / "afile")


def test_dest_of_another_source_is_refused(release, cache, tmp_path):
    other = build_release(tmp_path / "other", name="other")
    fetch(release.url, include=["README.md"], dest=tmp_path / "o")
    with pytest.raises(UsageError, match=r"holds files fetched from file://.*/study, not file://.*/other; "
                                         r"choose another dest"):
        fetch(other.url, include=["README.md"], dest=tmp_path / "o")


def test_include_that_matches_nothing_is_an_error(release, cache, tmp_path):
    with pytest.raises(UsageError, match=r"include 'result/\*\*' matched no file of .* \(top level: "
                                         r"\.gitattributes, README\.md, results/, results_2020/\)"):
        fetch(release.url, include=["results/**", "result/**"], dest=tmp_path / "o")


def test_licence_file_recorded_over_plain_git(tmp_path):
    rel = build_release(tmp_path / "src", licence=b"MIT License\n")
    r = fetch(rel.url, include=["README.md"], dest=tmp_path / "o", cache_dir=tmp_path / "c")
    assert r.manifest.repository.licence == "unknown"
    assert r.manifest.repository.licence_files == ("LICENSE",)
    assert r.manifest.repository.licence_words == "unknown (plain git; root licence file: LICENSE)"


def test_paths_escaping_dest_are_refused(tmp_path):
    # git mktree accepts entries that checkout would refuse: '..' and a '.git' directory.
    rel = build_release(tmp_path / "src")
    g = rel.repo.git
    evil = tmp_path / "evil.txt"
    evil.write_text("evil\n")
    blob = g.hash_object("-w", str(evil))

    def mktree(text: str) -> str:
        return subprocess.run(["git", "-C", str(rel.path), "mktree"], input=text, text=True,
                              capture_output=True, check=True).stdout.strip()

    git_tree = mktree(f"100644 blob {blob}\tconfig\n")
    root = mktree(f"100644 blob {blob}\t..\n040000 tree {git_tree}\t.git\n100644 blob {blob}\tok.txt\n")
    g.branch("evil", g.commit_tree(root, "-m", "evil"))
    dest = tmp_path / "o"
    r = fetch(rel.url, rev="evil", dest=dest, cache_dir=tmp_path / "c")
    assert r.written == ("ok.txt",)
    assert [(s.path, s.reason, s.detail) for s in r.skipped] == [
        ("..", "refused-path", "'..' component escapes or aliases the destination"),
        (".git/config", "refused-path", "'.git' component")]
    assert sorted(p.name for p in dest.iterdir()) == ["ok.txt", MANIFEST_NAME]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "evil.txt", "o", "src"]


def test_interrupted_write_leaves_no_file(tmp_path):
    def chunks():
        yield b"half of "
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_verified(tmp_path, "results/x.jsonl", chunks(), size=20, blob="0" * 40)
    assert list((tmp_path / "results").iterdir()) == []


def test_leftover_temporary_files_are_removed_on_the_next_fetch(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    leftover = dest / "results/dl19/.run_a.jsonl.k1l2.replicate-tmp"
    leftover.write_bytes(b"half")
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    assert not leftover.exists()


def test_corrupt_cache_entry_is_detected_and_dropped(release, cache, tmp_path):
    fetch(release.url, include=["results/notes.txt"], dest=tmp_path / "a")
    blob = release.repo.git.rev_parse(f"{release.head}:results/notes.txt")
    obj = cache / "objects" / blob[:2] / blob[2:]
    obj.write_bytes(b"tampered\n")
    with pytest.raises(IntegrityError, match=r"results/notes.txt: the cached copy has 9 bytes .* nothing was written"):
        fetch(release.url, include=["results/notes.txt"], dest=tmp_path / "b")
    assert not (tmp_path / "b/results/notes.txt").exists() and not obj.exists()
    r = fetch(release.url, include=["results/notes.txt"], dest=tmp_path / "b")
    assert r.written == ("results/notes.txt",)


def test_missing_git_command_is_a_clear_error(release, cache, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(TransportError, match="^the git transport needs the git command; install git"):
        fetch(release.url, dest=tmp_path / "o")


def test_commit_on_no_branch_is_fetched_by_id(tmp_path):
    rel = build_release(tmp_path / "src")
    g = rel.repo.git
    dangling = g.commit_tree(f"{rel.first}^{{tree}}", "-p", rel.head, "-m", "on no branch")
    r = fetch(rel.url, rev=dangling, include=["README.md"], dest=tmp_path / "o", cache_dir=tmp_path / "c")
    assert r.manifest.commit == dangling
    with pytest.raises(RevisionNotFound, match=r"has no commit, branch or tag '0{40}'"):
        fetch(rel.url, rev="0" * 40, dest=tmp_path / "p", cache_dir=tmp_path / "c")
