"""Item keys held once per run, in one block of bytes, not as a Python string per item (pure).

A run of 1.4 M items held its keys as 1.4 M Python strings (about 64 bytes
each, and 8 more for the array's pointer): more than the rest of the run. A
:class:`KeyTable` holds them as their UTF-8 bytes, each followed by a NUL
(about 15 bytes an item): what a run read from files keeps. The object array
of strings the commands align and show is made from it on first use
(:class:`KeysField`, the ``keys`` of :class:`~replicate.judge.model.Run`):
``parse`` never needs it, as the clusters of the bootstrap (the first key
field: a query) are read from the bytes (:meth:`KeyTable.first_field_codes`).

A key holding a NUL is not held this way (:class:`KeysBuilder` keeps the
strings then), so splitting at NUL gives back exactly the keys.
"""

from __future__ import annotations

import mmap
from typing import Any, cast, overload

import numpy as np

#: Ends each key in a :class:`KeyTable`'s bytes.
END = "\x00"
#: First fields at most this many bytes long are grouped in numpy (longer ones: the keys as strings).
FIELD_BYTES_MAX = 32
#: Bytes of keys grouped at a time (bounds the scratch arrays), and of a block's end searched for a key's NUL.
_BLOCK_BYTES = 1 << 20
_TAIL_BYTES = 1 << 12
#: A :class:`GrowingBytes` moves from a ``bytearray`` to a memory map of its own once it holds this many bytes.
MAP_FROM = 1 << 20
#: Private anonymous maps (POSIX); elsewhere a :class:`GrowingBytes` stays a ``bytearray``.
_MAPS = hasattr(mmap, "MAP_PRIVATE")


class GrowingBytes:
    """Bytes appended at the end, as a run's keys and their hashes are read: small, a ``bytearray``; from
    :data:`MAP_FROM` bytes on, an anonymous memory map of its own, doubled in place (``mremap``) as it fills.

    Why not a ``bytearray`` throughout: one grown by ``realloc`` beside another growing buffer (the keys'
    bytes and their hashes) is copied to a new place at most growths, and glibc's malloc keeps the old
    copies' memory for later use (its mmap threshold rises as large blocks are freed, so large blocks come
    from the heap): 21-28 MB free in the heap at the end of reading a 1.4 M-item file, about the size of the
    buffers themselves (bench/README.md). A map of its own grows without a copy where the system can move
    pages (Linux; elsewhere each doubling copies it into a new map and unmaps the old one), and gives its
    memory back to the system when freed; pages never written cost nothing.
    """

    __slots__ = ("_buf", "_map", "n")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._map: mmap.mmap | None = None
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def extend(self, data: bytes | bytearray | memoryview | mmap.mmap) -> None:
        view = memoryview(data).cast("B")
        end = self.n + view.nbytes
        if self._map is None:
            if end < MAP_FROM or not _MAPS:
                self._buf += view
                self.n = end
                return
            self._to_map(end)
        assert self._map is not None
        if end > len(self._map):
            self._grow(end)
        self._map[self.n : end] = view
        self.n = end

    def _to_map(self, need: int) -> None:
        self._map = mmap.mmap(-1, _capacity(need), flags=mmap.MAP_PRIVATE)
        self._map[: self.n] = self._buf
        self._buf = bytearray()

    def _grow(self, need: int) -> None:
        assert self._map is not None
        size = _capacity(max(need, 2 * len(self._map)))
        try:
            self._map.resize(size)
        except (OSError, SystemError):  # no mremap (not Linux): a new map, copied once, the old one given back
            new = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
            new[: self.n] = self._map[: self.n]
            self._map.close()
            self._map = new

    def view(self) -> memoryview:
        """The bytes held, to be read (and released) before more are appended."""
        return memoryview(self._buf if self._map is None else self._map)[: self.n]

    def take(self) -> bytearray | mmap.mmap:
        """The bytes held (exactly :attr:`n` of them: a map is cut to its length), leaving this empty."""
        out: bytearray | mmap.mmap
        if self._map is None:
            out = self._buf
        else:
            out = self._map
            try:
                out.resize(self.n)
            except (OSError, SystemError):
                out = mmap.mmap(-1, self.n, flags=mmap.MAP_PRIVATE)
                out[:] = self._map[: self.n]
                self._map.close()
        self._buf, self._map, self.n = bytearray(), None, 0
        return out


def _split_keys(blob: bytes | bytearray | mmap.mmap | memoryview) -> list[str]:
    """The keys of a table's bytes (at least one key)."""
    keys = str(blob, "utf-8").split(END)
    keys.pop()  # after the last key's NUL
    return keys


