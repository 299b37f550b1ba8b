"""The http transport against a GitHub-shaped server on 127.0.0.1 (backed by a real repository)."""

from __future__ import annotations

import pytest

from replicate.errors import UsageError
from replicate.fetch import (
    HttpSettings,
    OfflineMissing,
    PathNotFound,
    RateLimited,
    RepositoryNotFound,
    RevisionNotFound,
    TransportError,
    fetch,
)
from replicate.fetch.errors import IntegrityError
from support.repos import blob_bytes


class Sleeps(list):
    def __call__(self, secs: float) -> None:
        self.append(secs)


def _settings(gh, **kw) -> HttpSettings:
    base = dict(api_url=gh.api, raw_url=gh.raw, timeout=2.0, retries=2, backoff=0.01)
    base.update(kw)
    return HttpSettings(**base)


def _fetch(gh, dest, **kw):
    http = kw.pop("http", None) or _settings(gh)
    kw.setdefault("sleep", Sleeps())
    return fetch("org/study", dest=dest, http=http, **kw)


def _raw_requests(gh) -> list[str]:
    return [p.split("/", 4)[-1] for p in gh.log if p.startswith("/raw/")]


def test_http_fetch_records_host_metadata_and_matches_git(release, github, cache, tmp_path):
    r = _fetch(github, tmp_path / "h", include=["results/**"])
    m = r.manifest
    assert (m.via, m.source, m.commit, m.rev) == ("http", "org/study", release.head, None)
    assert m.repository.to_json() == {
        "metadata_from": "github-api", "default_branch": "main", "created_at": "2021-03-04T05:06:07Z",
        "licence": None, "licence_files": [], "description": "a study"}
    assert m.repository.licence_words == "no licence: reuse of the data is not licensed"
    assert github.log[:3] == ["/api/repos/org/study", "/api/repos/org/study/commits/main",
                              f"/api/repos/org/study/git/trees/{release.repo.git.rev_parse(release.head + '^{tree}')}"
                              "?recursive=1"]
    # The symlink is never requested; the LFS pointer is read (it is small) but not written.
    assert sorted(_raw_requests(github)) == sorted(
        f"{release.head}/{p}" for p in ["results/big.bin", "results/dl19/run_a.jsonl",
                                        "results/dl19/run_b.jsonl", "results/model.jsonl", "results/notes.txt"])
    assert [(s.path, s.reason) for s in m.skipped] == [("results/model.jsonl", "lfs-pointer"),
                                                       ("results/readme_link", "symlink")]
    g = fetch(release.url, include=["results/**"], dest=tmp_path / "g")
    assert g.manifest.files == m.files  # same bytes, same hashes, whichever transport


def test_spdx_licence_and_tag(release, github, cache, tmp_path):
    github.license = {"key": "mit", "spdx_id": "MIT", "name": "MIT License"}
    r = _fetch(github, tmp_path / "o", rev="v1", include=["results_2020/**"])
    assert r.manifest.commit == release.first and r.manifest.repository.licence == "MIT"
    assert r.manifest.repository.licence_words == "MIT"


def test_unknown_repository(github, cache, tmp_path):
    github.name = "other"
    with pytest.raises(RepositoryNotFound, match=r"^repository org/study not found on the host \(check the "
                                                 r"name; a private repository needs GITHUB_TOKEN\)$"):
        _fetch(github, tmp_path / "o")


def test_unknown_revision(github, cache, tmp_path):
    with pytest.raises(RevisionNotFound, match="^org/study has no commit, branch or tag 'v9'$"):
        _fetch(github, tmp_path / "o", rev="v9")


def test_missing_raw_file(release, github, cache, tmp_path):
    github.fail(r"/raw/.*run_b", status=404)
    with pytest.raises(PathNotFound, match=rf"org/study@{release.head}: results/dl19/run_b.jsonl listed in "
                                           r"the tree but not found at http://127.0.0.1:\d+/raw/org/study/"):
        _fetch(github, tmp_path / "o", include=["results/dl19/**"])


def test_rate_limit_403_reports_reset_time(github, cache, tmp_path):
    github.fail(r"/commits/", status=403, headers={"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
                                                   "X-RateLimit-Reset": "4102444800"})
    with pytest.raises(RateLimited, match=r"rate limited by the host \(HTTP 403\) on GET .*/commits/main: the "
                                          r"limit resets at 2100-01-01T00:00:00Z .*set GITHUB_TOKEN") as info:
        _fetch(github, tmp_path / "o")
    assert info.value.reset_at == "2100-01-01T00:00:00Z"
    assert info.value.exit_code == 2


def test_rate_limit_429_retry_after(github, cache, tmp_path):
    github.fail(r"/api/repos/org/study$", status=429, headers={"Retry-After": "42"})
    with pytest.raises(RateLimited, match=r"\(HTTP 429\) .*: retry after 42 s"):
        _fetch(github, tmp_path / "o")


