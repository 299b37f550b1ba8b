"""Build real git repositories with gitpython, shaped like a study's release."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import git

LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345678\n"
)


@dataclass(frozen=True)
class Release:
    path: Path
    repo: git.Repo
    first: str  # commit ids
    second: str
    head: str
    tag: str  # tag name pointing at ``first`` (annotated)

    @property
    def url(self) -> str:
        return self.path.as_uri()


def init_repo(path: Path) -> git.Repo:
    """An empty repository on branch ``main`` with a test identity, no signing, and the
    settings file:// clients need for partial clones and single-blob requests."""
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Test")
        cw.set_value("user", "email", "test@example.org")
        cw.set_value("uploadpack", "allowFilter", "true")
        cw.set_value("uploadpack", "allowAnySHA1InWant", "true")
        cw.set_value("commit", "gpgsign", "false")
        cw.set_value("tag", "gpgsign", "false")
    return repo


def commit_files(repo: git.Repo, files: dict[str, bytes], message: str = "c") -> str:
    """Write, add and commit ``files`` (repository path -> bytes); returns the commit id."""
    root = Path(repo.working_tree_dir)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        repo.git.add(rel)
    repo.git.commit("-q", "-m", message)
    return repo.head.commit.hexsha


def _commit(repo: git.Repo, files: dict[str, bytes | None], message: str, when: str) -> str:
    root = Path(repo.working_tree_dir)
    for rel, data in files.items():
        p = root / rel
        if data is None:
            repo.git.rm("-q", rel)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        repo.git.add(rel)
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    repo.git.commit("-q", "-m", message, env=env)
    return repo.head.commit.hexsha


def build_release(root: Path, *, name: str = "study", licence: bytes | None = None) -> Release:
    """A repository with three commits, an annotated tag, an LFS pointer, a symlink,
    a larger file and the nested ``results/`` + ``results_2020/`` layout."""
    path = root / name
    repo = init_repo(path)
    files: dict[str, bytes | None] = {
        "README.md": b"# study\n",
        "results/dl19/run_a.jsonl": b'{"qid": 1, "label": 2}\n{"qid": 2, "label": 0}\n',
        "results/dl19/run_b.jsonl": b'{"qid": 1, "label": 3}\n',
        "results_2020/run_a.jsonl": b'{"qid": 9, "label": 1}\n',
    }
    if licence is not None:
        files["LICENSE"] = licence
    first = _commit(repo, files, "first release", "2021-01-01T00:00:00Z")
    repo.git.tag("-a", "v1", "-m", "version 1", first)
    second = _commit(repo, {
        "results/dl19/run_a.jsonl": b'{"qid": 1, "label": 1}\n{"qid": 2, "label": 0}\n',
        "results/big.bin": bytes(range(256)) * 20,  # 5120 bytes
        "results/model.jsonl": LFS_POINTER,
        ".gitattributes": b"results/model.jsonl filter=lfs diff=lfs merge=lfs -text\n",
    }, "second release", "2021-02-01T00:00:00Z")
    os.symlink("../README.md", path / "results" / "readme_link")
    repo.git.add("results/readme_link")
    head = _commit(repo, {"results/notes.txt": b"notes\n"}, "add notes and a symlink",
                   "2021-03-01T00:00:00Z")
    return Release(path, repo, first, second, head, "v1")


def blob_bytes(repo: git.Repo, commit: str, path: str) -> bytes:
    return repo.git.execute(["git", "cat-file", "blob", f"{commit}:{path}"], stdout_as_string=False, strip_newline_in_stdout=False)
