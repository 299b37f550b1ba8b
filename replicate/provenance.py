"""Where every input came from: path, size, sha256 and, for fetched files, the release.

Every command that reads files records a :class:`FileProvenance` for each one.
When a file lies inside a directory written by ``replicate fetch`` (one holding
``replicate-manifest.json``), the record also names the repository, the pinned
commit, the file's path in the repository and the licence status, and says
whether the bytes read still match the manifest's hash; :func:`fetch_commands`
writes the ``replicate fetch`` commands that bring such files back.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePath, PurePosixPath

import orjson

MANIFEST_NAME = "replicate-manifest.json"


@dataclass(frozen=True, slots=True)
class ReleaseRef:
    """The fetched release a file belongs to (from its manifest)."""

    manifest: str
    source: str
    commit: str
    repo_path: str
    licence: str | None  # SPDX id; None = the host says there is none; "unknown" = no host metadata
    manifest_sha256: str | None
    licence_files: tuple[str, ...] = ()  # licence-like files at the repository root

    @property
    def licence_words(self) -> str:
        """The licence status in words, for notes (see :func:`licence_words`)."""
        return licence_words(self.licence, self.licence_files)

    def to_json(self) -> dict:
        return {
            "manifest": self.manifest,
            "source": self.source,
            "commit": self.commit,
            "repo_path": self.repo_path,
            "licence": self.licence,
            "licence_words": self.licence_words,
            "licence_files": list(self.licence_files),
        }


def licence_words(licence: str | None, licence_files: tuple[str, ...] | list[str] = ()) -> str:
    """A manifest's licence status in words.

    ``None`` (the host says the repository has no licence) reads "no licence:
    reuse of the data is not licensed"; ``"unknown"`` (plain git, no host
    metadata) names the root licence files found, if any.
    """
    root = ", ".join(licence_files) if licence_files else "none"
    if licence == "unknown":
        return f"unknown (plain git; root licence file: {root})"
    if licence is None:
        return "no licence: reuse of the data is not licensed"
    if licence == "NOASSERTION":
        return f"licence file not recognised by the host (NOASSERTION; root licence file: {root})"
    return licence


@dataclass(frozen=True, slots=True)
class FileProvenance:
    path: str
    size: int
    sha256: str
    release: ReleaseRef | None = None

    @property
    def matches_manifest(self) -> bool | None:
        if self.release is None or self.release.manifest_sha256 is None:
            return None
        return self.release.manifest_sha256 == self.sha256

    def to_json(self) -> dict:
        out: dict = {"path": self.path, "size": self.size, "sha256": self.sha256}
        if self.release is not None:
            out["release"] = self.release.to_json()
            out["matches_manifest"] = self.matches_manifest
        return out

    def manifest_words(self) -> str:
        """How the bytes read compare with the fetch manifest, in words."""
        m = self.matches_manifest
        if m is None:
            return "not from a fetched release" if self.release is None else "not listed in the fetch manifest"
        return "matches the fetch manifest" if m else "CHANGED since the fetch: sha256 differs from the manifest"


def provenance_markdown(files: Iterable[FileProvenance]) -> str:
    """Markdown lines naming, per release, its source, commit and licence, then each file's sha256.

    For renderers of commands that read files, so every note says what it read::

        - Data: org/study at commit `0123...`; licence: no licence: reuse of the data is not licensed
          - `results/a.jsonl`: sha256 `ab12...` (matches the fetch manifest)
        - Local files (not from a fetched release):
          - `old.jsonl`: sha256 `cd34...`
    """
    groups: dict[tuple[str, str, str] | None, list[FileProvenance]] = {}
    for f in files:
        key = None if f.release is None else (f.release.source, f.release.commit, f.release.licence_words)
        groups.setdefault(key, []).append(f)
    lines = []
    for key, members in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or ())):
        if key is None:
            lines.append("- Local files (not from a fetched release):")
        else:
            source, commit, words = key
            lines.append(f"- Data: {source} at commit `{commit}`; licence: {words}")
        for f in members:
            name = f.release.repo_path if f.release is not None else f.path
            tail = f" ({f.manifest_words()})" if f.release is not None else ""
            lines.append(f"  - `{name}`: sha256 `{f.sha256}`{tail}")
    return "\n".join(lines)


def _glob(path: PurePosixPath) -> str:
    return f"{path.parent}/**" if str(path.parent) != "." else str(path)


def minimal_globs(globs: list[str]) -> list[str]:
    """``globs`` without those another one covers (``a/b/**`` under ``a/**``), first-seen order kept."""
    dirs = [g[: -len("/**")] for g in globs if g.endswith("/**")]

    def covered(g: str) -> bool:
        body = g[: -len("/**")] if g.endswith("/**") else g
        return any(body != d and body.startswith(d + "/") for d in dirs)

    return [g for g in dict.fromkeys(globs) if not covered(g)]


def _dest(manifest: str, root: str) -> str:
    """Where a release was fetched to, written relative to the --root the user gave."""
    fetched = Path(manifest).parent
    try:
        inside = fetched.relative_to(Path(root).resolve())
    except ValueError:
        return fetched.as_posix()
    return root if str(inside) == "." else (PurePath(root) / inside).as_posix()


def fetch_commands(releases: Iterable[ReleaseRef], root: str) -> list[str]:
    """The shell commands that fetch again the files of ``releases`` (those of the files a command read), each
    release into the directory it was fetched to (written relative to ``root``, as the user gave it), with the
    fewest ``--include`` globs that cover its files, then check it against its manifest."""
    q = shlex.quote
    plan: dict[tuple[str, str, str], dict[str, None]] = {}
    for rel in releases:
        key = (rel.source, rel.commit, _dest(rel.manifest, root))
        plan.setdefault(key, {}).setdefault(_glob(PurePosixPath(rel.repo_path)), None)
    cmds = []
    for (source, commit, dest), globs in plan.items():
        inc = " ".join(f"--include {q(g)}" for g in minimal_globs(list(globs)))
        cmds.append(f"replicate fetch {q(source)} --rev {q(commit)} {inc} --dest {q(dest)}")
        cmds.append(f"replicate fetch --check {q(dest)}")
    return cmds


def sha256_file(path: str | os.PathLike[str], *, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _load_manifest(path: str) -> dict | None:
    """The parsed manifest; re-read when the file changes (a new fetch rewrites it)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _load_manifest_at(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=256)
def _load_manifest_at(path: str, mtime_ns: int, size: int) -> dict | None:
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    # path -> entry index, so looking up many files of a large release stays cheap
    data["_by_path"] = {f.get("path"): f for f in data.get("files", []) if isinstance(f, dict)}
    return data


def _licence_of(manifest: dict) -> str | None:
    repo = manifest.get("repository") or {}
    lic = repo.get("licence", repo.get("license", "unknown"))
    if isinstance(lic, dict):
        return lic.get("spdx_id", "unknown")
    return lic


def find_release(path: str | os.PathLike[str]) -> ReleaseRef | None:
    """The manifest entry of ``path`` if it lies inside a fetched release directory."""
    if os.fspath(path) == "-":  # standard input comes from no release
        return None
    p = Path(path).resolve()
    for parent in p.parents:
        candidate = parent / MANIFEST_NAME
        if candidate.is_file():
            manifest = _load_manifest(str(candidate))
            if manifest is None:
                return None
            rel = p.relative_to(parent).as_posix()
            entry = manifest["_by_path"].get(rel)
            return ReleaseRef(
                manifest=str(candidate),
                source=str(manifest.get("source", "")),
                commit=str(manifest.get("commit", "")),
                repo_path=rel,
                licence=_licence_of(manifest),
                manifest_sha256=None if entry is None else entry.get("sha256"),
                licence_files=tuple((manifest.get("repository") or {}).get("licence_files") or ()),
            )
    return None


def file_provenance(
    path: str | os.PathLike[str], *, data: bytes | None = None
) -> FileProvenance:
    """Provenance of one file. Pass ``data`` when the raw bytes were already read."""
    digest = hashlib.sha256(data).hexdigest() if data is not None else sha256_file(path)
    size = len(data) if data is not None else os.path.getsize(path)
    return FileProvenance(str(path), size, digest, find_release(path))