def test_plain_403_is_not_a_rate_limit(github, cache, tmp_path):
    github.fail(r"/api/repos/org/study$", status=403)
    with pytest.raises(Exception, match=r"HTTP 403 forbidden \(a private repository needs GITHUB_TOKEN\)") as info:
        _fetch(github, tmp_path / "o")
    assert not isinstance(info.value, RateLimited)


def test_5xx_retried_with_backoff_then_success(release, github, cache, tmp_path):
    github.fail(r"/api/repos/org/study$", status=500, times=1)
    github.fail(r"/raw/.*run_a", status=502, times=2)
    sleeps = Sleeps()
    r = _fetch(github, tmp_path / "o", include=["results/dl19/**"], sleep=sleeps,
               http=_settings(github, backoff=0.01, retries=2))
    assert r.written == ("results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl")
    assert sleeps == [0.01, 0.01, 0.02]  # one retry for the API, two for the raw file
    assert github.log.count("/api/repos/org/study") == 2


def test_5xx_gives_up_after_retries(github, cache, tmp_path):
    github.fail(r"/commits/", status=503, times=10)
    sleeps = Sleeps()
    with pytest.raises(TransportError, match=r"GET .*/commits/main failed after 3 attempts: HTTP 503$"):
        _fetch(github, tmp_path / "o", sleep=sleeps)
    assert sleeps == [0.01, 0.02]


def test_slow_answer_times_out_and_is_retried(github, cache, tmp_path):
    github.fail(r"/commits/", delay=0.6)
    sleeps = Sleeps()
    r = _fetch(github, tmp_path / "o", include=["README.md"], sleep=sleeps, http=_settings(github, timeout=0.2))
    assert r.written == ("README.md",) and sleeps == [0.01]
    github.fail(r"/commits/", delay=0.6, times=3)
    with pytest.raises(TransportError, match=r"failed after 3 attempts: no answer within 0.2 s"):
        _fetch(github, tmp_path / "p", include=["README.md"], http=_settings(github, timeout=0.2))


def test_connection_cut_mid_file_is_retried(release, github, cache, tmp_path):
    github.fail(r"/raw/.*big.bin", drop_after=100)
    r = _fetch(github, tmp_path / "o", include=["results/big.bin"])
    assert (tmp_path / "o/results/big.bin").read_bytes() == blob_bytes(release.repo, release.head, "results/big.bin")
    assert len([p for p in github.log if p.endswith("big.bin")]) == 2 and r.downloaded == 1


def test_interrupted_fetch_leaves_no_complete_looking_file(github, cache, tmp_path):
    github.fail(r"/raw/.*big.bin", drop_after=100, times=1)
    dest = tmp_path / "o"
    with pytest.raises(TransportError, match=r"big.bin failed after 1 attempts: download interrupted"):
        _fetch(github, dest, include=["results/big.bin"], http=_settings(github, retries=0))
    assert [p for p in dest.rglob("*") if p.is_file()] == []
    assert not list((cache / "objects").rglob("*")) or all(p.is_dir() for p in (cache / "objects").rglob("*"))
    r = _fetch(github, dest, include=["results/big.bin"])  # the same DIR works afterwards
    assert r.written == ("results/big.bin",)


def test_wrong_bytes_are_rejected(github, cache, tmp_path):
    github.fail(r"/raw/.*notes.txt", replace_body=b"notes!\n", times=5)
    with pytest.raises(IntegrityError, match=r"received 7 bytes with git blob id [0-9a-f]{40}, expected 6 "
                                             r"bytes .* the host may have served Git LFS content"):
        _fetch(github, tmp_path / "o", include=["results/notes.txt"])
    assert not (tmp_path / "o/results/notes.txt").exists()


def test_size_limit_checked_before_download(github, cache, tmp_path):
    r = _fetch(github, tmp_path / "o", include=["results/big.bin", "README.md"], max_size=1000)
    assert r.written == ("README.md",) and [s.reason for s in r.skipped] == ["too-large"]
    assert not any(p.endswith("big.bin") for p in github.log)


def test_refused_paths_from_the_tree_are_never_requested(github, cache, tmp_path):
    sha = "ce013625030ba8dba906f756967f9e9ca394464a"
    github.extra_items = [
        {"path": "../../escape.txt", "mode": "100644", "type": "blob", "sha": sha, "size": 6},
        {"path": "/etc/cron.d/x", "mode": "100644", "type": "blob", "sha": sha, "size": 6},
        {"path": "vendor/lib", "mode": "160000", "type": "commit", "sha": sha},
    ]
    r = _fetch(github, tmp_path / "o", include=["**"])
    assert [(s.path, s.reason) for s in r.skipped if s.reason in ("refused-path", "submodule")] == [
        ("../../escape.txt", "refused-path"), ("/etc/cron.d/x", "refused-path"), ("vendor/lib", "submodule")]
    assert not any("escape" in p or "cron" in p or "vendor" in p for p in github.log)
    assert not (tmp_path / "escape.txt").exists()


