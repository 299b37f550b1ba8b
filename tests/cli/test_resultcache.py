"""The result cache: a command run again over unchanged inputs prints the stored bytes without computing them.

Commands run in a fresh interpreter over a copy of the bundled example, with
REPLICATE_CACHE_DIR pointing at a temporary folder (the result cache answers
before the application is imported); only the outputs to compare with, under
--no-cache, are computed in this interpreter.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from replicate.cachedir import unkeyed
from replicate.cli.resultcache import COMMANDS, LARGE_BODY, Recorder, ResultCache, decode, encode, invocation
from support.cachecli import MATRIX, at_once, invoke, loaded_modules, replicate

RUN_FILE = Path("results") / "alpha-2024-05_annotations.jsonl"


def warm(cwd: Path, cache: Path, *args: str):
    return replicate(cwd, cache, *args, results=True)


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "results").glob("*/*.result"))


def test_a_rerun_prints_the_same_bytes_without_importing_typer_or_numpy(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = warm(example_copy, cache, "--verbose", *MATRIX)
    assert cold.returncode == 0, cold.stderr
    assert "result cache: miss" in cold.stderr and "not stored" not in cold.stderr
    assert len(entries(cache)) == 1
    p, mods = loaded_modules(example_copy, cache, "--verbose", *MATRIX)
    assert p.stdout == cold.stdout
    assert "result cache: hit" in p.stderr
    assert mods == set()  # not typer, numpy, scipy or tabulate
    hit = warm(example_copy, cache, *MATRIX)
    plain = replicate(example_copy, tmp_path / "unused", "--no-cache", *MATRIX)
    assert hit.stdout == cold.stdout == plain.stdout
    # stderr replayed too (the reader chosen by content), without the --verbose lines
    assert hit.stderr == plain.stderr and "cache" not in hit.stderr
    assert not (tmp_path / "unused").exists()


def test_no_cache_bypasses_it(example_copy, tmp_path):
    cache = tmp_path / "cache"
    warm(example_copy, cache, *MATRIX)
    p = warm(example_copy, cache, "--no-cache", "--verbose", *MATRIX)
    assert p.returncode == 0 and "cache" not in p.stderr


@pytest.mark.parametrize("change", ["edit-run-file", "touch-run-file", "edit-runs-toml", "other-args", "other-cwd"])
def test_any_change_to_the_inputs_or_the_invocation_misses(example_copy, tmp_path, change):
    cache = tmp_path / "cache"
    warm(example_copy, cache, *MATRIX)
    args, cwd = list(MATRIX), example_copy
    if change == "edit-run-file":
        f = example_copy / RUN_FILE
        lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
        f.write_text("".join(lines[1:]), encoding="utf-8")
    elif change == "touch-run-file":
        st = (example_copy / RUN_FILE).stat()
        os.utime(example_copy / RUN_FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    elif change == "edit-runs-toml":
        toml = example_copy / "runs.toml"
        text = toml.read_text(encoding="utf-8")
        toml.write_text(text.replace('"alpha-2025-04" = [', '"alpha-2025-04-renamed" = ['), encoding="utf-8")
    elif change == "other-args":
        args = [*MATRIX, "--replicates", "0"]
    else:
        cwd = example_copy / "results"
        args = [a if a != "runs.toml" else "../runs.toml" for a in args]
    p = warm(cwd, cache, "--verbose", *args)
    fresh = invoke(cwd, tmp_path / "fresh", "--no-cache", *args)  # what the command prints, computed here
    assert p.returncode == 0, p.stderr
    assert "result cache: miss" in p.stderr
    assert p.stdout == fresh.stdout
    if change == "edit-runs-toml":
        assert "alpha-2025-04-renamed" in p.stdout


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_a_damaged_entry_is_ignored_and_rebuilt(example_copy, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = warm(example_copy, cache, *MATRIX)
    (entry,) = entries(cache)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[:-7])
    elif damage == "flip":
        b = bytearray(data)
        b[-10] ^= 0x20  # one byte of the stored output: the checksum no longer matches
        entry.write_bytes(bytes(b))
    else:
        entry.write_bytes(b"")
    p = warm(example_copy, cache, "--verbose", *MATRIX)
    assert "result cache: miss" in p.stderr and p.stdout == cold.stdout
    # rebuilt whole: an intact entry with the same output and the same inputs (their stat tuples are
    # not compared: under load a cold run's entry once differed from its rebuild in one stat)
    rebuilt, original = decode(unkeyed(entry.read_bytes())), decode(unkeyed(data))
    assert rebuilt is not None and original is not None
    assert rebuilt[1:] == original[1:]
    assert [path for path, _ in rebuilt[0]] == [path for path, _ in original[0]]
    assert "result cache: hit" in warm(example_copy, cache, "--verbose", *MATRIX).stderr


def test_a_failed_command_or_a_damaged_cache_entry_is_not_stored(example_copy, tmp_path):
    cache = tmp_path / "cache"
    bad = warm(example_copy, cache, "--verbose", *MATRIX[:-2], "-p", "no-such-parser@1")
    assert bad.returncode == 2 and "not stored: exit code 2" in bad.stderr
    assert entries(cache) == []
    warm(example_copy, cache, *MATRIX)
    label = sorted((cache / "labels").glob("*/*.labels"))[0]
    label.write_bytes(label.read_bytes()[:-1])
    for e in entries(cache):
        e.unlink()
    damaged = warm(example_copy, cache, "--verbose", *MATRIX)
    assert "was damaged; parsed again" in damaged.stderr and "not stored: a damaged cache entry" in damaged.stderr
    assert entries(cache) == []
    again = warm(example_copy, cache, *MATRIX)
    assert "damaged" not in again.stderr and again.stdout == damaged.stdout


def test_two_processes_at_once_leave_one_whole_entry(example_copy, tmp_path):
    cache = tmp_path / "cache"
    outs = at_once(example_copy, cache, *MATRIX)
    assert [code for code, _, _ in outs] == [0, 0] and outs[0][1] == outs[1][1]
    (entry,) = entries(cache)
    assert decode(unkeyed(entry.read_bytes())) is not None
    assert not list((cache / "results").glob("*/*.tmp"))
    assert warm(example_copy, cache, *MATRIX).stdout == outs[0][1]


def test_which_invocations_are_cached():
    assert invocation(["matrix", "--runs", "r.toml"]) == (["matrix", "--runs", "r.toml"], False)
    assert invocation(["--verbose", "matrix", "x"]) == (["matrix", "x"], True)
    assert invocation(["parsers", "audit", "-p", "a@1"]) == (["parsers", "audit", "-p", "a@1"], False)
    for argv in (
        ["--no-cache", "matrix", "x"],  # asked not to
        ["matrix", "--help"],  # help depends on the terminal
        ["parse", "-"],  # standard input
        ["verify", "claims.toml"],  # a note carries the date; --out writes files
        ["fetch", "owner/repo"], ["collect", "x"], ["parsers", "list"], ["--version"], [],
    ):
        assert invocation(argv) is None, argv
    assert ("verify",) not in COMMANDS and ("fetch",) not in COMMANDS


def _recorded(tmp_path: Path, action) -> Recorder:
    rec = Recorder(str(tmp_path / "cache"))
    rec.start()
    try:
        action()
    finally:
        rec.stop()
    return rec


def test_the_recorder_sees_files_read_folders_listed_and_paths_looked_at(tmp_path):
    read, folder, absent = tmp_path / "in.txt", tmp_path / "folder", tmp_path / "absent.toml"
    read.write_text("x", encoding="utf-8")
    folder.mkdir()

    def action():
        read.read_text(encoding="utf-8")
        list(folder.iterdir())
        absent.exists()
        (tmp_path / "cache").mkdir()
        (tmp_path / "cache" / "entry").write_text("derived", encoding="utf-8")  # the cache is not an input

    rec = _recorded(tmp_path, action)
    assert rec.refused is None
    assert {str(read), str(folder), str(absent)} <= set(rec.inputs)
    assert rec.inputs[str(absent)] is None
    assert not any("cache" in p for p in rec.inputs)
    cache = ResultCache(str(tmp_path / "cache"))
    cache.put("k" * 64, rec.inputs, 0, b"out", b"err")
    assert cache.get("k" * 64) == (0, b"out", b"err")
    (folder / "new.jsonl").write_text("{}", encoding="utf-8")  # a file added to a listed folder
    assert cache.get("k" * 64) is None
    cache.put("k" * 64, {**rec.inputs, str(folder): _stat_of(folder)}, 0, b"out", b"err")
    absent.write_text("", encoding="utf-8")  # a path that did not exist now does
    assert cache.get("k" * 64) is None


def _stat_of(p: Path):
    st = p.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def test_writing_a_file_or_reading_stdin_is_not_stored(tmp_path):
    assert _recorded(tmp_path, lambda: (tmp_path / "out.md").write_text("x")).refused.startswith("wrote")
    assert _recorded(tmp_path, lambda: os.replace(tmp_path / "out.md", tmp_path / "b.md")).refused.startswith("wrote")
    assert _recorded(tmp_path, lambda: sys.stdin.read).refused == "read standard input"


def test_an_edited_module_misses(tmp_path, monkeypatch):
    # the source of every loaded module outside the standard library is an input (a plugin edited, numpy upgraded)
    (tmp_path / "mods").mkdir()
    mod = tmp_path / "mods" / "probe_plugin_mod.py"
    mod.write_text("X = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    import probe_plugin_mod  # noqa: F401

    rec = Recorder(str(tmp_path / "cache"))
    rec.modules()
    assert str(mod) in rec.inputs and str(tmp_path / "mods") in rec.inputs
    assert not any(p.endswith("/os.py") for p in rec.inputs)  # the standard library is keyed by the interpreter
    cache = ResultCache(str(tmp_path / "cache"))
    cache.put("m" * 64, rec.inputs, 0, b"", b"")
    assert cache.get("m" * 64) is not None
    st = mod.stat()
    os.utime(mod, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert cache.get("m" * 64) is None


def test_an_entry_round_trips():
    data = encode({"/a": (1, 2, 3, 4, 5), "/b": None}, 0, b"stdout \xe2\x9c\x93", b"stderr")
    assert decode(data) == ([("/a", [1, 2, 3, 4, 5]), ("/b", None)], 0, b"stdout \xe2\x9c\x93", b"stderr")
    assert decode(data[:-1]) is None and decode(b"RPLRES0\n" + data[8:]) is None


@pytest.mark.parametrize("size", [10, LARGE_BODY - 100, LARGE_BODY, 3 * LARGE_BODY])
def test_entries_small_and_large_carry_the_sha256_of_their_body_and_a_flipped_byte_is_caught(size):
    """Small bodies are hashed by the built-in sha256, large ones by hashlib's: the digest is the sha256 either way."""
    import hashlib

    out = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    data = encode({"/a": None}, 0, out, b"")
    body = data[len(b"RPLRES1\n") + 8 + 32 :]
    assert data[len(b"RPLRES1\n") + 8 : len(b"RPLRES1\n") + 40] == hashlib.sha256(body).digest()
    assert decode(data) == ([("/a", None)], 0, out, b"")
    flipped = bytearray(data)
    flipped[-1 - size // 2] ^= 1
    assert decode(bytes(flipped)) is None
