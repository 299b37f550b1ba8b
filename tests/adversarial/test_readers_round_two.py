"""Issue 43, items 9, 11 and 12: a key twice in one record, a symbolic link out of verify's --root, a gzip bomb
in a trials table, and the one backoff and Retry-After rule."""

from __future__ import annotations

import gzip
import shutil

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.config import RetryPolicy
from replicate.errors import BadInput
from replicate.fetch.httpfetch import rate_limit_error
from replicate.reading.stream import MAX_RATIO
from replicate.retry import backoff, parse_retry_after
from replicate.trials.load import read_trials
from support.paths import ROOT

EXAMPLE = ROOT / "fixtures" / "example"
GOOD = b'{"query_id": "1", "corpus_id": "d%d", "original_qrel_score": 2, "model_output": "##final score: 2"}\n'


TRIAL = b'{"model": "m%d", "item": "i%d", "trial": 0, "benchmark": "b", "category": "correct"}\n'
#: A judge file and a trials table, each long enough for the bulk path to read it first, and the line
#: (1-based) where a taken field is then written twice with different values, and the message's tail.
TWICE = {
    "judge": (["parse", "--parser", "umbrela-strict@1"], "r.jsonl", [GOOD % i for i in range(300)], 201,
              b'{"query_id": "1", "corpus_id": "dup", "original_qrel_score": 2, '
              b'"model_output": "##final score: 2", "model_output": "##final score: 0"}\n',
              "key 'model_output' appears 2 times in one record, with different values "
              "('##final score: 2', '##final score: 0')"),
    "trials": (["screen"], "t.jsonl", [TRIAL % (m, i) for m in (1, 2) for i in range(100)], 151,
               b'{"model": "m2", "item": "i50", "trial": 0, "benchmark": "b", "category": "wrong", '
               b'"category": "correct"}\n',
               "key 'category' appears 2 times in one record, with different values ('wrong', 'correct')"),
}
#: One good line, then one with a taken field twice with the same value (a trials table gzipped).
SAME = {
    "judge": (["parse", "--parser", "umbrela-strict@1"], "r.jsonl",
              GOOD % 0 + b'{"query_id": "1", "corpus_id": "x", "corpus_id": "x", "original_qrel_score": 1, '
                         b'"model_output": "##final score: 1"}\n', "corpus_id"),
    "trials": (["screen"], "t.jsonl.gz",
               gzip.compress(TRIAL % (1, 1) + b'{"model": "m1", "item": "i2", "item": "i2", "trial": 0, '
                                              b'"benchmark": "b", "category": "wrong"}\n'), "item"),
}


def _invoke(command: list[str], path, *extra: str):
    return CliRunner().invoke(app, [command[0], str(path), *command[1:], *extra])


def _parse(path, *extra: str):
    return _invoke(TWICE["judge"][0], path, *extra)


@pytest.mark.parametrize("reader", sorted(TWICE))
@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_a_taken_field_twice_with_different_values_is_an_error_naming_file_and_line(tmp_path, reader, strict):
    command, name, lines, lineno, bad, message = TWICE[reader]
    lines = [*lines]
    lines[lineno - 1] = bad
    p = tmp_path / name
    p.write_bytes(b"".join(lines))
    res = _invoke(command, p, *strict)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        f"Error: {p}:{lineno}: {message}: which one is meant cannot be known; keep one")


@pytest.mark.parametrize("reader", sorted(SAME))
def test_a_key_repeated_with_the_same_value_is_a_counted_warning_and_an_error_under_strict(tmp_path, reader):
    command, name, data, key = SAME[reader]
    p = tmp_path / name
    p.write_bytes(data)
    res = _invoke(command, p, "--format", "json")
    assert res.exit_code == 0 and orjson.loads(res.stdout)["warnings"]["by_code"] == {"repeated-key": 1}
    strict = _invoke(command, p, "--strict")
    assert strict.exit_code == 2 and f"{p}:2: key '{key}' appears 2 times in one record, with the same value" \
        in strict.stderr


def test_a_field_name_inside_a_text_is_no_repeated_key(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"query_id": "1", "corpus_id": "d", "original_qrel_score": 2, '
                  b'"model_output": "I write \\"model_output\\": ##final score: 2"}\n')
    res = _parse(p, "--format", "json", "--strict")
    assert res.exit_code == 0, res.output


def test_verify_root_does_not_follow_a_symbolic_link_out_of_it(tmp_path):
    root = tmp_path / "release"
    shutil.copytree(EXAMPLE, root)
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-FIRST-LINE: a private file\n")
    target = root / "results" / "alpha-2024-05_annotations.jsonl"
    target.unlink()
    target.symlink_to(outside)
    res = CliRunner().invoke(app, ["verify", str(root / "claims.toml"), "--root", str(root)])
    assert res.exit_code == 2
    assert res.stderr == (f"Error: {root / 'claims.toml'}: [runs] file 'results/alpha-2024-05_annotations.jsonl' "
                          "resolves outside --root (a symbolic link out of it): it is not read\n")
    assert "OUTSIDE" not in res.output
    (root / "results").rename(root / "kept")  # a folder on the way that links out is refused the same way
    (root / "results").symlink_to(tmp_path)
    res = CliRunner().invoke(app, ["verify", str(root / "claims.toml"), "--root", str(root)])
    assert res.exit_code == 2 and "resolves outside --root" in res.stderr


def test_a_trials_table_gzip_bomb_is_refused_like_a_judge_files(tmp_path):
    row = b'{"model": "a", "item": "i", "trial": 0, "benchmark": "b", "category": "correct"}\n'
    bomb = tmp_path / "t.jsonl.gz"
    bomb.write_bytes(gzip.compress(row + b" " * (MAX_RATIO * 4 << 10), compresslevel=9))
    with pytest.raises(BadInput, match=r"t\.jsonl\.gz: gzip stream inflates to more than .* refused as a gzip bomb"):
        read_trials(bomb)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(row * 50)[:-12])
    with pytest.raises(BadInput, match="truncated gzip"):
        read_trials(cut)
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_bytes(row)
    with pytest.raises(BadInput, match="name ends in .gz but the file is not gzip-compressed"):
        read_trials(plain)


def test_one_backoff_and_one_retry_after_rule():
    assert [backoff(n, base=0.5, cap=30.0) for n in (1, 2, 3, 7, 8, 10**6)] == [0.5, 1.0, 2.0, 30.0, 30.0, 30.0]
    policy = RetryPolicy(backoff_base=1.0, backoff_max=60.0)
    assert policy.delay(3, retry_after=None, jitter=1.0) == backoff(3, base=1.0, cap=60.0) == 4.0
    assert policy.delay(3, retry_after=10.0, jitter=0.0) == 10.0
    assert parse_retry_after("1.5") == 1.5 and parse_retry_after("-3") == 0.0
    assert parse_retry_after("nan") is None and parse_retry_after("inf") is None and parse_retry_after("soon") is None
    assert parse_retry_after("Thu, 01 Jan 1970 00:01:40 GMT", now=40.0) == 60.0

    class Resp:
        status_code = 429
        headers = {"Retry-After": "Thu, 01 Jan 1970 00:01:40 GMT"}

    err = rate_limit_error(Resp(), "https://api.example/x", now=40.0)  # an HTTP date, read as the collector reads it
    assert "retry after 60 s (1970-01-01T00:01:40Z)" in str(err)
