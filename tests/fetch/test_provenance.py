"""Files read from a fetched directory carry the release's provenance."""

from __future__ import annotations

from replicate.fetch import HttpSettings, fetch
from replicate.provenance import file_provenance, find_release, sha256_file


def test_file_provenance_names_source_commit_and_hash(release, cache, tmp_path):
    dest = tmp_path / "out"
    r = fetch(release.url, include=["results/dl19/**"], dest=dest)
    path = dest / "results" / "dl19" / "run_a.jsonl"
    prov = file_provenance(path)
    entry = next(f for f in r.manifest.files if f.path == "results/dl19/run_a.jsonl")
    assert prov.sha256 == entry.sha256 == sha256_file(path)
    assert prov.release is not None and prov.matches_manifest is True
    assert (prov.release.source, prov.release.commit, prov.release.repo_path) == (
        release.path.resolve().as_uri(), release.head, "results/dl19/run_a.jsonl")
    assert prov.to_json()["release"]["licence"] == "unknown"
    assert prov.to_json()["release"]["licence_words"] == "unknown (plain git; root licence file: none)"
    path.write_text("edited\n")
    assert file_provenance(path).matches_manifest is False


def test_provenance_follows_a_refetch_in_the_same_process(release, cache, tmp_path):
    dest = tmp_path / "out"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    path = dest / "results" / "dl19" / "run_a.jsonl"
    assert find_release(path).commit == release.head
    fetch(release.url, rev="v1", include=["results/dl19/**"], dest=dest)
    ref = find_release(path)
    assert ref.commit == release.first and file_provenance(path).matches_manifest is True


def test_host_without_licence_is_worded_for_notes(release, github, cache, tmp_path):
    dest = tmp_path / "out"
    fetch("org/study", include=["README.md"], dest=dest,
          http=HttpSettings(api_url=github.api, raw_url=github.raw, backoff=0))
    ref = find_release(dest / "README.md")
    assert ref.licence is None
    assert ref.licence_words == "no licence: reuse of the data is not licensed"


def test_provenance_markdown_groups_by_release_and_flags_changes(release, cache, tmp_path):
    import hashlib

    from replicate.provenance import provenance_markdown

    dest = tmp_path / "out"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    a, b = dest / "results/dl19/run_a.jsonl", dest / "results/dl19/run_b.jsonl"
    b.write_bytes(b"edited\n")
    local = tmp_path / "local.jsonl"
    local.write_bytes(b"{}\n")
    sha = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b, local)}
    md = provenance_markdown([file_provenance(local), file_provenance(a), file_provenance(b)])
    assert md.splitlines() == [
        f"- Data: {release.path.resolve().as_uri()} at commit `{release.head}`; licence: "
        "unknown (plain git; root licence file: none)",
        f"  - `results/dl19/run_a.jsonl`: sha256 `{sha[a]}` (matches the fetch manifest)",
        f"  - `results/dl19/run_b.jsonl`: sha256 `{sha[b]}` (CHANGED since the fetch: sha256 differs "
        "from the manifest)",
        "- Local files (not from a fetched release):",
        f"  - `{local}`: sha256 `{sha[local]}`",
    ]
    assert file_provenance(a).to_json()["release"]["licence_files"] == []
