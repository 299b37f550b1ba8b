"""Git LFS objects over the git and http transports, from an LFS batch endpoint on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json

import pytest

from replicate.fetch import FetchError, HttpSettings, OfflineMissing, fetch
from replicate.fetch.errors import IntegrityError
from replicate.provenance import MANIFEST_NAME
from support.hubserver import FakeHub, git_blob_id, lfs_pointer
from support.repos import commit_files, init_repo
from support.server import FakeGitHub

BIG = bytes(range(256)) * 64  # 16 KiB
SMALL = b'{"doc_id": 0, "acc": 1}\n' * 10


@pytest.fixture
def lfs_repo(tmp_path):
    """A release whose outputs are LFS pointers (two paths share one object), beside a plain file."""
    repo = init_repo(tmp_path / "src" / "study")
    commit_files(repo, {
        ".gitattributes": b"outputs/** filter=lfs diff=lfs merge=lfs -text\n",
        "README.md": b"# study\n",
        "outputs/big.parquet": lfs_pointer(BIG),
        "outputs/small.jsonl": lfs_pointer(SMALL),
        "outputs/copy/small.jsonl": lfs_pointer(SMALL),
    })
    return repo


@pytest.fixture
def lfs_server():
    server = FakeHub().start()
    server.add_lfs(BIG)
    server.add_lfs(SMALL)
    yield server
    server.stop()


def _url(repo) -> str:
    return f"file://{repo.working_tree_dir}"


def _batches(server) -> list[str]:
    return [line for line in server.log if line.startswith("POST")]


def test_pointers_are_fetched_whole_and_checked_against_their_oid(lfs_repo, lfs_server, cache, tmp_path):
    r = fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url())
    files = {f.path: f for f in r.manifest.files}
    for path, data in [("outputs/big.parquet", BIG), ("outputs/small.jsonl", SMALL), ("outputs/copy/small.jsonl", SMALL)]:
        assert (tmp_path / "d" / path).read_bytes() == data
        f = files[path]
        assert (f.size, f.sha256, f.git_blob, f.lfs) == (len(data), hashlib.sha256(data).hexdigest(),
                                                         git_blob_id(lfs_pointer(data)), True)
    assert not files["README.md"].lfs and r.skipped == ()
    # one batch request for the two distinct objects, one download each, with the batch answer's header
    assert _batches(lfs_server) == ["POST /lfs/study/objects/batch"]
    assert sorted(line for line in lfs_server.log if "/lfs-objects/" in line) == sorted(
        f"GET /lfs-objects/{hashlib.sha256(d).hexdigest()}" for d in (BIG, SMALL))
    assert set(lfs_server.auth) == {None}  # no token goes to an endpoint --lfs-url names

    before = (tmp_path / "d" / MANIFEST_NAME).read_bytes()
    lfs_server.log.clear()
    again = fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url())
    assert again.written == () and lfs_server.log == []
    assert (tmp_path / "d" / MANIFEST_NAME).read_bytes() == before


def test_max_size_applies_to_the_object_before_download(lfs_repo, lfs_server, cache, tmp_path):
    r = fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url(), max_size=4096)
    assert [(s.path, s.reason, s.size) for s in r.skipped] == [("outputs/big.parquet", "too-large", len(BIG))]
    assert not any(hashlib.sha256(BIG).hexdigest() in line for line in lfs_server.log)
    assert (tmp_path / "d" / "outputs/small.jsonl").read_bytes() == SMALL


def test_no_lfs_keeps_the_pointer_skip(lfs_repo, lfs_server, cache, tmp_path):
    r = fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url(), lfs=False)
    assert [f.path for f in r.manifest.files] == [".gitattributes", "README.md"]
    assert {(s.path, s.reason) for s in r.skipped} == {
        ("outputs/big.parquet", "lfs-pointer"), ("outputs/small.jsonl", "lfs-pointer"),
        ("outputs/copy/small.jsonl", "lfs-pointer")}
    assert lfs_server.log == []


def test_local_repository_has_no_endpoint_unless_given(lfs_repo, cache, tmp_path):
    r = fetch(_url(lfs_repo), dest=tmp_path / "d", include=["outputs/small.jsonl"])
    (s,) = r.skipped
    assert s.reason == "lfs-pointer" and s.detail.endswith("(no LFS endpoint known for this source: pass --lfs-url)")
    assert s.lfs == {"oid": "sha256:" + hashlib.sha256(SMALL).hexdigest(), "size": len(SMALL)}


def test_tampered_object_is_refused(lfs_repo, lfs_server, cache, tmp_path):
    oid = hashlib.sha256(SMALL).hexdigest()
    lfs_server.lfs_tampered[oid] = SMALL.replace(b"1", b"0")
    with pytest.raises(IntegrityError, match=rf"received {len(SMALL)} bytes with sha256 [0-9a-f]{{64}}, "
                                             rf"expected {len(SMALL)} bytes with sha256 {oid}; nothing was written"):
        fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url(), include=["outputs/small.jsonl"])
    assert not (tmp_path / "d" / "outputs/small.jsonl").exists()


def test_object_missing_on_the_server(lfs_repo, lfs_server, cache, tmp_path):
    del lfs_server.lfs_objects[hashlib.sha256(BIG).hexdigest()]
    with pytest.raises(FetchError, match=r"the LFS server has no object for outputs/big\.parquet \(LFS oid "
                                         r"sha256:[0-9a-f]{12}\.\.\., 16384 bytes\): 404 Object does not exist; "
                                         r"pass --no-lfs to skip LFS files"):
        fetch(_url(lfs_repo), dest=tmp_path / "d", lfs_url=lfs_server.lfs_url())


def test_offline_needs_the_objects_in_the_cache(lfs_repo, lfs_server, cache, tmp_path):
    commit = lfs_repo.head.commit.hexsha
    fetch(_url(lfs_repo), dest=tmp_path / "a", lfs_url=lfs_server.lfs_url(), lfs=False)
    with pytest.raises(OfflineMissing, match=r"2 LFS object\(s\) of .* are not in the cache: outputs/big\.parquet, "
                                             r"outputs/copy/small\.jsonl; fetch once online"):
        fetch(_url(lfs_repo), rev=commit, dest=tmp_path / "b", lfs_url=lfs_server.lfs_url(), offline=True)
    fetch(_url(lfs_repo), dest=tmp_path / "c", lfs_url=lfs_server.lfs_url())
    lfs_server.log.clear()
    off = fetch(_url(lfs_repo), rev=commit, dest=tmp_path / "e", lfs_url=lfs_server.lfs_url(), offline=True)
    assert (tmp_path / "e" / "outputs/big.parquet").read_bytes() == BIG and lfs_server.log == []
    assert all(f.lfs for f in off.manifest.files if f.path.startswith("outputs/"))


def test_github_release_with_lfs_outputs_is_fetched_whole(lfs_repo, lfs_server, cache, tmp_path):
    gh = FakeGitHub(lfs_repo).start()
    try:
        http = HttpSettings(api_url=gh.api, raw_url=gh.raw, timeout=2.0, retries=1, backoff=0.01)
        r = fetch("org/study", dest=tmp_path / "d", http=http, lfs_url=lfs_server.lfs_url(), sleep=lambda s: None)
    finally:
        gh.stop()
    assert r.manifest.via == "http" and r.skipped == ()
    assert (tmp_path / "d" / "outputs/big.parquet").read_bytes() == BIG
    assert {f.path for f in r.manifest.files if f.lfs} == {"outputs/big.parquet", "outputs/small.jsonl",
                                                           "outputs/copy/small.jsonl"}


def test_command_line_lfs_options(lfs_repo, lfs_server, cache, tmp_path):
    from typer.testing import CliRunner

    from replicate.cli.app import app

    base = ["fetch", _url(lfs_repo), "--include", "outputs/small.jsonl"]
    r = CliRunner().invoke(app, [*base, "--lfs-url", lfs_server.lfs_url(), "-d", str(tmp_path / "a"), "-f", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["files"] == [{"path": "outputs/small.jsonl", "size": len(SMALL), "sha256": hashlib.sha256(SMALL).hexdigest(),
                             "git_blob": git_blob_id(lfs_pointer(SMALL)), "lfs": True}]
    r = CliRunner().invoke(app, [*base, "--no-lfs", "-d", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "outputs/small.jsonl  lfs-pointer" in r.stdout and r.stdout.rstrip().endswith("not written (--no-lfs)")
