"""Every file the tool writes: whole or not at all, and never over a file it did not write unless forced.

One writer (:func:`replacing`, :func:`write_file`): a temporary file in the target's own folder
(``.NAME.XXXX.replicate-tmp``), its bytes flushed and fsynced, then renamed over the target, and the
folder fsynced; on any error (disk full, a file size limit, an interrupt) the temporary file is removed
and the target is left byte for byte as it was. Reports, labels, trials tables, notes and their
figures, batch files, fetched files, manifests, cache entries and the demo's example release are all
written by it.

One rule for an output that exists (:class:`Outputs`): it is replaced only when the user passes
``force``, or when it is this command's own earlier output, unchanged since. The tool records every
output it writes (path, command, size and sha256) under the cache root's ``outputs/`` folder (see
docs/cache.md); an existing file whose record names the same command and whose bytes still have the
recorded sha256 is the command's own. A file the user wrote, edited or produced with another command
is refused with :data:`REFUSED` naming it. Without a record (a cleared cache, an unwritable cache
root) a rerun needs ``force``: the safe side.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from replicate.errors import BadInput, Message, Param, UsageError

#: The suffix of every temporary file the writer makes; an interrupted fetch's are removed by the next.
TMP_SUFFIX = ".replicate-tmp"
#: What a failed write left: said after why it failed.
UNCHANGED = "nothing was written (an earlier file there is unchanged)"
#: The folder under the cache root holding one record per output written.
RECORDS = "outputs"
#: Why an existing file is not replaced: the same words for every command (the option, the path, then this).
REFUSED = "exists and was not written by an earlier 'replicate {command}': pass {force} to replace it"


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``folder`` durable (where the file system can sync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the file itself is synced
    finally:
        os.close(fd)


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def replacing(target: str | os.PathLike[str], *, mode: int | None = None,
              make_folder: bool = False) -> Iterator[BinaryIO]:
    """A temporary file beside ``target``, fsynced and renamed over it when the block ends cleanly.

    If the block (or the flush, fsync or rename) raises, the temporary file is deleted and ``target``
    is left as it was. The file gets ``mode``, else the mode of the file it replaces, else the
    user's default (0666 less the umask). The target's folder is created when missing only with
    ``make_folder``; otherwise a missing folder is the ``FileNotFoundError`` of making the temporary file.
    """
    target = Path(target)
    if make_folder:
        target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=TMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_folder(target.parent)


def write_file(target: str | os.PathLike[str], data: bytes | Iterable[bytes], *, mode: int | None = None,
               make_folder: bool = False) -> None:
    """Write ``data`` (bytes, or chunks of them) to ``target`` through :func:`replacing`."""
    with replacing(target, mode=mode, make_folder=make_folder) as fh:
        if isinstance(data, (bytes, bytearray, memoryview)):
            fh.write(data)
        else:
            for chunk in data:
                fh.write(chunk)


def write_cache_entry(target: str | os.PathLike[str], data: bytes) -> None:
    """Write a cache entry (owner-only) through :func:`write_file`; an unwritable cache is skipped.

    Readers never see a partial entry; of two writers at once the last rename wins.
    """
    try:
        write_file(target, data, mode=0o600, make_folder=True)
    except OSError:
        return


def remove_leftovers(folder: Path) -> list[str]:
    """Delete the writer's temporary files an interrupted run left under ``folder``; their paths, sorted."""
    gone = []
    if folder.is_dir():
        for p in folder.rglob(f".*{TMP_SUFFIX}"):
            if p.is_file() and not p.is_symlink():
                p.unlink()
                gone.append(p.relative_to(folder).as_posix())
    return sorted(gone)


# -- the rule for existing outputs ----------------------------------------------------------------


def _record_path(target: Path) -> Path:
    from replicate.cachedir import default_root

    real = os.path.realpath(target)
    return default_root() / RECORDS / hashlib.sha256(os.fsencode(real)).hexdigest()[:40]


def _sha256_of(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def is_own_output(target: Path, command: str) -> bool:
    """Whether ``target`` is ``command``'s earlier output, unchanged since (see the module docstring)."""
    try:
        st = os.stat(target)
        record = orjson.loads(_record_path(target).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    if not isinstance(record, dict) or record.get("command") != command or record.get("size") != st.st_size:
        return False
    if record.get("path") != os.path.realpath(target):
        return False
    return _sha256_of(target) == record.get("sha256")


def _record(target: Path, command: str, digest: str, size: int) -> None:
    body = {"path": os.path.realpath(target), "command": command, "size": size, "sha256": digest}
    write_cache_entry(_record_path(target), orjson.dumps(body))


class Outputs:
    """The files one command writes, each checked against the rule, written whole and recorded.

    ``command`` names the command in the refusal and in the record (``"verify"``, ``"export ifbench"``),
    ``param`` the parameter (option) that named the file; ``force`` replaces any existing file.
    """

    def __init__(self, command: str, param: str, *, force: bool = False) -> None:
        self.command = command
        self.param = param
        self.force = force

    def refusal(self, target: Path) -> UsageError:
        head, _, tail = REFUSED.format(command=self.command, force="\0").partition("\0")
        return UsageError(Message(Param(self.param), f" {target} {head}", Param("force"), tail))

    def check(self, *targets: str | os.PathLike[str]) -> None:
        """Raise :class:`UsageError` for the first target that may not be written (see the rule)."""
        for t in targets:
            target = Path(t)
            if target.is_dir():
                raise UsageError(Message(Param(self.param), f" {target} is a directory: name a file to write"))
            if self.force or not os.path.lexists(target):
                continue
            if not is_own_output(target, self.command):
                raise self.refusal(target)

    def check_folder(self, folder: str | os.PathLike[str], names: Iterable[str]) -> None:
        """:meth:`check` for each of ``names`` inside ``folder``, which must be a folder or not exist yet."""
        folder = Path(folder)
        if os.path.lexists(folder) and not folder.is_dir():
            raise UsageError(Message(Param(self.param), f" {folder} is not a folder: name a folder to write into"))
        self.check(*(folder / n for n in names))

    def write(self, target: str | os.PathLike[str], data: bytes | Iterable[bytes], *, make_folder: bool = False) -> None:
        """Check ``target``, write ``data`` (bytes, or chunks of them as they come) through the one writer and record it as this command's output
        (``make_folder``: making its folder when missing). A write that fails is :class:`BadInput` naming
        ``target`` and why, ``target`` left as it was."""
        target = Path(target)
        self.check(target)
        h = hashlib.sha256()
        size = 0
        chunks = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
        try:
            with replacing(target, make_folder=make_folder) as fh:
                for chunk in chunks:
                    fh.write(chunk)
                    h.update(chunk)
                    size += len(chunk)
        except OSError as exc:  # a full disk, a file size limit, a folder that cannot be made
            raise BadInput(f"cannot write: {exc.strerror or exc}; {UNCHANGED}", path=target) from None
        _record(target, self.command, h.hexdigest(), size)

    def write_figure(self, fig: Any, png: str | os.PathLike[str], svg: str | os.PathLike[str]) -> None:
        """A matplotlib figure as PNG (150 dpi) and SVG, without timestamps (the same bytes every run)."""
        import io

        for path, kw in ((png, {"dpi": 150, "metadata": {"Software": None}}), (svg, {"metadata": {"Date": None}})):
            buf = io.BytesIO()
            fig.savefig(buf, format=Path(path).suffix.lstrip("."), **kw)
            self.write(path, buf.getvalue(), make_folder=True)