def _capacity(n: int) -> int:
    """``n`` rounded up to whole pages."""
    return -(-n // mmap.PAGESIZE) * mmap.PAGESIZE


class Column:
    """A run's column held compactly, made into its numpy array when first read (:class:`ColumnField`)."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def array(self) -> np.ndarray:
        raise NotImplementedError


class KeyTable(Column):
    """The keys of a run as one block of bytes: each key's UTF-8 text followed by NUL, in item order (a
    ``bytearray`` or memory map as it was built (:class:`GrowingBytes`), never changed once the table holds it)."""

    __slots__ = ("blob", "_n")

    def __init__(self, blob: bytes | bytearray | mmap.mmap, n: int) -> None:
        self.blob = blob
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __reduce__(self) -> tuple[Any, ...]:
        blob = bytes(self.blob) if isinstance(self.blob, mmap.mmap) else self.blob  # a map is not pickled
        return (KeyTable, (blob, self._n))

    def strings(self) -> list[str]:
        """The keys as a list of strings."""
        if not self._n:
            return []
        return _split_keys(self.blob)

    def array(self) -> np.ndarray:
        """The keys as a read-only object array of strings (what ``Run.keys`` holds)."""
        out = np.empty(self._n, dtype=object)
        out[:] = self.strings()
        out.setflags(write=False)
        return out

    def first_field_codes(self, sep: str) -> tuple[np.ndarray, int] | None:
        """(code of each item's first key field (int32), number of distinct ones), codes the ranks of the fields in
        code-point order (as :meth:`~replicate.stats.bootstrap.Clusters.from_keys` gives them; UTF-8 bytes
        sort in code-point order). The first field is the text before the first ``sep`` (the whole key
        without one). None when a first field is longer than :data:`FIELD_BYTES_MAX` bytes.

        Read a block of the table's bytes at a time (:data:`_BLOCK_BYTES`, whole keys), keeping only the first
        field of each run of equal ones (items of one cluster mostly lie side by side: a query's passages) and
        where the runs start; the one array of the items' length made is the codes."""
        n = self._n
        if not n:
            return np.empty(0, np.int32), 0
        data = np.frombuffer(self.blob, dtype=np.uint8)
        fields: list[np.ndarray] = []  # the first field of each run, per block
        starts: list[np.ndarray] = []  # the item where each run starts, per block
        item, lo, last = 0, 0, None
        while lo < len(data):
            block = _whole_keys(data, lo)
            got = _block_fields(block, sep)
            if got is None:
                return None
            new_run = np.empty(len(got), dtype=bool)
            new_run[0] = last is None or got[0] != last
            np.not_equal(got[1:], got[:-1], out=new_run[1:])
            fields.append(got[new_run])
            starts.append(np.flatnonzero(new_run) + item)
            item, lo, last = item + len(got), lo + len(block), got[-1]
        names, run_codes = np.unique(np.concatenate(fields), return_inverse=True)
        run_starts = np.concatenate(starts)
        lengths = np.diff(run_starts, append=n)
        return np.repeat(run_codes.ravel().astype(np.int32), lengths), len(names)


def _whole_keys(data: np.ndarray, lo: int) -> np.ndarray:
    """The bytes of the keys from ``data[lo]`` (a key's start) in about :data:`_BLOCK_BYTES`, ending at a key's NUL."""
    size = _BLOCK_BYTES
    while True:
        seg = data[lo : lo + size]
        if lo + size >= len(data):
            return seg  # the table's last key ends in NUL
        last = np.flatnonzero(seg[-_TAIL_BYTES:] == 0) if size > _TAIL_BYTES else np.flatnonzero(seg == 0)
        if len(last):
            return seg[: len(seg) - min(size, _TAIL_BYTES) + int(last[-1]) + 1]
        size *= 2  # no key ends in the tail: a longer block


def _block_fields(block: np.ndarray, sep: str) -> np.ndarray | None:
    """The first field of each key of ``block`` (whole keys, each ending in NUL) as ``S{width}``, or None when
    one is longer than :data:`FIELD_BYTES_MAX` bytes."""
    ends = np.flatnonzero(block == 0)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    marks = np.flatnonzero((block == ord(sep)) | (block == 0))  # each key ends in NUL: always found
    lengths = marks[np.searchsorted(marks, starts)] - starts
    width = int(lengths.max())
    if width > FIELD_BYTES_MAX:
        return None
    width = max(width, 1)
    table = np.zeros((len(starts), width), dtype=np.uint8)
    for j in range(int(lengths.max())):
        has = lengths > j
        table[has, j] = block[starts[has] + j]
    return table.view(f"S{width}").ravel()


class KeysBuilder:
    """A run's keys as they are read: chunks of strings in, a :class:`KeyTable` (or, when a key holds a NUL,
    an object array) out."""

    def __init__(self) -> None:
        self._blob = GrowingBytes()  # grown in place (no copy of every key's bytes when the table is made)
        self._pending: list[str] = []
        self._strings: list[str] | None = None  # every key as a string, once one held a NUL
        self.n = 0

    def extend(self, keys: list[str]) -> None:
        self._flush()
        self.n += len(keys)
        if self._strings is not None:
            self._strings.extend(keys)
            return
        if not keys:
            return
        joined = END.join(keys)
        if joined.count(END) != len(keys) - 1:  # a key holds a NUL: keep strings from here on
            self._strings = KeyTable(self._blob.take(), self.n - len(keys)).strings() + list(keys)
            return
        self._blob.extend((joined + END).encode("utf-8"))

    def absorb(self, other: KeysBuilder) -> None:
        """Append ``other``'s keys (``other`` is left empty)."""
        self._flush()
        other._flush()
        if self._strings is None and other._strings is None:
            if self.n:
                self._blob.extend(other._blob.take())
            else:
                self._blob, other._blob = other._blob, self._blob  # the first file's keys: taken, not copied
            self.n += other.n
        else:
            self.extend(other.tolist())
        other._blob, other._strings, other.n = GrowingBytes(), None, 0

    def append(self, key: str) -> None:
        self._pending.append(key)
        if len(self._pending) >= 4096:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self.extend(pending)

    def __len__(self) -> int:
        return self.n + len(self._pending)

    def tolist(self) -> list[str]:
        """Every key so far, as strings."""
        self._flush()
        if self._strings is not None:
            return list(self._strings)
        if not self.n:
            return []
        with self._blob.view() as held:
            return _split_keys(held)

    def build(self) -> KeyTable | np.ndarray:
        self._flush()
        if self._strings is not None:
            out = np.empty(len(self._strings), dtype=object)
            out[:] = self._strings
            out.setflags(write=False)
            return out
        return KeyTable(self._blob.take(), self.n)


class Runs(Column):
    """A column whose value changes only now and then (the split of each item: one per file), held as
    (first item, value) where it changes; :meth:`array` gives the object array (one object per value)."""

    __slots__ = ("runs", "_n")

    def __init__(self, runs: list[tuple[int, object]], n: int) -> None:
        self.runs = runs
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __reduce__(self) -> tuple[Any, ...]:
        return (Runs, (self.runs, self._n))

    def array(self) -> np.ndarray:
        return self.fill(np.empty(self._n, dtype=object))

    def fill(self, out: np.ndarray, value: Any = None) -> np.ndarray:
        """``out`` with each run's value (``value(v)`` of it when given), read-only."""
        for (start, v), (end, _) in zip(self.runs, [*self.runs[1:], (self._n, None)]):
            out[start:end] = v if value is None else value(v)
        out.setflags(write=False)
        return out


class Blocks(Column):
    """Where each item was read, one of two columns (``file`` index or ``line``), held as blocks of one file
    (first item, end item, file index, the items' lines: None for lines 1..n) and the lines of the items
    read one by one (item -> (file index, line))."""

    __slots__ = ("blocks", "lines", "_n", "which")

    def __init__(self, blocks: list[tuple[int, int, int, np.ndarray | None]], lines: dict[int, tuple[int, int]], n: int,
                 which: str) -> None:
        self.blocks, self.lines, self._n, self.which = blocks, lines, n, which

    def __len__(self) -> int:
        return self._n

    def __reduce__(self) -> tuple[Any, ...]:
        return (Blocks, (self.blocks, self.lines, self._n, self.which))

    def array(self) -> np.ndarray:
        file = self.which == "file"
        out = np.empty(self._n, dtype=np.int16 if file else np.int32)
        for start, end, idx, lines in self.blocks:
            if file:
                out[start:end] = idx
            else:
                out[start:end] = np.arange(1, end - start + 1, dtype=np.int32) if lines is None else lines
        if self.lines:
            items = np.fromiter(self.lines.keys(), dtype=np.int64, count=len(self.lines))
            where = np.array(list(self.lines.values()), dtype=np.int64).reshape(-1, 2)
            out[items] = where[:, 0 if file else 1]
        out.setflags(write=False)
        return out


class ColumnField:
    """A column of a frozen dataclass (a run's ``keys``, ``splits``, where each item was read) that may be
    given as a :class:`Column` and is read as its numpy array, made once on first read.

    A data descriptor: the constructor stores what it is given; reading the attribute gives the array.
    :func:`raw` reads what is stored without making it. Declared on the class after the dataclass is made
    (``setattr``), so the field keeps its declared type and stays required.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: Any = None) -> ColumnField: ...
    @overload
    def __get__(self, obj: object, owner: Any = None) -> Any: ...
    def __get__(self, obj: object | None, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name]
        if isinstance(value, Column):
            value = value.array()
            obj.__dict__[self.name] = value
        return value

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self.name] = value


def columns(cls: type, *names: str) -> None:
    """Make ``names`` of the dataclass ``cls`` :class:`ColumnField` s."""
    for name in names:
        setattr(cls, name, ColumnField(name))


def raw(obj: object, name: str) -> Any:
    """Field ``name`` of ``obj`` as stored: a :class:`Column` not yet made into its array, or the array."""
    return obj.__dict__[name]


def as_array(value: np.ndarray | Column) -> np.ndarray:
    """``value`` as a :class:`ColumnField` is given it (typed as the array it reads as: a column is made into
    one when read)."""
    return cast(np.ndarray, value)


def raw_keys(run: object) -> np.ndarray | KeyTable:
    """A run's keys as stored: a :class:`KeyTable` not yet turned into strings, or the object array."""
    value: np.ndarray | KeyTable = run.__dict__["keys"]
    return value
