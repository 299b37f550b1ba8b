"""``fetch(...)``: the one library call behind ``replicate fetch``.

Resolve the source and revision, list the tree at the pinned commit, select by
include globs, refuse what must not be written, fetch missing contents into the
cache (verified by git blob id), then write each file into the destination via
a temporary name and record the manifest.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from replicate.errors import Message, Param, UsageError
from replicate.fetch.cache import Cache, Snapshot
from replicate.fetch.destlock import OWN_FILES, dest_lock, drop_journal, is_journaled, journaled_files, write_journal
from replicate.fetch.errors import IntegrityError, OfflineMissing
from replicate.fetch.globs import Includes
from replicate.fetch.httpfetch import HttpSettings
from replicate.fetch.hubfetch import HubSettings
from replicate.fetch.lfsfetch import LfsOptions, LfsStep
from replicate.fetch.lock import DEFAULT_LOCK_TIMEOUT, source_lock
from replicate.fetch.manifest import (
    FileEntry,
    Manifest,
    Skipped,
    check_directory,
    read_manifest,
    write_manifest,
)
from replicate.fetch.plan import lfs_pointer, select, too_large
from replicate.fetch.safety import LFS_MAX_POINTER, parse_lfs_pointer, parse_size, refuse_path
from replicate.fetch.source import Source, parse_source
from replicate.fetch.tree import TreeEntry, root_licence_files
from replicate.fetch.writer import TMP_SUFFIX, remove_leftovers, write_verified
from replicate.provenance import MANIFEST_NAME, sha256_file

VIAS = ("auto", "git", "http", "hub")
DEFAULT_MAX_SIZE = 100 << 20  # 100 MiB, GitHub's own per-file limit
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class FetchResult:
    """What a fetch did. ``manifest`` is what was written to ``dest``."""

    manifest: Manifest
    dest: str
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    stale: tuple[str, ...]  # files of an earlier manifest, no longer selected, edited since: left alone
    downloaded: int  # files whose contents came from the host (not from the cache)
    not_selected: int  # tree entries the include globs left out
    listing_complete: bool  # False: the host truncated the tree; only matching directories were walked

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return self.manifest.skipped

    def to_json(self) -> dict:
        out = self.manifest.to_json()
        out["dest"] = self.dest
        out["actions"] = {
            "written": list(self.written),
            "unchanged": list(self.unchanged),
            "removed": list(self.removed),
            "stale": list(self.stale),
            "downloaded": self.downloaded,
            "not_selected": self.not_selected,
            "listing_complete": self.listing_complete,
        }
        return out


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_options(via: str, include: Iterable[str], max_size: int | str) -> tuple[Includes, int]:
    if via not in VIAS:
        raise UsageError(f"via: {via!r} is not one of {', '.join(VIAS)}")
    try:
        return Includes(tuple(include)), parse_size(max_size)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _choose_via(src: Source, via: str) -> str:
    if via == "auto":
        return "hub" if src.hub else "http" if src.github else "git"
    if via == "hub" and src.hub is None:
        raise UsageError(Message(
            Param("via"), f" hub needs a Hugging Face Hub source (hf://datasets/ORG/NAME); {src.canonical} is not one"
        ))
    if via == "http" and src.github is None:
        raise UsageError(Message(
            Param("via"), " http needs a GitHub source (owner/repo or https://github.com/owner/repo); "
            f"{src.canonical} is served by git only: use ", Param("via"), " git or auto"
        ))
    return via


def _prepare_dest(dest: Path, source: str) -> Manifest | None:
    """DIR's manifest, None for a new DIR; a DIR without one holding files no fetch of ``source`` wrote is refused.

    Empty directories, the fetch's own lock and journal, temporary files of an interrupted fetch and the
    files its journal lists (unchanged since) do not count (see :mod:`replicate.fetch.destlock`).
    """
    if (dest / MANIFEST_NAME).is_file():
        return read_manifest(dest)
    journaled = journaled_files(dest, source)

    def theirs(p: Path) -> bool:
        if not (p.is_file() or p.is_symlink()) or p.name.endswith(TMP_SUFFIX):
            return False
        rel = p.relative_to(dest).as_posix()
        return rel not in OWN_FILES and not is_journaled(p, journaled.get(rel))

    if dest.is_dir() and any(theirs(p) for p in dest.rglob("*")):
        raise UsageError(Message(
            Param("dest"), f" {dest} is not empty and holds no {MANIFEST_NAME}; "
            "fetch into an empty or new directory (replicate fetch never overwrites files it did not write)"
        ))
    return None


def fetch(
    source: str,
    *,
    rev: str | None = None,
    include: Iterable[str] = (),
    dest: str | os.PathLike[str] | None = None,
    via: str = "auto",
    offline: bool = False,
    max_size: int | str = DEFAULT_MAX_SIZE,
    allow_large: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    http: HttpSettings | None = None,
    sleep: Callable[[float], None] = time.sleep,
    git_timeout: float | None = None,
    progress: Callable[[str, str], None] | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    lfs: bool = True,
    lfs_url: str | None = None,
    hub: HubSettings | None = None,
    progress_bars: bool = False,
) -> FetchResult:
    """Materialise the files of ``source`` at ``rev`` that match ``include`` into ``dest``.

    ``source``: ``owner/repo``, an https git URL, a ``file://`` URL or a local
    repository path. ``rev``: commit, branch or tag (default: the default
    branch), recorded as the full commit id. ``include``: globs on the full
    repository path (see :mod:`replicate.fetch.globs`); none = every file.
    ``dest``: default ``./<repository name>``. ``via``: ``auto`` (http for
    GitHub sources, git otherwise), ``git`` or ``http``. ``offline``: use the
    cache only. Files over ``max_size`` bytes are skipped unless ``allow_large``.
    ``http``: base URLs, token, timeout, retries and backoff of the http
    transport (default: :meth:`HttpSettings.from_env`); ``sleep`` is how
    backoff waits (tests pass a no-op). Fetches of the same source on the same
    cache run one at a time: a second one waits up to ``lock_timeout`` seconds.
    ``lfs``: fetch the LFS object a selected pointer names (False: skip it, as
    ``lfs-pointer``), from ``lfs_url`` (default: the remote's own endpoint, see
    :func:`replicate.fetch.lfsfetch.lfs_endpoint`). ``hub``: endpoint and token
    of a Hub source (default: :meth:`HubSettings.from_env`); ``progress_bars``
    lets huggingface_hub draw its download bars.
    A second fetch into the same ``dest`` is refused at once; a fetch killed
    before its manifest was written is completed by the next one
    (:mod:`replicate.fetch.destlock`).
    """
    includes, limit = _check_options(via, include, max_size)
    src = parse_source(source)
    chosen = _choose_via(src, via)
    dest_path = Path(dest) if dest is not None else Path.cwd() / src.name
    with dest_lock(dest_path):  # one fetch into a DIR at a time: refused at once, not waited for
        old = _prepare_dest(dest_path, src.canonical)
        if old is not None and old.source != src.canonical:
            raise UsageError(Message(
                Param("dest"), f" {dest_path} holds files fetched from {old.source}, not {src.canonical}; "
                "choose another ", Param("dest")
            ))
        cache = Cache(cache_dir)
        cache.make_root()
        note = progress or (lambda event, path: None)

        with source_lock(cache.lock_path(src.cache_key), what=src.canonical, timeout=lock_timeout,
                         note=note):
            transport = None
            try:
                if offline:
                    commit, snap, chosen = _offline_snapshot(cache, src, rev, chosen, includes)
                else:
                    transport = _transport(src, chosen, cache, http, sleep, git_timeout, note, hub, progress_bars)
                    commit, snap = _online_snapshot(transport, cache, src, rev, chosen, includes, note)
                lfs_step = LfsStep(LfsOptions(lfs, lfs_url), src, http, sleep, note, online=transport is not None)
                return _materialise(src, rev, commit, chosen, snap, includes, limit, allow_large,
                                    dest_path, old, cache, transport, note, lfs_step)
            finally:
                if transport is not None:
                    transport.close()


def _online_snapshot(transport, cache: Cache, src: Source, rev: str | None, chosen: str,
                     includes: Includes, note) -> tuple[str, Snapshot]:
    """Resolve ``rev`` and list the tree (or reuse the cached listing of that commit)."""
    note("connect", src.canonical)
    transport.open()
    commit = transport.resolve(rev)
    meta = transport.repository()
    snap = cache.load_snapshot(src.cache_key, commit, chosen)
    if snap is None or not snap.usable_for(includes.patterns):
        note("list", commit)
        entries, complete = transport.list_tree(commit, includes)
        snap = Snapshot(commit, tuple(entries), meta, complete, () if complete else includes.patterns)
    snap = replace(snap, repository=replace(meta, licence_files=root_licence_files(snap.entries)))
    cache.save_snapshot(src.cache_key, snap, chosen)
    cache.save_ref(src.cache_key, rev, commit)
    if rev is None and meta.default_branch:  # --offline --rev <default branch> works too
        cache.save_ref(src.cache_key, meta.default_branch, commit)
    return commit, snap


def _transport(src, chosen, cache, http, sleep, git_timeout, note, hub=None, bars=False):
    if chosen == "hub":
        from replicate.fetch.hubfetch import HubTransport

        return HubTransport(src, hub or HubSettings.from_env(), bars=bars)
    if chosen == "http":
        from replicate.fetch.httpfetch import HttpTransport

        return HttpTransport(src, http or HttpSettings.from_env(), sleep=sleep,
                             on_retry=lambda text: note("retry", text))
    from replicate.fetch.gitfetch import GitTransport

    return GitTransport(src, cache, timeout=git_timeout)


def _offline_snapshot(cache: Cache, src: Source, rev: str | None, chosen: str,
                      includes: Includes) -> tuple[str, Snapshot, str]:
    """Commit, listing and transport of the cached fetch ``--offline`` replays."""
    refs = cache.refs(src.cache_key)
    if rev is not None and _HEX40.match(rev):
        commit = rev
    elif (rev or "") in refs:
        commit = refs[rev or ""]
    else:
        what = f"revision {rev!r}" if rev else "the default branch"
        raise OfflineMissing(Message(
            Param("offline"), f": the cache has no resolution of {what} for {src.canonical}; "
            "fetch once online or pass a full 40-hex commit id with ", Param("rev")
        ))
    order = [chosen] + [v for v in ("http", "git") if v != chosen]
    for v in order:
        snap = cache.load_snapshot(src.cache_key, commit, v)
        if snap is not None and snap.usable_for(includes.patterns):
            return commit, snap, v
    raise OfflineMissing(Message(
        Param("offline"), f": the cache has no tree listing of {src.canonical} at {commit}; fetch once online"
    ))


def _materialise(src, rev, commit, via, snap: Snapshot, includes: Includes, limit: int,
                 allow_large: bool, dest: Path, old: Manifest | None, cache: Cache,
                 transport, note, lfs_step: LfsStep) -> FetchResult:
    sel = select(snap.entries, includes, source=src.canonical, commit=commit)
    skipped = list(sel.skipped)
    remove_leftovers(dest)

    # Files already in place with the recorded hash stay untouched.
    previous = {f.path: f for f in old.files} if old else {}
    unchanged = {e.path: previous[e.path] for e in sel.candidates
                 if e.path in previous and previous[e.path].git_blob == e.sha
                 and _matches(dest, previous[e.path])}
    todo = [e for e in sel.candidates if e.path not in unchanged]
    sizes = _sizes(todo, cache, transport, limit, allow_large, source=src.canonical, commit=commit)
    if transport is not None:
        _remember_sizes(cache, src, via, snap, sizes)

    fetchable: list[TreeEntry] = []
    for e in todo:
        size = sizes.get(e.sha)
        if e.lfs is not None and not lfs_step.options.enabled:  # the Hub's listing names LFS objects
            skipped.append(lfs_pointer(e.path, None, e.lfs, "--no-lfs"))
        elif size is not None and size > limit and not allow_large:
            skipped.append(too_large(e.path, size, limit))
        else:
            fetchable.append(replace(e, size=size))
    seen: set[Path] = set()
    to_download = []
    for e in fetchable:
        where = cache.content_path(e)
        if not where.is_file() and where not in seen:
            seen.add(where)
            to_download.append(e)
    if to_download:
        transport.download_all(to_download, cache, commit, note)
    fetchable, lfs_skipped = lfs_step.run(fetchable, cache, limit, allow_large, commit)
    skipped += lfs_skipped

    written: list[FileEntry] = []
    if fetchable:  # what is about to be renamed into DIR, so that a rerun after a kill takes it as its own
        write_journal(dest, src.canonical, commit,
                      [(e.path, f"sha256:{e.lfs.oid}" if e.lfs is not None else f"git:{e.sha}") for e in fetchable])
    for e in fetchable:
        out = _write_one(dest, e, cache)
        if isinstance(out, Skipped):
            skipped.append(out)
        else:
            written.append(out)

    files = sorted([*unchanged.values(), *written], key=lambda f: f.path)
    removed, stale = _remove_unselected(dest, old, {f.path for f in files})
    manifest = Manifest(
        source=src.canonical, commit=commit, fetched_at=_now(), via=via, rev=rev,
        include=includes.patterns, repository=snap.repository, files=tuple(files),
        skipped=tuple(sorted(skipped, key=lambda s: s.path)),
    )
    if old is not None and not written and not removed and _same(old, manifest):
        manifest = old  # nothing changed: leave the manifest byte for byte as it was
    else:
        write_manifest(dest, manifest)
    drop_journal(dest)
    return FetchResult(
        manifest, str(dest), tuple(sorted(f.path for f in written)), tuple(sorted(unchanged)),
        tuple(removed), tuple(stale), len(to_download), sel.not_selected, snap.complete,
    )


def _sizes(todo: list[TreeEntry], cache: Cache, transport, limit: int, allow_large: bool, *,
           source: str, commit: str) -> dict[str, int]:
    """Sizes of the files to write: from the tree (http), the cache, or the git batch fetch.

    Offline, every file must already be in the cache.
    """
    need = [e for e in todo if not cache.has_content(e)]
    if transport is None:  # a file the listing knows to be over the limit is skipped, as it was online
        need = [e for e in need if allow_large or e.size is None or e.size <= limit]
    if transport is None and need:
        names = ", ".join(e.path for e in need[:20]) + (", ..." if len(need) > 20 else "")
        raise OfflineMissing(Message(
            Param("offline"), f": {len(need)} file(s) of {source} at {commit[:12]} are not in the "
            f"cache: {names}; fetch once online"
        ))
    sizes = {e.sha: e.size for e in todo if e.size is not None}
    sizes.update({e.sha: cache.content_path(e).stat().st_size for e in todo
                  if e.sha not in sizes and cache.has_content(e)})
    if transport is not None:
        # Known to be too large: not worth preparing (over http: never downloaded).
        wanted = [e for e in need if allow_large or sizes.get(e.sha) is None or sizes[e.sha] <= limit]
        sizes.update(transport.prepare(wanted))
    return sizes


def _remember_sizes(cache: Cache, src: Source, via: str, snap: Snapshot, sizes: dict[str, int]) -> None:
    """Keep the sizes learned online in the cached listing, so ``--offline`` skips the same files as too large."""
    if not any(e.size is None and e.sha in sizes for e in snap.entries):
        return
    entries = tuple(replace(e, size=sizes[e.sha]) if e.size is None and e.sha in sizes else e for e in snap.entries)
    cache.save_snapshot(src.cache_key, replace(snap, entries=entries), via)


def _write_one(dest: Path, e: TreeEntry, cache: Cache) -> FileEntry | Skipped:
    """Copy one cached blob or LFS object into ``dest`` (verified), unless it is an unresolved LFS pointer."""
    if e.lfs is not None:
        try:
            digest = write_verified(dest, e.path, cache.read_content(e), size=e.lfs.size, sha256=e.lfs.oid)
        except IntegrityError:
            cache.content_path(e).unlink(missing_ok=True)  # a corrupt cache entry: drop it
            raise
        return FileEntry(e.path, e.lfs.size, digest, e.sha, lfs=True)
    size = cache.object_size(e.sha)
    if size <= LFS_MAX_POINTER:
        ptr = parse_lfs_pointer(cache.object_head(e.sha, LFS_MAX_POINTER + 1))
        if ptr is not None:
            return lfs_pointer(e.path, size, ptr)
    try:
        digest = write_verified(dest, e.path, cache.read_object(e.sha), size=size, blob=e.sha)
    except IntegrityError:
        cache.object_path(e.sha).unlink(missing_ok=True)  # a corrupt cache entry: drop it
        raise
    return FileEntry(e.path, size, digest, e.sha)


def _matches(dest: Path, entry: FileEntry) -> bool:
    target = dest.joinpath(*entry.path.split("/"))
    if target.is_symlink() or not target.is_file() or target.stat().st_size != entry.size:
        return False
    return sha256_file(target) == entry.sha256


def _remove_unselected(dest: Path, old: Manifest | None, keep: set[str]) -> tuple[list[str], list[str]]:
    """Delete files an earlier fetch wrote that this one no longer selects (if unedited)."""
    removed, stale = [], []
    for f in (old.files if old else ()):
        if f.path in keep or refuse_path(f.path) is not None:
            continue
        target = dest.joinpath(*f.path.split("/"))
        if not target.exists():
            continue
        if _matches(dest, f):
            target.unlink()
            removed.append(f.path)
            parent = target.parent
            while parent != dest and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
        else:
            stale.append(f.path)
    return sorted(removed), sorted(stale)


def _same(a: Manifest, b: Manifest) -> bool:
    ja, jb = a.to_json(), b.to_json()
    ja.pop("fetched_at"), jb.pop("fetched_at")
    return ja == jb


def check(directory: str | os.PathLike[str]):
    """Rehash every file listed in ``directory``'s manifest (see :func:`check_directory`)."""
    return check_directory(directory)