def test_truncated_tree_is_walked_by_directory(release, github, cache, tmp_path):
    github.truncate_over = 3
    r = _fetch(github, tmp_path / "o", include=["results/dl19/**"])
    assert r.written == ("results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl")
    assert not r.listing_complete
    results_2020 = release.repo.git.rev_parse(f"{release.head}:results_2020")
    assert not any(results_2020 in p for p in github.log)  # directories no glob can match are not listed
    github.truncate_over = None
    full = _fetch(github, tmp_path / "p", include=["results/dl19/**"], cache_dir=tmp_path / "c2")
    assert full.manifest.files == r.manifest.files and full.listing_complete


def test_token_sent_as_header_and_never_shown(github, cache, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "tok-123-secret")
    monkeypatch.setenv("REPLICATE_GITHUB_API", github.api)
    monkeypatch.setenv("REPLICATE_GITHUB_RAW", github.raw)
    fetch("org/study", include=["README.md"], dest=tmp_path / "o")
    assert set(github.auth) == {"Bearer tok-123-secret"}
    github.fail(r"/commits/", status=503, times=10)
    with pytest.raises(TransportError) as info:
        fetch("org/study", dest=tmp_path / "p", http=HttpSettings.from_env(retries=0))
    assert "tok-123" not in str(info.value)


def test_no_token_no_header(github, cache, tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    _fetch(github, tmp_path / "o", include=["README.md"])
    assert set(github.auth) == {None}


def test_refetch_needs_no_tree_or_file_requests(github, cache, tmp_path):
    _fetch(github, tmp_path / "o", include=["results/**"])
    github.log.clear()
    r = _fetch(github, tmp_path / "o", include=["results/**"])
    assert r.written == () and r.downloaded == 0
    assert github.log == ["/api/repos/org/study", "/api/repos/org/study/commits/main"]


def test_offline_after_http_fetch(release, github, cache, tmp_path):
    _fetch(github, tmp_path / "o", include=["results/dl19/**"])
    github.stop()
    r = fetch("org/study", include=["results/dl19/**"], dest=tmp_path / "p", offline=True)
    assert r.manifest.commit == release.head and r.manifest.repository.licence is None
    assert r.manifest.via == "http"  # how the cached bytes were obtained
    again = fetch("org/study", include=["results/dl19/**"], dest=tmp_path / "o", via="git", offline=True)
    assert again.written == () and again.manifest.via == "http"
    with pytest.raises(OfflineMissing, match=r"1 file\(s\) .* not in the cache: README.md"):
        fetch("org/study", include=["README.md"], dest=tmp_path / "q", offline=True)
    github.start()  # the fixture stops it again


def test_via_http_needs_a_github_source(release, cache, tmp_path):
    with pytest.raises(UsageError, match=r"via http needs a GitHub source .*: use via git or auto"):
        fetch(release.url, via="http", dest=tmp_path / "o")
    with pytest.raises(UsageError, match=r"via: 'ftp' is not one of auto, git, http"):
        fetch(release.url, via="ftp", dest=tmp_path / "o")


def test_raw_files_are_downloaded_concurrently(github, cache, tmp_path):
    github.fail(r"/raw/", delay=0.2, times=4)  # each download waits: they must overlap
    r = _fetch(github, tmp_path / "o", include=["results/dl19/**", "results/notes.txt", "README.md"],
               http=_settings(github, jobs=4))
    assert r.downloaded == 4 and github.max_inflight >= 2
    github.max_inflight = 0
    _fetch(github, tmp_path / "p", include=["results_2020/**", "results/big.bin"],
           http=_settings(github, jobs=1), cache_dir=tmp_path / "c1")
    assert github.max_inflight == 1


def test_each_retry_is_said_with_what_failed_and_the_wait(github, cache, tmp_path):
    # offline or a failing host must not look like a hang: every retry is a progress event
    github.fail(r"/commits/", status=503, times=10)
    said: list[tuple[str, str]] = []
    with pytest.raises(TransportError):
        _fetch(github, tmp_path / "o", progress=lambda event, what: said.append((event, what)))
    retries = [what for event, what in said if event == "retry"]
    assert len(retries) == 2
    assert retries[0].endswith("/commits/main: HTTP 503; retry 1 of 2 in 0.01 s")
    assert retries[1].endswith("/commits/main: HTTP 503; retry 2 of 2 in 0.02 s")


def test_without_a_terminal_the_cli_still_prints_retries(capsys):
    from replicate.cli.fetch_cmds import _waits_only

    _waits_only("retry", "GET x: connection failed (ConnectionError); retry 1 of 4 in 0.5 s")
    _waits_only("download", "a.jsonl (1/2)")
    err = capsys.readouterr().err
    assert err == "retry: GET x: connection failed (ConnectionError); retry 1 of 4 in 0.5 s\n"
