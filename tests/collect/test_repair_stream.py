"""``repair-archive`` reads the archive as a stream (memory ~ its trials as keys, not its bytes): on archives
whose lines end in LF, CRLF and a lone CR, with blank lines, a torn last line, retried API errors and
duplicates that differ or not, read in blocks that cut lines anywhere and in several chunks of lines, the
repaired file, the lines dropped and the trials kept equal what the whole-file reading (written here as the
reference) gives; a line that is not JSON is named with its line and nothing is written."""

from __future__ import annotations

import random

import orjson
import pytest

from replicate.collect import archive_read
from replicate.collect.repair import repair_archive
from replicate.errors import BadInput

HEADER = {"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x", "items": {}}


def reference(data: bytes) -> tuple[bytes, list[tuple[int, int, bool]], int, int]:
    """The repair as a whole-file reading: (repaired bytes, (line, kept line, differs) per duplicate dropped,
    trials kept, newlines)."""
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    kept, dropped, first = [], [], {}
    for n, line in enumerate(body.splitlines(keepends=True), 1):
        rec = orjson.loads(line) if line.strip() else None
        if isinstance(rec, dict) and rec.get("type") == "trial":
            key = (str(rec["model"]), str(rec["item"]), rec["trial"])
            if key in first and not first[key][1].get("error_kind"):
                strip = ("ts", "latency_s", "attempts")
                differs = ({k: v for k, v in rec.items() if k not in strip}
                           != {k: v for k, v in first[key][1].items() if k not in strip})
                dropped.append((n, first[key][0], differs))
                continue
            first[key] = (n, rec)
        kept.append(line)
    return b"".join(kept) + tail, dropped, len(first), data.count(b"\n")


def damaged(seed: int, n_lines: int) -> bytes:
    """A header, then trial records of 3 models x 40 items x 3 trials, some API errors retried later, some
    records written twice (a few with another reply), blank lines, mixed line endings and a torn last line."""
    rnd = random.Random(seed)
    out = [orjson.dumps(HEADER) + b"\n"]
    written: list[dict] = []
    for _ in range(n_lines):
        r = rnd.random()
        if written and r < 0.15:  # a second collector's copy
            rec = dict(rnd.choice(written))
            if rnd.random() < 0.3:
                rec["text"] = "another reply"
            rec["ts"] = f"2026-12-0{rnd.randint(1, 9)}"
        elif r < 0.18:
            rec = {"type": "trial", "model": f"m{rnd.randrange(3)}", "item": rnd.randrange(40), "trial": 0,
                   "error_kind": "http_500", "text": None}
        else:
            rec = {"type": "trial", "model": f"m{rnd.randrange(3)}", "item": rnd.randrange(40),
                   "trial": rnd.randrange(3), "text": "x" * rnd.randrange(300), "error_kind": None,
                   "ts": "2026-12-06"}
        written.append(rec)
        ending = rnd.choice([b"\n", b"\n", b"\n", b"\r\n", b"\r"])
        out.append(orjson.dumps(rec) + ending)
        if rnd.random() < 0.02:
            out.append(rnd.choice([b"\n", b"  \n", b"\r\n"]))
    out.append(b'{"type":"trial","model":"m0","it')  # torn by a crash
    return b"".join(out)


@pytest.mark.parametrize("block", [97, 4093, 1 << 20])
@pytest.mark.parametrize("seed,n_lines", [(0, 300), (1, 3000)])
def test_stream_repair_equals_whole_file_reading(tmp_path, monkeypatch, block, seed, n_lines):
    monkeypatch.setattr(archive_read, "READ_BLOCK", block)
    data = damaged(seed, n_lines)
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(data)
    want, dropped, trials, newlines = reference(data)
    assert dropped and any(d for *_, d in dropped) and b"\r" in data  # the cases are there
    if n_lines == 3000:
        assert len(data) > 2 * (1 << 18)  # several chunks of lines
    # scan_archive, run after the repair, reads the torn line as torn and the archive as clean
    rep = repair_archive(arch)
    assert arch.read_bytes() == want
    assert (tmp_path / "a.jsonl.bak").read_bytes() == data
    assert [(d.line, d.kept_line, d.differs) for d in rep.dropped] == dropped
    assert (rep.trials_kept, rep.lines) == (trials, newlines)


def test_line_not_json_is_named_and_nothing_written(tmp_path):
    data = damaged(2, 200)
    lines = data.split(b"\n")
    lines[150] = b'{"type":"trial",'
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"\n".join(lines))
    line = len(b"\n".join(lines[:150]).splitlines()) + 1  # its number as splitlines counts lines (lone CRs too)
    link = tmp_path / "link.jsonl"
    link.symlink_to(arch.name)
    for given in (arch, link):  # the archive named as given, not its real file
        with pytest.raises(BadInput) as exc:
            repair_archive(given)
        assert str(exc.value).startswith(f"{given}:{line}: archive record is not valid JSON"), str(exc.value)
    assert arch.read_bytes() == b"\n".join(lines)
    assert not list(tmp_path.glob("*.bak*"))
