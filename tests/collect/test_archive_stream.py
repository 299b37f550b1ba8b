"""The archive read as a stream of blocks (issue 39): the same records, line numbers and errors as a whole
read, whatever the blocks; what scan_archive keeps; superseded API errors; gzip; resuming."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import threading
from pathlib import Path

import orjson
import pytest

import replicate.collect.archive_read as archive_read
from replicate.collect.archive import ArchiveLock, open_for_collection
from replicate.collect.archive_read import ARCHIVE_SCHEMA, ArchiveStream, read_archive, scan_archive
from replicate.collect.config import load_config, load_items
from replicate.collect.repair import repair_archive
from replicate.errors import BadInput

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "collect"
HEADER = {"type": "header", "schema": ARCHIVE_SCHEMA, "config": {}, "seed": 0, "params_hash": "x", "items": {}}


def trial(model: str, item: str, t: int, text: str | None = "Final answer: 4", error_kind: str | None = None,
          ts: str = "2026-01-01") -> dict:
    return {"type": "trial", "model": model, "item": item, "trial": t, "text": text, "error_kind": error_kind,
            "ts": ts}


def lines(*records: dict) -> list[bytes]:
    return [orjson.dumps(r) for r in records]


def whole_read(data: bytes) -> tuple[list[tuple[int, object]], int]:
    """The reference: what the reader did before it streamed (the file whole, ``splitlines``, one
    ``orjson.loads`` a non-blank line), as (line, value) pairs and the torn size."""
    end = data.rfind(b"\n") + 1
    out = [(n, orjson.loads(line)) for n, line in enumerate(data[:end].splitlines(), 1) if line.strip()]
    return out, len(data) - end


def streamed(path: Path) -> tuple[list[tuple[int, object]], int, int]:
    s = ArchiveStream(path)
    return list(s._numbered()), s.torn_bytes, s.valid_size


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 7 bytes: every record is split across blocks."""
    monkeypatch.setattr(archive_read, "READ_BLOCK", 7)


@pytest.mark.parametrize("parse_chunk", [3, archive_read.PARSE_CHUNK])
@pytest.mark.parametrize("block", [7, 64, 1 << 20])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_the_same_records_and_line_numbers_as_a_whole_read_whatever_the_blocks(tmp_path, monkeypatch, block,
                                                                               newline, parse_chunk):
    monkeypatch.setattr(archive_read, "READ_BLOCK", block)
    monkeypatch.setattr(archive_read, "PARSE_CHUNK", parse_chunk)  # 3: a chunk of one line, cut anywhere
    recs = lines(HEADER, *(trial("m", f"q{i}", t, "x" * (i * 37 % 300)) for i in range(40) for t in range(3)))
    recs[2:2] = lines(trial("m", "é€😀", 0, "é€😀 " * 9))  # multi-byte UTF-8, split inside a character by 7-byte blocks
    recs[5:5] = [b"", b"   ", b"\t"]  # blank lines are counted, not read
    data = newline.join(recs) + newline + b'{"type": "trial", "mo'  # and a torn last line
    p = tmp_path / "a.jsonl"
    p.write_bytes(data)
    values, torn, valid = streamed(p)
    ref, ref_torn = whole_read(data)
    assert values == ref and torn == ref_torn == 21 and valid == len(data) - 21
    assert [n for n, _ in values[3:6]] == [4, 5, 9]  # the three blank lines counted


def test_a_lone_carriage_return_ends_a_line_as_splitlines_did(tmp_path, tiny_blocks):
    data = b"\n".join(lines(HEADER, trial("m", "q1", 0))) + b"\n{\"a\":\r1}\n"
    p = tmp_path / "a.jsonl"
    p.write_bytes(data)
    with pytest.raises(BadInput, match=r"a\.jsonl:3: archive record is not valid JSON: ") as e:
        read_archive(p)
    with pytest.raises(BadInput) as old:
        for n, line in enumerate(data.splitlines(), 1):
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                raise BadInput("x", line=n) from None
    assert e.value.line == old.value.line == 3


def _archive(tmp_path: Path, *records: dict | bytes, tail: bytes = b"") -> Path:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records) + tail)
    return p


