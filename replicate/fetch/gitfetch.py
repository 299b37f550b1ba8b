"""The git transport: a bare, partial (``--filter=blob:none``) clone in the cache.

Only the blobs a fetch selects are downloaded, in one batch, then read as raw
object data through gitpython; nothing is ever checked out. Nothing from the
repository runs: hooks point at an empty directory, submodules are never
touched, no checkout means no filters (smudge/clean, LFS) and no attributes.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

from replicate.errors import Message, Param
from replicate.fetch.cache import Cache
from replicate.fetch.errors import RevisionNotFound, TransportError
from replicate.fetch.manifest import RepositoryMeta
from replicate.fetch.source import Source
from replicate.fetch.tree import TreeEntry

_HEX = re.compile(r"^[0-9a-f]{7,40}$")
# git's ways of saying that the serving side lacks an object (they vary by version).
_MISSING = re.compile(
    r"(?:not our ref|could not fetch|unable to read|unadvertised object|missing blob object)"
    r"\s+'?([0-9a-f]{40})"
)
# For a repository on this machine git runs upload-pack itself: let it serve filtered
# clones and single-object requests whatever the repository's own settings, so that a
# fetch asks only for the selected blobs (and works when the source is itself a partial
# clone, which cannot send blobs it does not hold).
_LOCAL_UPLOAD_PACK = (
    "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
)
_NO_FILTER = "filtering not recognized by server"
_NO_GIT = Message("the git transport needs the git command; install git, or use ", Param("via"),
                  " http for GitHub sources")


def _gitpython():
    try:
        import git
    except ImportError as exc:  # gitpython refuses to import without a git executable
        raise TransportError(Message(*_NO_GIT.parts, f" ({exc.__class__.__name__})")) from None
    return git


class GitTransport:
    via = "git"

    def __init__(self, source: Source, cache: Cache, *, timeout: float | None = None) -> None:
        self.source = source
        self.cache = cache
        self.timeout = timeout
        self.git_dir = cache.git_dir(source.cache_key)
        self._default_branch: str | None = None
        self._commit: str | None = None  # the commit whose tree was listed
        self._repo = None  # gitpython Repo, opened lazily

    # -- running git -----------------------------------------------------------
    def _config(self) -> list[str]:
        opts = {
            "core.hooksPath": str(self.cache.empty_hooks_dir()),
            "core.fsmonitor": "false",
            "submodule.recurse": "false",
            "fetch.recurseSubmodules": "false",
            "protocol.ext.allow": "never",
            "credential.interactive": "false",
            "advice.detachedHead": "false",
        }
        if self.source.git_url.startswith("file://"):
            opts["protocol.file.allow"] = "always"  # only for file:// sources
        out: list[str] = []
        for k, v in opts.items():
            out += ["-c", f"{k}={v}"]
        return out

    def _upload_pack(self) -> list[str]:
        """Options for clone/fetch/ls-remote: the upload-pack to run for local sources."""
        return ["--upload-pack", _LOCAL_UPLOAD_PACK] if self.local_path() is not None else []

    def local_path(self) -> Path | None:
        """The source's directory when it is a repository on this machine, else None."""
        if self.source.kind not in ("file", "path"):
            return None
        return Path(unquote(urlsplit(self.source.git_url).path))

    def _git(self, *args: str, cwd: Path | None = None, what: str) -> str:
        git = _gitpython()
        env = {"GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1"}
        cmd = ["git", *self._config(), *args]
        try:
            return git.Git(str(cwd) if cwd else None).execute(
                cmd, env=env, kill_after_timeout=self.timeout, stdout_as_string=True
            )
        except git.GitCommandError as exc:
            err = (exc.stderr or "").strip().replace("stderr: ", "").strip("'\n ")
            raise TransportError(f"git {what} failed for {self.source.canonical}: {err}") from None
        except git.exc.GitCommandNotFound:
            raise TransportError(_NO_GIT) from None

    # -- transport interface ---------------------------------------------------
    def open(self) -> None:
        """Create or update the cached bare partial clone (branches and tags, no blobs)."""
        if (self.git_dir / "HEAD").is_file():
            self._git(
                "fetch", "--quiet", "--prune", "--filter=blob:none", "--no-recurse-submodules",
                *self._upload_pack(), "origin", "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
                cwd=self.git_dir, what="fetch",
            )
        else:
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=self.git_dir.parent))
            try:
                try:
                    self._git(
                        "clone", "--quiet", "--bare", "--filter=blob:none", "--no-recurse-submodules",
                        *self._upload_pack(), "--", self.source.git_url, str(tmp / "repo.git"),
                        what="clone",
                    )
                except TransportError as exc:
                    raise self._explain_clone(exc) from None
                try:
                    os.replace(tmp / "repo.git", self.git_dir)
                except OSError as exc:
                    # Another process finished the same first clone meanwhile: use its store.
                    if not (self.git_dir / "HEAD").is_file():
                        raise TransportError(
                            f"cannot move the new clone of {self.source.canonical} into the cache "
                            f"at {self.git_dir}: {exc.strerror}"
                        ) from None
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        head = self._git("ls-remote", *self._upload_pack(), "--symref", "origin", "HEAD",
                         cwd=self.git_dir, what="ls-remote")
        m = re.search(r"^ref: refs/heads/(\S+)\tHEAD", head, re.M)
        self._default_branch = m.group(1) if m else None

    def repository(self) -> RepositoryMeta:
        # Plain git has no host metadata: the licence is unknown, not absent.
        return RepositoryMeta("git", self._default_branch, None, "unknown")

    def resolve(self, rev: str | None) -> str:
        if rev is not None and rev.startswith("-"):
            raise RevisionNotFound(Message(Param("rev"), f" {rev!r}: a revision cannot start with '-'"))
        name = rev if rev is not None else self._default_branch
        if name is None:
            raise RevisionNotFound(Message(
                f"{self.source.canonical} has no default branch (empty repository?); pass ", Param("rev")
            ))
        commit = self._rev_parse(name)
        if commit is None and _HEX.match(name):
            try:  # a commit no branch or tag points at: ask the server for it
                self._git("fetch", "--quiet", "--filter=blob:none", *self._upload_pack(), "origin",
                          name, cwd=self.git_dir, what="fetch of a commit")
            except TransportError:
                pass
            commit = self._rev_parse(name)
        if commit is None:
            refs = self._git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags",
                             cwd=self.git_dir, what="for-each-ref").split()
            shown = ", ".join(refs[:10]) + (", ..." if len(refs) > 10 else "")
            raise RevisionNotFound(
                f"{self.source.canonical} has no commit, branch or tag {name!r} "
                f"(branches and tags: {shown or 'none'})"
            )
        return commit

    def _rev_parse(self, name: str) -> str | None:
        try:
            out = self._git("rev-parse", "--verify", "--quiet", "--end-of-options",
                            f"{name}^{{commit}}", cwd=self.git_dir, what="rev-parse")
        except TransportError:
            return None
        out = out.strip()
        return out if re.fullmatch(r"[0-9a-f]{40}", out) else None

    def list_tree(self, commit: str, includes) -> tuple[list[TreeEntry], bool]:
        out = self._git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=self.git_dir, what="ls-tree")
        entries = []
        for rec in out.split("\0"):
            if not rec:
                continue
            meta, path = rec.split("\t", 1)
            mode, _type, sha = meta.split()
            entries.append(TreeEntry(path, mode, sha, None))
        self._commit = commit
        return entries, True

    def prepare(self, entries: list[TreeEntry]) -> dict[str, int]:
        """Download the blobs of ``entries`` in one batch; return their sizes."""
        wanted = sorted({e.sha for e in entries})
        if not wanted:
            return {}
        for i in range(0, len(wanted), 1000):
            try:
                self._git(
                    "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                    "--no-write-fetch-head", "--no-recurse-submodules", "--filter=blob:none",
                    *self._upload_pack(), "origin", *wanted[i : i + 1000],
                    cwd=self.git_dir, what="fetch of file contents",
                )
            except TransportError as exc:
                raise self._explain_missing(exc, entries) from None
        repo = self._open_repo()
        return {sha: repo.odb.info(bytes.fromhex(sha)).size for sha in wanted}

    # -- explaining failures -----------------------------------------------------
    def _promisor(self) -> str | None:
        """For a local source that is itself a partial clone: the URL it was cloned from."""
        path = self.local_path()
        if path is None:
            return None
        try:  # git writes remote.<name>.promisor (older versions extensions.partialClone)
            out = self._git("-C", str(path), "config", "--get-regexp",
                            r"^(extensions\.partialclone|remote\..*\.promisor)$", what="config")
        except TransportError:
            return None  # neither key: not a partial clone
        remote = None
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if key == "extensions.partialclone":
                remote = value.strip()
            elif value.strip().lower() in ("true", "yes", "on", "1"):
                remote = key[len("remote."):-len(".promisor")]
        if remote is None:
            return None
        try:
            url = self._git("-C", str(path), "config", "--get", f"remote.{remote}.url",
                            what="config").strip()
        except TransportError:
            url = ""
        return url or f"its remote {remote!r}"

    def _held_objects(self) -> set[str] | None:
        """The ids of the objects a local source holds (never asks its own remote for more)."""
        path = self.local_path()
        if path is None:
            return None
        try:
            out = self._git("-C", str(path), "cat-file", "--batch-all-objects",
                            "--batch-check=%(objectname)", what="cat-file")
        except TransportError:
            return None
        return set(out.split())

    def _explain_clone(self, exc: TransportError) -> TransportError:
        text = str(exc)
        if _NO_FILTER not in text:
            return exc
        return TransportError(
            f"{self.source.canonical} does not serve filtered (partial) clones, so git asked it "
            "for every file of every commit, and it could not send them all (is it itself a "
            "partial clone?). On the serving side run `git config uploadpack.allowFilter true` "
            "(and `git config uploadpack.allowAnySHA1InWant true`), or fetch from the "
            f"repository it was cloned from.\n{text}"
        )

    def _explain_missing(self, exc: TransportError, entries: list[TreeEntry]) -> TransportError:
        missing = set(_MISSING.findall(str(exc)))
        if not missing:
            return exc
        held = self._held_objects()
        if held is not None:  # a local source can say every selected blob it lacks, not just the first
            missing |= {e.sha for e in entries} - held
        paths = sorted(e.path for e in entries if e.sha in missing)
        shown = ", ".join(paths[:10]) + (f", ... ({len(paths)} files)" if len(paths) > 10 else "")
        msg = f"{self.source.canonical} does not hold the contents of {shown or ', '.join(sorted(missing))}"
        origin = self._promisor()
        if origin is not None:
            rev = f" --rev {self._commit}" if self._commit else ""
            msg += (
                f": it is itself a partial clone (of {origin}) that never downloaded them, and a "
                f"repository does not pass on files it lacks. Fetch from the original instead "
                f"(replicate fetch {origin}{rev} --include ...)"
            )
        return TransportError(f"{msg}.\n{exc}")

    def _open_repo(self):
        if self._repo is None:
            self._repo = _gitpython().Repo(self.git_dir)
        return self._repo

    def download_all(self, entries: list[TreeEntry], cache: Cache, commit: str, note) -> None:
        """Copy prepared blobs from the git store into the cache (local reads)."""
        for i, e in enumerate(entries, 1):
            note("download", f"{e.path} ({i}/{len(entries)})")
            self.download(e, cache, commit)

    def download(self, entry: TreeEntry, cache: Cache, commit: str | None = None) -> None:
        stream = self._open_repo().odb.stream(bytes.fromhex(entry.sha))

        def chunks() -> Iterator[bytes]:
            while block := stream.read(1 << 20):
                yield block

        cache.put_object(entry.sha, stream.size, chunks(), what=f"git blob {entry.sha} ({entry.path})")

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None
