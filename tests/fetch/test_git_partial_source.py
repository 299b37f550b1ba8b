"""Fetching from a local repository that cannot serve filtered clones, or is itself a partial clone.

The sources are real repositories made with gitpython; the partial clone is made the
way a user makes one (``git clone --filter=blob:none --no-checkout``).
"""

from __future__ import annotations

import subprocess

import pytest

from replicate.fetch import TransportError, fetch
from support.repos import blob_bytes, commit_files, init_repo

FILES = {
    "README.md": b"# study\n",
    "results/a.jsonl": b'{"qid": 1, "label": 2}\n',
    "results/b.jsonl": b'{"qid": 1, "label": 0}\n',
    "results/c.jsonl": b'{"qid": 2, "label": 1}\n',
}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def _blob(repo_dir, path: str) -> str:
    return _git("-C", str(repo_dir), "rev-parse", f"HEAD:{path}").strip()


def _cached_blobs(cache_root) -> set[str]:
    (git_dir,) = (cache_root / "git").glob("*.git")
    out = _git("-C", str(git_dir), "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)")
    return {sha for kind, sha in (line.split() for line in out.splitlines()) if kind == "blob"}


@pytest.fixture
def original(tmp_path):
    repo = init_repo(tmp_path / "original")  # serves filtered clones, as a hosting site does
    commit_files(repo, FILES, "release")
    return repo


@pytest.fixture
def partial(original, tmp_path):
    """A partial clone of ``original`` holding the blob of results/a.jsonl only."""
    path = tmp_path / "partial"
    _git("clone", "-q", "--filter=blob:none", "--no-checkout", (tmp_path / "original").as_uri(), str(path))
    _git("-C", str(path), "cat-file", "-p", "HEAD:results/a.jsonl")  # downloads that one blob
    held = _git("-C", str(path), "cat-file", "--batch-all-objects", "--batch-check=%(objecttype)")
    assert held.split().count("blob") == 1  # the fixture is what it claims to be
    return path


def test_a_partial_clone_serves_the_selected_blob_it_holds(partial, cache, tmp_path):
    # It used to fail: git asked the source for a full clone (it does not set
    # uploadpack.allowFilter), which needs blobs the partial clone never downloaded.
    r = fetch(str(partial), include=["results/a.jsonl"], dest=tmp_path / "out")
    assert r.written == ("results/a.jsonl",)
    assert (tmp_path / "out/results/a.jsonl").read_bytes() == FILES["results/a.jsonl"]
    assert _cached_blobs(cache) == {_blob(partial, "results/a.jsonl")}


def test_a_blob_the_partial_clone_lacks_is_named_by_path_with_the_original(partial, original, cache, tmp_path):
    with pytest.raises(TransportError) as info:
        fetch(str(partial), include=["results/**"], dest=tmp_path / "out")
    msg = str(info.value)
    first_line = msg.splitlines()[0]
    # both missing files are named (git itself names only the first blob id it missed)
    assert "results/b.jsonl, results/c.jsonl" in first_line and "results/a.jsonl" not in first_line
    assert "partial clone" in first_line
    assert f"replicate fetch {(tmp_path / 'original').as_uri()} --rev " in first_line
    assert not (tmp_path / "out" / "results").exists()  # nothing half-written


def test_a_source_without_allow_filter_sends_only_the_selected_blobs(tmp_path, cache):
    repo = init_repo(tmp_path / "plain")
    with repo.config_writer() as cw:  # a repository as `git init` leaves it
        cw.remove_option("uploadpack", "allowFilter")
        cw.remove_option("uploadpack", "allowAnySHA1InWant")
    commit_files(repo, FILES, "release")
    r = fetch(str(tmp_path / "plain"), include=["results/b.jsonl"], dest=tmp_path / "out")
    assert (tmp_path / "out/results/b.jsonl").read_bytes() == blob_bytes(repo, "HEAD", "results/b.jsonl")
    assert r.written == ("results/b.jsonl",)
    # it used to be a full clone: every blob of the repository in the cache
    assert _cached_blobs(cache) == {_blob(tmp_path / "plain", "results/b.jsonl")}


def test_a_server_that_cannot_serve_filtered_clones_is_told_how_to(partial, cache, tmp_path, monkeypatch):
    # A remote server runs its own upload-pack with its own settings; so does this source
    # once replicate no longer passes its own upload-pack command.
    from replicate.fetch.gitfetch import GitTransport

    monkeypatch.setattr(GitTransport, "_upload_pack", lambda self: [])
    with pytest.raises(TransportError) as info:
        fetch(str(partial), include=["results/a.jsonl"], dest=tmp_path / "out")
    first_line = str(info.value).splitlines()[0]
    assert "does not serve filtered (partial) clones" in first_line
    assert "git config uploadpack.allowFilter true" in first_line