@pytest.mark.parametrize("records, message", [
    ((HEADER, trial("m", "q1", 0), b'{"type": "trial", "model": '),
     r"a\.jsonl:3: archive record is not valid JSON: unexpected end of data"),
    ((trial("m", "q1", 0), HEADER), r"a\.jsonl:1: a trial record before the header$"),
    ((HEADER, trial("m", "q1", 0), HEADER), r"a\.jsonl:3: a second header record$"),
    ((HEADER, trial("m", "q1", 0), trial("m", "q2", 0), trial("m", "q1", 0, "Final answer: 5")),
     r"a\.jsonl:4: duplicate trial \('m', 'q1', 0\) \(also on line 2\)$"),
    ((HEADER, trial("m", "q1", 0, None, "http_500"), trial("m", "q1", 0), trial("m", "q1", 0, "again")),
     r"a\.jsonl:4: duplicate trial \('m', 'q1', 0\) \(also on line 3\)$"),  # the record that stood
    ((HEADER, {**trial("m", "q1", 0), "trial": -1}), r"a\.jsonl:2: a trial record needs model, item and trial"),
    ((HEADER, {**trial("m", "q1", 0), "trial": True}), r"a\.jsonl:2: a trial record needs model, item and trial"),
    ((HEADER, {"type": "weird"}), r"a\.jsonl:2: unknown record type 'weird'"),
    (({**HEADER, "schema": "replicate.archive/9"},), r"a\.jsonl:1: unknown archive schema 'replicate\.archive/9'"),
    (({"type": "resume"},), r"a\.jsonl:1: a resume record before the header$"),
    (({"type": "batch"},), r"a\.jsonl:1: a batch record before the header$"),
    (({"model": "m"},), r"a\.jsonl:1: the first record is not an archive header"),
])
def test_each_bad_input_names_the_file_and_the_line_whatever_the_blocks(tmp_path, tiny_blocks, records, message):
    p = _archive(tmp_path, *records)
    for read in (read_archive, scan_archive):
        with pytest.raises(BadInput, match=message):
            read(p)


DUPLICATE = b"".join(orjson.dumps(r) + b"\n" for r in (
    HEADER, trial("m", "q0", 0), trial("m", "q1", 0, None, "http_500"), trial("m", "q2", 0), trial("m", "q1", 0),
    trial("m", "q3", 0), trial("m", "q1", 0, "again")))
#: the earlier record named is the one that stood (line 5: it superseded the API error on line 3)
DUPLICATE_SAID = r"duplicate trial \('m', 'q1', 0\) \(also on line 5\)$"


def _read_in_thread(path: str, unblock) -> BaseException | None:
    """Read ``path``, failing the test (after ``unblock()`` frees the reader) if it takes over 20 s."""
    caught: list[BaseException] = []

    def read():
        try:
            scan_archive(path)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test
            caught.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    if reader.is_alive():
        unblock()
        reader.join(20)
        pytest.fail(f"reading {path} hung")
    return caught[0] if caught else None


def test_a_duplicate_in_a_fifo_names_its_earlier_line_without_opening_the_fifo_again(tmp_path, tiny_blocks):
    fifo = tmp_path / "a.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as fh:
            fh.write(DUPLICATE)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()

    def unblock():  # a reader waiting in open() for a second writer is let go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    exc = _read_in_thread(str(fifo), unblock)
    writer.join(20)
    assert isinstance(exc, BadInput) and exc.line == 7, exc
    assert re.search(DUPLICATE_SAID, str(exc)), str(exc)


def test_a_duplicate_in_a_pipe_names_its_earlier_line(tmp_path, tiny_blocks):
    """A process substitution, ``<(cat a.jsonl)``: the reader is given /dev/fd/N of a pipe from another process;
    opening it again reads nothing (the line said was 0)."""
    p = tmp_path / "a.jsonl"
    p.write_bytes(DUPLICATE)
    with subprocess.Popen(["cat", str(p)], stdout=subprocess.PIPE) as cat:
        assert cat.stdout is not None
        exc = _read_in_thread(f"/dev/fd/{cat.stdout.fileno()}", cat.kill)
    assert isinstance(exc, BadInput) and exc.line == 7, exc
    assert re.search(DUPLICATE_SAID, str(exc)), str(exc)


def test_the_first_error_in_the_file_is_the_one_said(tmp_path):
    # a duplicate on line 3, a line that is not JSON on line 4: the duplicate, as a whole read said
    p = _archive(tmp_path, HEADER, trial("m", "q1", 0), trial("m", "q1", 0), b"{oops")
    with pytest.raises(BadInput, match=r"a\.jsonl:3: duplicate trial"):
        scan_archive(p)


def test_a_torn_line_split_across_blocks_is_reported_not_raised(tmp_path, tiny_blocks):
    p = _archive(tmp_path, HEADER, trial("m", "q1", 0), tail=b'{"type": "trial", "model": "m", "item": "q2"')
    s = scan_archive(p)
    assert (s.torn_bytes, s.valid_size, s.trials) == (44, p.stat().st_size - 44, 1)
    only_torn = _archive(tmp_path, tail=b'{"type": "hea')
    assert (scan_archive(only_torn).header, scan_archive(only_torn).torn_bytes) == (None, 13)


def test_a_byte_order_mark_is_refused_on_line_1(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(HEADER) + b"\n")
    with pytest.raises(BadInput, match=r"a\.jsonl:1: archive record is not valid JSON: UTF-8 byte order mark"):
        scan_archive(p)


