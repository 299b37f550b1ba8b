"""Pure pieces of fetch: globs, path refusal, LFS pointers, sizes, sources, rate-limit messages."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from replicate.errors import UsageError
from replicate.fetch.errors import FetchError
from replicate.fetch.globs import Includes, glob_to_regex
from replicate.fetch.httpfetch import HttpSettings, rate_limit_error
from replicate.fetch.safety import (
    is_licence_file,
    parse_lfs_pointer,
    parse_size,
    refuse_path,
    safe_target,
)
from replicate.fetch.source import parse_source
from replicate.fetch.tree import git_blob_id

PATHS = [
    "README.md", "a.jsonl", "results/x.jsonl", "results/dl19/run_a.jsonl",
    "results_2020/run_a.jsonl", "results", "other/results/x.jsonl", "results/dl19/sub/deep.txt",
]


@pytest.mark.parametrize("pattern, expected", [
    ("results/**", {"results/x.jsonl", "results/dl19/run_a.jsonl", "results/dl19/sub/deep.txt"}),
    ("results/", {"results/x.jsonl", "results/dl19/run_a.jsonl", "results/dl19/sub/deep.txt"}),
    ("results", {"results", "results/x.jsonl", "results/dl19/run_a.jsonl", "results/dl19/sub/deep.txt"}),
    ("results*/**", {"results/x.jsonl", "results/dl19/run_a.jsonl", "results/dl19/sub/deep.txt",
                     "results_2020/run_a.jsonl"}),
    ("*.jsonl", {"a.jsonl"}),
    ("**/*.jsonl", {"a.jsonl", "results/x.jsonl", "results/dl19/run_a.jsonl",
                    "results_2020/run_a.jsonl", "other/results/x.jsonl"}),
    ("results/*/run_?.jsonl", {"results/dl19/run_a.jsonl"}),
    ("results/dl19/run_[!b].jsonl", {"results/dl19/run_a.jsonl"}),
    ("**/results/*.jsonl", {"results/x.jsonl", "other/results/x.jsonl"}),
])
def test_include_semantics(pattern, expected):
    inc = Includes((pattern,))
    assert {p for p in PATHS if inc.matches(p)} == expected


def test_single_star_agrees_with_fnmatch_inside_one_component():
    # Within one path component our '*' and '?' behave like fnmatch's.
    names = ["run_a.jsonl", "run_b.json", "x.jsonl", "run_.jsonl", "RUN_a.jsonl"]
    for pat in ["run_*.jsonl", "*.json?", "run_?.jsonl", "[rx]*"]:
        ours = {n for n in names if Includes((pat,)).matches(n)}
        assert ours == {n for n in names if fnmatch.fnmatchcase(n, pat)}, pat


def test_no_include_selects_everything_and_unmatched_lists_typos():
    assert all(Includes().matches(p) for p in PATHS)
    inc = Includes(("results/**", "reslts/**"))
    assert inc.unmatched(PATHS) == ["reslts/**"]


def test_may_contain_prunes_directories():
    inc = Includes(("results/dl*/**",))
    assert inc.may_contain("results") and inc.may_contain("results/dl19")
    assert not inc.may_contain("results_2020") and not inc.may_contain("results/other")
    assert Includes(("**/x.jsonl",)).may_contain("any/where")


@pytest.mark.parametrize("bad", ["", "/abs/**"])
def test_include_rejects_absolute_or_empty(bad):
    with pytest.raises(ValueError, match="include: .* is not a repository path pattern"):
        glob_to_regex(bad)


@pytest.mark.parametrize("path, reason", [
    ("../x", "'..' component"),
    ("a/../../x", "'..' component"),
    ("/etc/passwd", "absolute path"),
    ("C:/x", "absolute path"),
    ("a\\b", "backslash"),
    ("a//b", "empty path component"),
    ("./a", "'.' component"),
    (".git/config", "'.git' component"),
    ("sub/.GIT/hooks/post-checkout", "'.git' component"),
    ("a\nb", "control character"),
    ("", "empty path"),
])
def test_refuse_path(path, reason):
    assert reason in refuse_path(path)


@pytest.mark.parametrize("ok", ["results/x.jsonl", ".gitattributes", "a..b/c", "x/.github/y", "...a"])
def test_accept_path(ok):
    assert refuse_path(ok) is None


def test_safe_target_refuses_symlinked_directory_in_dest(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "results").symlink_to(outside)
    with pytest.raises(FetchError, match=r"refusing to write 'results/x': .*results is a symbolic link"):
        safe_target(dest, "results/x")
    assert safe_target(dest, "other/x") == dest.resolve() / "other" / "x"


POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
           b"oid sha256:" + b"ab" * 32 + b"\nsize 987654\n")


def test_lfs_pointer_detected():
    ptr = parse_lfs_pointer(POINTER)
    assert ptr is not None and ptr.size == 987654 and ptr.oid == "ab" * 32
    assert ptr.to_json() == {"oid": "sha256:" + "ab" * 32, "size": 987654}


@pytest.mark.parametrize("data", [
    b'{"qid": 1}\n',
    POINTER.replace(b"oid sha256:", b"oid md5:"),  # no sha256 oid
    POINTER.replace(b"size 987654\n", b""),  # no size
    b"x" + POINTER,  # header not first
    POINTER + b"x" * 1024,  # longer than any pointer may be
])
def test_not_lfs_pointer(data):
    assert parse_lfs_pointer(data) is None


@pytest.mark.parametrize("text, n", [("0", 0), ("1048576", 1 << 20), ("50M", 50 << 20), ("2GiB", 2 << 30),
                                      ("3k", 3072), (12, 12)])
def test_parse_size(text, n):
    assert parse_size(text) == n


def test_parse_size_rejects():
    with pytest.raises(ValueError, match=r"max_size: cannot read '12 apples'; give bytes"):
        parse_size("12 apples")


def test_licence_files():
    yes = ["LICENSE", "LICENSE.md", "licence.txt", "COPYING", "COPYING.LESSER", "UNLICENSE", "LICENSE-MIT"]
    no = ["README.md", "mylicense", "LICENSES", "license"[1:]]
    assert all(is_licence_file(n) for n in yes)
    assert not any(is_licence_file(n) for n in no)


def test_git_blob_id_matches_git():
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_parse_source_forms(tmp_path):
    gh = parse_source("org/study", cwd=tmp_path)
    assert (gh.kind, gh.canonical, gh.github) == ("github", "org/study", ("org", "study"))
    assert gh.git_url == "https://github.com/org/study.git"
    url = parse_source("https://github.com/org/study.git")
    assert (url.kind, url.canonical, url.github) == ("github", "org/study", ("org", "study"))
    other = parse_source("https://git.example.org/group/study.git")
    assert (other.kind, other.github, other.name) == ("https", None, "study")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    local = parse_source("repo", cwd=tmp_path)
    assert local.kind == "path" and local.git_url == (tmp_path / "repo").resolve().as_uri()
    assert parse_source(local.git_url).canonical == local.canonical  # same cache key either way
    assert gh.cache_key != other.cache_key


def test_local_directory_wins_over_owner_repo(tmp_path):
    (tmp_path / "org" / "study" / ".git").mkdir(parents=True)
    assert parse_source("org/study", cwd=tmp_path).kind == "path"


@pytest.mark.parametrize("bad, match", [
    ("not a repo", "is neither an existing local path nor owner/repo"),
    ("ssh://host/x", "unsupported scheme"),
    ("https://user:pw@host/x.git", "must not carry credentials"),
])
def test_parse_source_rejects(bad, match, tmp_path):
    with pytest.raises(UsageError, match=match):
        parse_source(bad, cwd=tmp_path)


def test_parse_source_rejects_non_repository_directory(tmp_path):
    with pytest.raises(UsageError, match="is not a git repository"):
        parse_source(str(tmp_path))


class _Resp:
    def __init__(self, status, headers):
        self.status_code, self.headers = status, headers


def test_rate_limit_message_uses_reset_header():
    err = rate_limit_error(_Resp(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000600"}),
                           "U", now=1700000000)
    assert str(err) == ("rate limited by the host (HTTP 403) on GET U: the limit resets at "
                        "2023-11-14T22:23:20Z (in about 10 min); set GITHUB_TOKEN for a higher limit")
    assert err.reset_at == "2023-11-14T22:23:20Z"


def test_rate_limit_message_uses_retry_after():
    err = rate_limit_error(_Resp(429, {"Retry-After": "30"}), "U", now=1700000000)
    assert "retry after 30 s (2023-11-14T22:13:50Z)" in str(err)


def test_settings_from_env_and_token_not_in_repr(monkeypatch):
    monkeypatch.setenv("REPLICATE_GITHUB_API", "http://127.0.0.1:1/api/")
    monkeypatch.setenv("GITHUB_TOKEN", "sekrit-token")
    s = HttpSettings.from_env(timeout=2.0)
    assert s.api_url == "http://127.0.0.1:1/api" and s.token == "sekrit-token" and s.timeout == 2.0
    assert "sekrit" not in repr(s)
    assert HttpSettings.from_env(api_url="http://x").api_url == "http://x"


def test_dest_default_name():
    assert parse_source("org/study.git").name == "study"
    assert Path("study") == Path(parse_source("https://host/a/study.git").name)


def test_write_checked_keeps_the_old_file_and_no_temporary_on_mismatch(tmp_path):
    from replicate.fetch.errors import IntegrityError
    from replicate.fetch.writer import write_checked

    target = tmp_path / "d" / "f.txt"
    good = b"hello\n"
    write_checked(target, [good[:2], good[2:]], size=6, blob=git_blob_id(good), what="f.txt", got="received")
    assert target.read_bytes() == good
    with pytest.raises(IntegrityError, match=r"^f.txt: received 7 bytes with git blob id [0-9a-f]{40}, "
                                             r"expected 6 bytes with id [0-9a-f]{40}; nothing was written$"):
        write_checked(target, [b"hello!\n"], size=6, blob=git_blob_id(good), what="f.txt", got="received")
    assert target.read_bytes() == good
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.txt"]


def test_write_verified_returns_sha256_and_makes_a_readable_file(tmp_path):
    import hashlib

    from replicate.fetch.writer import write_verified

    data = b"a,b\n1,2\n"
    digest = write_verified(tmp_path, "results/x.csv", iter([data]), size=len(data), blob=git_blob_id(data))
    assert digest == hashlib.sha256(data).hexdigest()
    out = tmp_path / "results/x.csv"
    assert out.read_bytes() == data and out.stat().st_mode & 0o777 == 0o644
