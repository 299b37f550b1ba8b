"""Issue 30 item 4: readers stream; memory grows with items, not bytes; a gzip bomb is refused while inflating."""

from __future__ import annotations

import gzip
import json

import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.judge.load.outputs import StreamedOutputs
from replicate.reading.stream import MAX_RATIO, InputStream, line_chunks


@pytest.fixture
def reread(monkeypatch):
    """Every file's outputs read again when parsed, as a file over the budget's are (the files here are small)."""
    import replicate.judge.load.outputs as outputs

    monkeypatch.setattr(outputs, "KEEP_OUTPUTS_BELOW", 0)


def _rows(n: int) -> bytes:
    return b"".join(json.dumps({"query_id": str(i // 10), "corpus_id": str(i), "original_qrel_score": i % 4,
                                "model_output": f"reasoning {i} final score: {i % 4}"}).encode() + b"\n"
                    for i in range(n))


def test_a_gzip_bomb_is_refused_while_inflating(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\0" * (64 << 20), 9))  # 64 MiB of zero bytes in ~64 KB
    with pytest.raises(BadInput, match=rf"bomb.jsonl.gz: gzip stream inflates .* more than {MAX_RATIO:,}\): refused as a gzip bomb"):
        load_run("r", bomb, diagnostics=Diagnostics(), reader="judge-jsonl@1")


def test_gzip_members_stream_to_the_bytes_gzip_decompress_gives(tmp_path):
    data = _rows(3000)
    p = tmp_path / "two.gz"
    p.write_bytes(gzip.compress(data[:5000]) + gzip.compress(data[5000:]) + b"\x00" * 8)
    s = InputStream(p)
    assert s.read() == gzip.decompress(p.read_bytes()) == data
    import hashlib
    assert s.sha256 == hashlib.sha256(p.read_bytes()).hexdigest() and s.size == p.stat().st_size


def test_line_chunks_are_whole_lines_and_bound_a_line(tmp_path):
    data = _rows(500)
    blocks = [data[i:i + 777] for i in range(0, len(data), 777)]
    chunks = list(line_chunks(blocks, path=tmp_path, size=1000))
    assert b"".join(chunks) == data and all(c.endswith(b"\n") for c in chunks) and len(chunks) > 10
    with pytest.raises(BadInput, match=r":3: a line longer than 100 bytes"):
        list(line_chunks([b"a\nb\n" + b"x" * 60, b"y" * 60], path=tmp_path, limit=100))


def test_outputs_are_read_again_not_kept_and_a_changed_file_is_an_error(tmp_path, reread):
    p = tmp_path / "run.jsonl"
    p.write_bytes(_rows(2000))
    run = load_run("r", p, diagnostics=Diagnostics())
    assert isinstance(run.outputs, StreamedOutputs)
    expected = [f"reasoning {i} final score: {i % 4}" for i in range(2000)]
    assert list(run.outputs) == expected and list(run.outputs) == expected  # each pass reads the file again
    p.write_bytes(_rows(2000).replace(b"reasoning 7 ", b"reasoning 8 "))
    with pytest.raises(BadInput, match="changed while it was being read"):
        list(run.outputs)


def test_a_subset_of_streamed_outputs_stays_streamed(tmp_path, reread):
    import numpy as np

    from replicate.judge.gold import subset
    from replicate.judge.load.outputs import SelectedOutputs

    p = tmp_path / "run.jsonl"
    p.write_bytes(_rows(50))
    run = load_run("r", p, diagnostics=Diagnostics())
    keep = np.zeros(50, bool)
    keep[[3, 4, 17, 49]] = True
    part = subset(run, keep, run.gold[keep])
    assert isinstance(part.outputs, SelectedOutputs)
    assert list(part.outputs) == [f"reasoning {i} final score: {i % 4}" for i in (3, 4, 17, 49)]
    assert part.outputs[2] == "reasoning 17 final score: 1" and len(part.outputs) == 4


def test_outputs_of_a_pipe_are_read_again_from_what_was_read(tmp_path, reread):
    """A pipe cannot be read twice: its bytes (read whole, a line's length bounded) serve the second pass."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = _rows(300)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=feed)
    t.start()
    run = load_run("r", fifo, diagnostics=Diagnostics())
    t.join()
    assert list(run.outputs) == [f"reasoning {i} final score: {i % 4}" for i in range(300)]


@pytest.mark.parametrize("name", ["run.jsonl", "umbrela.jsonl"])
def test_a_file_within_the_budget_keeps_its_outputs_from_the_one_pass(tmp_path, monkeypatch, name):
    """Within KEEP_OUTPUTS_BELOW bytes a file is read once (its outputs kept: rewriting it later changes
    nothing); over it, the outputs are read again when used, and the two give the same outputs."""
    import replicate.judge.load.outputs as outputs

    p = tmp_path / name
    if name == "umbrela.jsonl":
        data = b"".join(json.dumps({"qid": str(i // 10), "docid": str(i), "query": "q", "passage": "p",
                                    "prediction": f"reasoning {i} final score: {i % 4}"}).encode() + b"\n"
                        for i in range(500))
    else:
        data = _rows(500)
    p.write_bytes(data)
    expected = [f"reasoning {i} final score: {i % 4}" for i in range(500)]
    kept = load_run("r", p, diagnostics=Diagnostics())
    assert kept.files[0].reader == ("umbrela-judge@1" if name == "umbrela.jsonl" else "judge-jsonl@1")
    p.write_bytes(data.replace(b"reasoning 7 ", b"reasoning 8 "))
    assert list(kept.outputs) == expected  # not read again
    p.write_bytes(data)
    monkeypatch.setattr(outputs, "KEEP_OUTPUTS_BELOW", len(data) // 2)  # the budget runs out half-way
    streamed = load_run("r", p, diagnostics=Diagnostics())
    assert list(streamed.outputs) == expected
    p.write_bytes(data.replace(b"reasoning 7 ", b"reasoning 8 "))
    with pytest.raises(BadInput, match="changed while it was being read"):
        list(streamed.outputs)
