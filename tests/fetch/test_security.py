"""Nothing from a fetched repository runs, nothing is written outside DEST, no token is shown.

Each test first shows that plain git *does* run the thing under the same
configuration (the control), so the assertion about ``replicate fetch`` can fail.
"""

from __future__ import annotations

import os
import stat
import subprocess

import git
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.fetch import FetchError, fetch, parse_source
from replicate.fetch.cache import Cache
from replicate.provenance import MANIFEST_NAME
from support.repos import commit_files, init_repo


def _repo(path, files: dict[str, bytes]) -> git.Repo:
    repo = init_repo(path)
    commit_files(repo, files)
    return repo


def _global_config(tmp_path, monkeypatch, text: str) -> None:
    cfg = tmp_path / "gitconfig"
    cfg.write_text(text)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))


def test_filters_named_by_the_repository_never_run(tmp_path, monkeypatch):
    # The repository asks for a filter by .gitattributes; the user's git config defines it
    # (as git-lfs does). A checkout would run it; replicate fetch checks nothing out.
    marker = tmp_path / "filter-ran"
    data = b'{"qid": 1}\n'
    repo = _repo(tmp_path / "src", {".gitattributes": b"*.jsonl filter=evil\n", "a.jsonl": data})
    _global_config(tmp_path, monkeypatch,
                   f"[filter \"evil\"]\n\tsmudge = touch '{marker}' && cat\n\tclean = cat\n")
    url = f"file://{repo.working_tree_dir}"
    subprocess.run(["git", "clone", "-q", url, str(tmp_path / "plain")], check=True)
    assert marker.exists()  # control: a plain clone runs the filter
    marker.unlink()
    r = fetch(url, dest=tmp_path / "o", cache_dir=tmp_path / "c")
    assert not marker.exists()
    assert r.written == (".gitattributes", "a.jsonl")
    assert (tmp_path / "o" / "a.jsonl").read_bytes() == data  # the blob as committed, unfiltered


def test_template_hooks_never_run(release, tmp_path, monkeypatch):
    # A hook in the user's clone template lands in every new repository git creates.
    template = tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    hook = template / "hooks" / "reference-transaction"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    _global_config(tmp_path, monkeypatch, f"[init]\n\ttemplateDir = {template}\n")
    subprocess.run(["git", "clone", "-q", "--bare", release.url, str(tmp_path / "plain.git")], check=True)
    assert marker.exists()  # control
    marker.unlink()
    fetch(release.url, include=["README.md"], dest=tmp_path / "o", cache_dir=tmp_path / "c")
    fetch(release.url, include=["results/notes.txt"], dest=tmp_path / "o", cache_dir=tmp_path / "c")
    assert not marker.exists()


def test_submodules_are_never_fetched(tmp_path, monkeypatch):
    sub = _repo(tmp_path / "sub", {"secret.txt": b"from the submodule\n"})
    sub_commit = sub.head.commit.hexsha
    _global_config(tmp_path, monkeypatch,
                   "[submodule]\n\trecurse = true\n[protocol \"file\"]\n\tallow = always\n")
    top = _repo(tmp_path / "top", {"README.md": b"top\n"})
    top.git.execute(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                     f"file://{sub.working_tree_dir}", "vendor/sub"])
    top.git.commit("-q", "-m", "add submodule")
    url = f"file://{top.working_tree_dir}"
    subprocess.run(["git", "clone", "-q", "--recurse-submodules", url, str(tmp_path / "plain")], check=True)
    assert (tmp_path / "plain" / "vendor" / "sub" / "secret.txt").exists()  # control: it can be fetched
    c = tmp_path / "c"
    r = fetch(url, dest=tmp_path / "o", cache_dir=c)
    assert [(s.path, s.reason) for s in r.skipped] == [("vendor/sub", "submodule")]
    assert r.written == (".gitmodules", "README.md")
    git_dir = Cache(c).git_dir(parse_source(url).cache_key)
    assert not (git_dir / "modules").exists()
    assert subprocess.run(["git", "-C", str(git_dir), "cat-file", "-e", sub_commit]).returncode != 0
    assert not any("secret" in p.name for p in c.rglob("*"))


def test_symlinked_directory_in_dest_is_refused_on_refetch(release, cache, tmp_path):
    # Someone replaced a fetched directory by a link to elsewhere: the next fetch must not follow it.
    dest = tmp_path / "o"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "results" / "dl19" / "run_a.jsonl").unlink()
    (dest / "results" / "dl19" / "run_b.jsonl").unlink()
    (dest / "results" / "dl19").rmdir()
    (dest / "results" / "dl19").symlink_to(outside, target_is_directory=True)
    with pytest.raises(FetchError, match=r"refusing to write 'results/dl19/run_a.jsonl': .* is a symbolic link"):
        fetch(release.url, include=["results/dl19/**"], dest=dest)
    assert list(outside.iterdir()) == []


def test_symlinked_file_in_dest_is_replaced_not_followed(release, cache, tmp_path):
    dest = tmp_path / "o"
    fetch(release.url, include=["results/dl19/**"], dest=dest)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me\n")
    target = dest / "results" / "dl19" / "run_a.jsonl"
    target.unlink()
    target.symlink_to(victim)
    r = fetch(release.url, include=["results/dl19/**"], dest=dest)
    assert r.written == ("results/dl19/run_a.jsonl",)
    assert victim.read_bytes() == b"keep me\n" and not target.is_symlink()


def test_token_never_appears_in_output_manifest_or_cache(release, github, cache, tmp_path, monkeypatch):
    token = "tok-SECRET-4242"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("REPLICATE_GITHUB_API", github.api)
    monkeypatch.setenv("REPLICATE_GITHUB_RAW", github.raw)
    runner = CliRunner()
    dest = tmp_path / "o"
    outs = [runner.invoke(app, ["fetch", "org/study", "-i", "results/**", "-d", str(dest), "-f", fmt])
            for fmt in ("table", "json", "markdown")]
    outs.append(runner.invoke(app, ["fetch", "--check", str(dest), "-f", "json"]))
    github.fail(r"/api/repos/org/study$", status=401, body=b'{"message": "Bad credentials"}')
    outs.append(runner.invoke(app, ["fetch", "org/study", "-d", str(tmp_path / "p")]))
    assert [r.exit_code for r in outs] == [0, 0, 0, 0, 2]
    assert "token in GITHUB_TOKEN was refused" in outs[-1].stderr
    assert set(github.auth) == {f"Bearer {token}"}  # it was sent
    for r in outs:
        assert token not in r.stdout + r.stderr
    for p in [*dest.rglob("*"), *cache.rglob("*")]:
        if p.is_file():
            assert token.encode() not in p.read_bytes(), p
    assert (dest / MANIFEST_NAME).is_file()
    assert os.environ["GITHUB_TOKEN"] == token
