"""The manifest ``DIR/replicate-manifest.json``: typed form, reading, writing, checking.

The manifest is what :mod:`replicate.provenance` reads to attach source,
commit, per-file sha256 and licence status to every file other commands read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from replicate.errors import BadInput, CheckFailed
from replicate.fetch.safety import refuse_path
from replicate.fetch.writer import replacing
from replicate.provenance import MANIFEST_NAME, licence_words, sha256_file

SCHEMA_VERSION = 1

#: Why a selected tree entry was not written.
SkipReason = Literal["lfs-pointer", "too-large", "symlink", "submodule", "refused-path"]


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str
    size: int
    sha256: str
    git_blob: str | None = None  # git blob id (sha1) at the commit (of the LFS pointer, for an LFS object)
    lfs: bool = False  # the content is the LFS object the pointer names (its sha256 is the pointer's oid)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "size": self.size, "sha256": self.sha256}
        if self.git_blob:
            out["git_blob"] = self.git_blob
        if self.lfs:
            out["lfs"] = True
        return out


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: SkipReason
    detail: str
    size: int | None = None
    lfs: dict | None = None  # {"oid": "sha256:...", "size": n} for LFS pointers

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason, "detail": self.detail}
        if self.size is not None:
            out["size"] = self.size
        if self.lfs is not None:
            out["lfs"] = self.lfs
        return out


@dataclass(frozen=True, slots=True)
class RepositoryMeta:
    """What is known about the repository.

    ``licence``: an SPDX id (``"MIT"``, GitHub's ``"NOASSERTION"`` for an
    unrecognised licence file); ``None`` when the host says the repository has
    no licence; ``"unknown"`` when there is no host metadata (plain git).
    ``licence_files``: licence-like files at the root of the tree at the commit.
    """

    metadata_from: str  # "github-api" or "git"
    default_branch: str | None
    created_at: str | None
    licence: str | None
    licence_files: tuple[str, ...] = ()
    description: str | None = None

    def to_json(self) -> dict:
        return {
            "metadata_from": self.metadata_from,
            "default_branch": self.default_branch,
            "created_at": self.created_at,
            "licence": self.licence,
            "licence_files": list(self.licence_files),
            "description": self.description,
        }

    @classmethod
    def from_json(cls, d: dict) -> RepositoryMeta:
        return cls(
            metadata_from=d.get("metadata_from", "unknown"),
            default_branch=d.get("default_branch"),
            created_at=d.get("created_at"),
            licence=d.get("licence", "unknown"),
            licence_files=tuple(d.get("licence_files") or ()),
            description=d.get("description"),
        )

    @property
    def licence_words(self) -> str:
        """The licence status in words, as notes print it."""
        return licence_words(self.licence, self.licence_files)


@dataclass(frozen=True, slots=True)
class Manifest:
    source: str
    commit: str
    fetched_at: str
    via: str
    rev: str | None
    include: tuple[str, ...]
    repository: RepositoryMeta
    files: tuple[FileEntry, ...]
    skipped: tuple[Skipped, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "source": self.source,
            "rev": self.rev,
            "commit": self.commit,
            "fetched_at": self.fetched_at,
            "via": self.via,
            "include": list(self.include),
            "repository": self.repository.to_json(),
            "files": [f.to_json() for f in self.files],
            "skipped": [s.to_json() for s in self.skipped],
        }

    @classmethod
    def from_json(cls, d: Any, *, path: str | os.PathLike[str] = MANIFEST_NAME) -> Manifest:
        if not isinstance(d, dict):
            raise BadInput("manifest is not a JSON object", path=path)
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise BadInput(
                f"schema_version {version!r} is not supported (this replicate reads {SCHEMA_VERSION})",
                path=path,
            )
        try:
            files = tuple(
                FileEntry(f["path"], int(f["size"]), f["sha256"], f.get("git_blob"), f.get("lfs") is True)
                for f in d["files"]
            )
            for f in files:
                reason = refuse_path(f.path) if isinstance(f.path, str) else "not a string"
                if reason is not None:
                    raise BadInput(f"manifest lists the file path {f.path!r}, which is refused: {reason}",
                                   path=path)
            skipped = tuple(
                Skipped(s["path"], s["reason"], s.get("detail", ""), s.get("size"), s.get("lfs"))
                for s in d.get("skipped", ())
            )
            return cls(
                source=d["source"],
                commit=d["commit"],
                fetched_at=d["fetched_at"],
                via=d["via"],
                rev=d.get("rev"),
                include=tuple(d.get("include") or ()),
                repository=RepositoryMeta.from_json(d.get("repository") or {}),
                files=files,
                skipped=skipped,
            )
        except KeyError as exc:
            raise BadInput(f"manifest is malformed: missing field {exc.args[0]!r}", path=path) from None
        except (TypeError, ValueError) as exc:
            raise BadInput(f"manifest is malformed: {exc}", path=path) from None


def read_manifest(directory: str | os.PathLike[str]) -> Manifest:
    if Path(directory).exists() and not Path(directory).is_dir():
        raise BadInput("not a directory: expected the directory replicate fetch wrote", path=directory)
    path = Path(directory) / MANIFEST_NAME
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(
            f"no {MANIFEST_NAME} here: not a directory written by replicate fetch", path=directory
        ) from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON: {exc}", path=path) from None
    return Manifest.from_json(data, path=path)


def write_manifest(directory: str | os.PathLike[str], manifest: Manifest) -> Path:
    """Write the manifest atomically (temporary file, fsync, then rename), readable like the files it lists."""
    target = Path(directory) / MANIFEST_NAME
    with replacing(target, mode=0o644) as fh:
        fh.write(orjson.dumps(manifest.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
    return target


# -- checking ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mismatch:
    path: str
    problem: str  # "missing", "changed", "not a regular file"
    expected_sha256: str
    actual_sha256: str | None = None
    expected_size: int | None = None
    actual_size: int | None = None

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "problem": self.problem,
            "expected_sha256": self.expected_sha256,
            "actual_sha256": self.actual_sha256,
            "expected_size": self.expected_size,
            "actual_size": self.actual_size,
        }


@dataclass(frozen=True, slots=True)
class CheckResult:
    """``replicate fetch --check DIR``: every manifest file rehashed."""

    directory: str
    manifest: Manifest
    matched: tuple[str, ...]
    mismatches: tuple[Mismatch, ...]
    unlisted: tuple[str, ...] = field(default=())  # files in DIR the manifest does not list

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def to_json(self) -> dict:
        return {
            "directory": self.directory,
            "source": self.manifest.source,
            "commit": self.manifest.commit,
            "ok": self.ok,
            "checked": len(self.matched) + len(self.mismatches),
            "matched": list(self.matched),
            "mismatches": [m.to_json() for m in self.mismatches],
            "unlisted": list(self.unlisted),
        }

    def raise_for_status(self) -> None:
        if not self.ok:
            names = ", ".join(f"{m.path} ({m.problem})" for m in self.mismatches)
            raise CheckFailed(
                f"{len(self.mismatches)} of {len(self.matched) + len(self.mismatches)} files "
                f"do not match {MANIFEST_NAME}: {names}"
            )


def check_directory(directory: str | os.PathLike[str]) -> CheckResult:
    """Rehash every file the manifest lists; report missing and changed ones."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    matched: list[str] = []
    bad: list[Mismatch] = []
    for entry in manifest.files:
        target = directory.joinpath(*entry.path.split("/"))
        if not target.exists() and not target.is_symlink():
            bad.append(Mismatch(entry.path, "missing", entry.sha256, expected_size=entry.size))
            continue
        if target.is_symlink() or not target.is_file():
            bad.append(
                Mismatch(entry.path, "not a regular file", entry.sha256, expected_size=entry.size)
            )
            continue
        size = target.stat().st_size
        digest = sha256_file(target)
        if digest != entry.sha256 or size != entry.size:
            bad.append(Mismatch(entry.path, "changed", entry.sha256, digest, entry.size, size))
        else:
            matched.append(entry.path)
    listed = {e.path for e in manifest.files}
    unlisted = sorted(
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if (p.is_file() or p.is_symlink())
        and p.name != MANIFEST_NAME
        and p.relative_to(directory).as_posix() not in listed
    )
    return CheckResult(str(directory), manifest, tuple(matched), tuple(bad), tuple(unlisted))