def test_a_missing_archive_and_a_folder_are_named_as_an_archive(tmp_path):
    with pytest.raises(BadInput, match=r"nope\.jsonl: archive not found"):
        scan_archive(tmp_path / "nope.jsonl")
    with pytest.raises(BadInput, match=r"archive is a directory"):
        scan_archive(tmp_path)


def test_a_superseded_api_error_is_yielded_then_listed(tmp_path):
    p = _archive(tmp_path, HEADER, trial("m", "q1", 0, None, "http_500", ts="2025-01-01"), trial("m", "q2", 0),
                 {"type": "resume"}, trial("m", "q1", 0, None, "timeout", ts="2026-02-01"),
                 trial("m", "q1", 0, ts="2026-03-01"), trial("m", "q3", 0, None, "http_429", ts="2026-04-01"))
    s = ArchiveStream(p)
    assert [n for n, _ in s.trials()] == [2, 3, 5, 6, 7]
    assert s.superseded_lines == [2, 5]
    assert s.errors == {("m", "q3", 0): "http_429"}
    scan = scan_archive(p)
    assert scan.done == {("m", "q1", 0), ("m", "q2", 0), ("m", "q3", 0)} and scan.superseded == 2
    assert (scan.first_ts, scan.last_ts) == ("2026-01-01", "2026-04-01")  # not the superseded 2025 one
    assert len(scan.resumes) == 1
    contents = read_archive(p)
    assert [n for n, _ in contents.records] == [3, 6, 7] and contents.superseded == 2


def test_scan_keeps_the_keys_not_the_records_and_shares_their_strings(tmp_path):
    p = _archive(tmp_path, HEADER, *(trial("model-a", f"q{i}", t) for i in range(3) for t in range(4)))
    done = sorted(scan_archive(p).done)
    assert len(done) == 12 and all(k[0] is done[0][0] for k in done)  # one string for the model
    assert all(k[1] is done[0][1] for k in done[:4])


def test_a_gzip_archive_is_read_where_it_is_only_read_and_refused_where_it_is_appended_to(tmp_path, tiny_blocks):
    plain = _archive(tmp_path, HEADER, trial("m", "q1", 0), trial("m", "q2", 1))
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_archive(gz, gzip=True).records == read_archive(plain).records
    refusal = (r"a\.jsonl\.gz: the archive is gzip-compressed; 'replicate collect' and 'replicate repair-archive' "
               r"append to or rewrite an archive: decompress it first \(gunzip\)$")
    with pytest.raises(BadInput, match=refusal):
        scan_archive(gz)
    cfg, items = load_config(FIX / "config.toml"), load_items(FIX / "items.jsonl")
    with ArchiveLock(gz), pytest.raises(BadInput, match=refusal):
        open_for_collection(gz, cfg, items)
    before = gz.read_bytes()
    with pytest.raises(BadInput, match=refusal):  # refused as collect refuses it, not read as lines
        repair_archive(gz)
    assert gz.read_bytes() == before and sorted(q.name for q in tmp_path.iterdir()) == ["a.jsonl", "a.jsonl.gz"]


def test_the_gzip_refusal_names_commands_that_exist():
    from typer.main import get_command

    from replicate.cli.app import app

    named = re.findall(r"'replicate ([a-z-]+)'", archive_read.GZIP_REFUSAL)
    assert named == ["collect", "repair-archive"]
    assert set(named) <= set(get_command(app).commands)  # type: ignore[attr-defined]


def test_resuming_refuses_the_first_standing_record_not_asked_for(tmp_path, monkeypatch):
    from replicate.collect.archive import make_header

    monkeypatch.setenv("SIM_API_KEY", "k")
    cfg, items = load_config(FIX / "config.toml"), load_items(FIX / "items.jsonl")
    header = make_header(cfg, items)
    # a retried error of a model not asked for is refused at the record that stands (line 4), not line 2
    p = _archive(tmp_path, header, trial("other", "q01", 0, None, "http_500"), trial("sim-a", "q01", 0),
                 trial("other", "q01", 0), trial("sim-a", "q01", 7, None, "http_500"))
    with ArchiveLock(p), pytest.raises(BadInput, match=r"a\.jsonl:4: trial \('other', 'q01', 0\) is not part of "
                                                        r"this collection"):
        open_for_collection(p, cfg, items)
    ok = _archive(tmp_path, header, trial("other", "q01", 0, None, "http_500"), trial("sim-a", "q01", 0),
                  trial("other", "q01", 0, None, "http_500"))
    with pytest.raises(BadInput, match=r"a\.jsonl:4: trial \('other'"):  # the error that stands
        with ArchiveLock(ok):
            open_for_collection(ok, cfg, items)
