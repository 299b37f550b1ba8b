"""The hub transport against a Hub-shaped server on 127.0.0.1 (huggingface_hub makes every request)."""

from __future__ import annotations

import hashlib
import json

import pytest

from replicate.fetch import FetchError, OfflineMissing, RepositoryNotFound, RevisionNotFound, check, fetch
from replicate.fetch.errors import IntegrityError
from replicate.fetch.hubfetch import HubSettings
from replicate.provenance import MANIFEST_NAME
from support.hubserver import FakeHub, HubRevision, git_blob_id, lfs_pointer, recorded_files

MAIN = "a1" * 20
V1 = "b2" * 20
SOURCE = "hf://datasets/org/details"
DETAILS = ["details/model_a/details_arc_2024-05-01.parquet", "details/model_b/details_arc_2024-05-01.parquet"]


@pytest.fixture
def hub(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    files = recorded_files()
    older = {p: d for p, d in files.items() if "model_b" not in p}
    h = FakeHub(revisions={"main": HubRevision(MAIN, files), "v1": HubRevision(V1, older)}).start()
    monkeypatch.setenv("HF_ENDPOINT", h.endpoint)
    yield h
    h.stop()


def _requests(hub: FakeHub) -> list[str]:
    return [line.split("?")[0] for line in hub.log]


def test_fetch_pins_the_commit_checks_lfs_oids_and_records_the_card_licence(hub, cache, tmp_path):
    r = fetch(SOURCE, rev="main", include=["details/**"], dest=tmp_path / "d")
    m = r.manifest
    assert (m.source, m.via, m.rev, m.commit) == (SOURCE, "hub", "main", MAIN)
    assert (m.repository.metadata_from, m.repository.licence, m.repository.default_branch) == ("hf-api", "cc-by-4.0", "main")
    assert m.repository.created_at == "2024-05-01T09:00:00Z"
    files = recorded_files()
    for f in m.files:
        data = files[f.path]
        assert (tmp_path / "d" / f.path).read_bytes() == data
        # the sha256 recorded is the Hub's LFS oid; git_blob is the id of the pointer at the commit
        assert f.sha256 == hashlib.sha256(data).hexdigest() and f.size == len(data) and f.lfs
        assert f.git_blob == git_blob_id(lfs_pointer(data))
    assert [f.path for f in m.files] == DETAILS and r.not_selected == 3 and r.downloaded == 2
    # huggingface_hub asked for the revision, the tree at the pinned sha, then each file at that sha
    asked = _requests(hub)
    assert asked[:2] == ["GET /api/datasets/org/details/revision/main", f"GET /api/datasets/org/details/tree/{MAIN}"]
    assert sorted(a for a in asked[2:]) == sorted(f"{v} /datasets/org/details/resolve/{MAIN}/{p}"
                                                 for p in DETAILS for v in ("HEAD", "GET"))
    assert check(tmp_path / "d").ok


def test_second_fetch_writes_nothing(hub, cache, tmp_path):
    fetch(SOURCE, include=["details/**"], dest=tmp_path / "d")
    before = (tmp_path / "d" / MANIFEST_NAME).read_bytes()
    hub.log.clear()
    again = fetch(SOURCE, include=["details/**"], dest=tmp_path / "d")
    assert (again.written, again.downloaded, len(again.unchanged)) == ((), 0, 2)
    assert (tmp_path / "d" / MANIFEST_NAME).read_bytes() == before
    assert not any("/resolve/" in line for line in hub.log)


def test_non_lfs_files_are_checked_by_git_blob_id_and_hashed(hub, cache, tmp_path):
    r = fetch("https://huggingface.co/datasets/org/details", include=["README.md", "results/**"],
              dest=tmp_path / "d")
    assert r.manifest.source == SOURCE
    files = recorded_files()
    assert [(f.path, f.git_blob, f.sha256, f.lfs) for f in r.manifest.files] == [
        (p, git_blob_id(files[p]), hashlib.sha256(files[p]).hexdigest(), False)
        for p in ["README.md", "results/results_2024-05-01.json"]]


def test_tag_is_resolved_and_recorded(hub, cache, tmp_path):
    r = fetch(SOURCE, rev="v1", include=["details/**"], dest=tmp_path / "d")
    assert (r.manifest.rev, r.manifest.commit) == ("v1", V1)
    assert [f.path for f in r.manifest.files] == DETAILS[:1]


def test_tampered_lfs_object_is_refused_and_nothing_written(hub, cache, tmp_path):
    good = recorded_files()[DETAILS[0]]
    hub.tampered[DETAILS[0]] = good[:-1] + b"X"
    with pytest.raises(IntegrityError, match=r"with sha256 [0-9a-f]{64}, expected %d bytes with sha256 %s; nothing "
                       r"was written" % (len(good), hashlib.sha256(good).hexdigest())):
        fetch(SOURCE, include=[DETAILS[0]], dest=tmp_path / "d")
    assert not (tmp_path / "d" / DETAILS[0]).exists()
    assert not list((cache / "lfs").rglob("*")) or not any(p.is_file() for p in (cache / "lfs").rglob("*"))


def test_tampered_plain_file_is_refused(hub, cache, tmp_path):
    hub.tampered["README.md"] = b"x" * len(recorded_files()["README.md"])
    with pytest.raises(IntegrityError, match="git blob id"):
        fetch(SOURCE, include=["README.md"], dest=tmp_path / "d")
    assert not (tmp_path / "d" / "README.md").exists()


def test_gated_dataset_is_refused_without_a_token(hub, cache, tmp_path):
    hub.gated = "manual"
    with pytest.raises(FetchError, match=r"^dataset org/details is gated on the Hub \(manual approval\): its files "
                                         r"need an accepted access request; accept its conditions on "
                                         r"http://127\.0\.0\.1:\d+/datasets/org/details and set HF_TOKEN"):
        fetch(SOURCE, dest=tmp_path / "d")
    assert not any("/resolve/" in line for line in hub.log)


def test_gated_dataset_with_a_token_is_fetched_and_the_token_is_not_kept(hub, cache, tmp_path, monkeypatch):
    hub.gated = "auto"
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    r = fetch(SOURCE, include=["details/**"], dest=tmp_path / "d")
    assert len(r.written) == 2
    assert set(hub.auth) == {"Bearer hf_secret_token"}
    assert "hf_secret_token" not in (tmp_path / "d" / MANIFEST_NAME).read_text()
    assert "hf_secret_token" not in json.dumps(r.to_json())
    assert "secret" not in repr(HubSettings.from_env())
    assert not any("hf_secret_token" in p.read_text(errors="replace") for p in cache.rglob("*") if p.is_file())


def test_gated_dataset_whose_access_was_not_granted(hub, cache, tmp_path, monkeypatch):
    hub.gated, hub.granted = "manual", False
    monkeypatch.setenv("HF_TOKEN", "hf_other_account")
    with pytest.raises(FetchError, match=r"^dataset org/details is gated on the Hub and your token has not been "
                                         r"granted access: accept its conditions on http://127\.0\.0\.1:\d+/datasets/"
                                         r"org/details and set HF_TOKEN"):
        fetch(SOURCE, include=["README.md"], dest=tmp_path / "d")
    assert not (tmp_path / "d" / "README.md").exists()


def test_private_dataset_without_token_is_not_found(hub, cache, tmp_path):
    hub.private = True
    with pytest.raises(RepositoryNotFound, match=r"^dataset org/details not found on the Hub at http://127\.0\.0\.1:"
                                                 r"\d+ \(check the name; a private dataset needs HF_TOKEN"):
        fetch(SOURCE, dest=tmp_path / "d")


def test_unknown_revision(hub, cache, tmp_path):
    with pytest.raises(RevisionNotFound, match=r"^dataset org/details has no revision 'v9' on the Hub"):
        fetch(SOURCE, rev="v9", dest=tmp_path / "d")


def test_max_size_skips_large_lfs_files_before_download(hub, cache, tmp_path):
    r = fetch(SOURCE, include=["details/**"], dest=tmp_path / "d", max_size=9000)
    sizes = {p: len(d) for p, d in recorded_files().items()}
    assert sizes[DETAILS[0]] > 9000 > sizes[DETAILS[1]]
    assert [(s.path, s.reason, s.size) for s in r.skipped] == [(DETAILS[0], "too-large", sizes[DETAILS[0]])]
    assert not any(DETAILS[0] in line for line in hub.log)


def test_no_lfs_skips_lfs_files_as_pointers(hub, cache, tmp_path):
    r = fetch(SOURCE, include=["details/**", "README.md"], dest=tmp_path / "d", lfs=False)
    assert [f.path for f in r.manifest.files] == ["README.md"]
    data = recorded_files()[DETAILS[0]]
    assert [(s.path, s.reason) for s in r.skipped] == [(p, "lfs-pointer") for p in DETAILS]
    assert r.skipped[0].lfs == {"oid": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert r.skipped[0].detail.endswith("not written (--no-lfs)")


def test_offline_replays_the_cache(hub, cache, tmp_path):
    with pytest.raises(OfflineMissing):
        fetch(SOURCE, rev="main", dest=tmp_path / "x", offline=True)
    online = fetch(SOURCE, rev="main", include=["details/**"], dest=tmp_path / "a")
    hub.stop()
    off = fetch(SOURCE, rev="main", include=["details/**"], dest=tmp_path / "b", offline=True)
    assert off.manifest.files == online.manifest.files and off.manifest.via == "hub"
    assert (tmp_path / "b" / DETAILS[1]).read_bytes() == recorded_files()[DETAILS[1]]
    hub.start()  # the fixture stops it again


def test_card_without_licence(hub, cache, tmp_path):
    hub.licence = None
    r = fetch(SOURCE, include=["README.md"], dest=tmp_path / "d")
    assert r.manifest.repository.licence is None
    assert r.manifest.repository.licence_words == "no licence: reuse of the data is not licensed"


def test_unreachable_endpoint_is_a_transport_error(cache, tmp_path, monkeypatch):
    from replicate.fetch import TransportError

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(TransportError, match="dataset org/details"):
        fetch(SOURCE, dest=tmp_path / "d")


def test_command_line(hub, cache, tmp_path):
    from typer.testing import CliRunner

    from replicate.cli.app import app

    dest = tmp_path / "d"
    r = CliRunner().invoke(app, ["fetch", SOURCE, "--rev", "main", "--include", "details/**", "--dest", str(dest)],
                           env={"HF_ENDPOINT": hub.endpoint})
    assert r.exit_code == 0, r.output
    assert r.stdout == (
        f"source   {SOURCE}\n"
        f"commit   {MAIN} (main)\n"
        "via      hub\n"
        "licence  cc-by-4.0\n"
        "created  2024-05-01T09:00:00Z\n"
        "files    2 written, 0 unchanged, 0 skipped, 3 not matching --include\n"
        "size     17.5 KiB\n"  # (4 + 10240 + 4) + (4 + 7680 + 4) = 17936 bytes
        f"dest     {dest}\n"
    )
    c = CliRunner().invoke(app, ["fetch", "--check", str(dest)])
    assert c.exit_code == 0 and c.stdout.endswith("all 2 files match the manifest\n")


def test_hub_sources_parse_to_one_canonical_form():
    from replicate.errors import UsageError
    from replicate.fetch import parse_source

    a = parse_source("hf://datasets/org/details")
    b = parse_source("https://huggingface.co/datasets/org/details/")
    assert a == b and (a.kind, a.hub, a.git_url) == ("hub", "org/details", "https://huggingface.co/datasets/org/details")
    with pytest.raises(UsageError, match=r"a Hugging Face Hub source is a dataset, hf://datasets/ORG/NAME"):
        parse_source("hf://models/org/model")


def test_via_hub_needs_a_hub_source(cache, tmp_path):
    from replicate.errors import UsageError

    with pytest.raises(UsageError, match=r"hub needs a Hugging Face Hub source \(hf://datasets/ORG/NAME\); "
                                         r"org/study is not one"):
        fetch("org/study", via="hub", dest=tmp_path / "d")
