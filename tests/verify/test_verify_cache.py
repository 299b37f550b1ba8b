"""verify reads and writes the label cache the judge commands use: a rerun reads labels, the output is the same.

The command over a copy of the bundled example, with REPLICATE_CACHE_DIR
pointing at a temporary folder: cold and warm runs of the first test in fresh
interpreters, the rest in this one (``invoke``: the cache is on disk either way).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replicate.cachedir import keyed, unkeyed
from replicate.judge.api import load_runs
from replicate.judge.labelcache import LabelCache, decode, encode
from replicate.judge.select import runs_from_toml
from replicate.parsing import PARSERS as PARSERS_BY_NAME
from replicate.verify import verify
from support.cachecli import invoke, replicate

PARSERS = ("umbrela-fallback@1", "umbrela-strict@1")
VERIFY = ["verify", "claims.toml", "--root", ".", "-p", PARSERS[0], "-p", PARSERS[1], "-f", "json",
          "--date", "2026-01-01", "--no-fail", "--replicates", "0"]


def run(example: Path, cache: Path, *args: str, process: bool = False):
    p = (replicate if process else invoke)(example, cache, *args)
    assert p.returncode == 0, p.stderr
    return p


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "labels").glob("*/*.labels"))


def test_a_rerun_of_verify_reads_labels_and_prints_the_same_bytes(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = run(example_copy, cache, "--verbose", *VERIFY, process=True)
    # 5 runs x 2 parsers, each labelled once
    assert cold.stderr.count("label cache: miss") == 10 and "hit" not in cold.stderr
    assert len(entries(cache)) == 10
    warm = run(example_copy, cache, "--verbose", *VERIFY, process=True)
    assert warm.stderr.count("label cache: hit") == 10 and "miss" not in warm.stderr
    assert warm.stdout == cold.stdout
    block = json.loads(warm.stdout)["label_cache"]
    assert block["format"] == 1
    assert sorted(e["key"] for e in block["entries"]) == sorted(p.stem for p in entries(cache))
    assert {e["run"] for e in block["entries"]} == {"alpha-2024-05", "alpha-2024-08", "alpha-2025-01",
                                                    "alpha-2025-04", "alpha-2025-01-repeat"}
    assert {(e["run"], e["parser"]) for e in block["entries"]} == {(e["run"], p) for e in block["entries"] for p in PARSERS}
    # --no-cache: the same bytes (the keys are provenance: what the labels are a function of), nothing written
    unused = tmp_path / "unused"
    plain = run(example_copy, unused, "--no-cache", "--verbose", *VERIFY)
    assert "label cache" not in plain.stderr and not unused.exists()
    assert plain.stdout == cold.stdout


def test_verify_uses_the_cached_labels(example_copy, tmp_path):
    # a well-formed entry is trusted: with every parsed label turned into 3, a recomputed EM is gold's share of 3
    cache = tmp_path / "cache"
    cold = json.loads(run(example_copy, cache, *VERIFY).stdout)
    store = LabelCache(cache)
    for entry in cold["label_cache"]["entries"]:
        data = unkeyed(store.path(entry["key"]).read_bytes())
        labels = decode(data, len(data) - 48)
        assert labels is not None
        store.path(entry["key"]).write_bytes(keyed(entry["key"], encode(np.where(labels >= 0, 3, labels))))
    warm = json.loads(run(example_copy, cache, *VERIFY).stdout)
    loaded = load_runs(runs_from_toml(example_copy / "runs.toml"))
    em_claims = [c for c in warm["claims"] if c["metric"] == "em"]
    assert em_claims
    for c in em_claims:
        for p in PARSERS:
            lr = loaded.run(c["run"]).label_with(PARSERS_BY_NAME.get(p))
            parsed = lr.labels >= 0
            right = parsed & (lr.gold == 3)  # every parsed label is 3 now
            expected = right.sum() / (len(lr) if c["unparsed"] == "wrong" else parsed.sum())
            assert c["computed"][p] == pytest.approx(float(expected), abs=1e-15)
            assert c["computed"][p] != next(x for x in cold["claims"] if x["id"] == c["id"])["computed"][p]


def test_the_library_verify_gives_the_same_figures_with_and_without_the_cache(example_copy, tmp_path):
    def figures(v):
        return {(r.claim.id, p): r.computed[p].to_json() for r in v.runs.results for p in r.parsers}

    plain = verify(example_copy / "claims.toml", root=str(example_copy), parsers=list(PARSERS), date="2026-01-01")
    cache = LabelCache(tmp_path / "cache")
    cold = verify(example_copy / "claims.toml", root=str(example_copy), parsers=list(PARSERS), date="2026-01-01",
                  label_cache=cache)
    assert [e.event for e in cache.events] == ["miss"] * 10
    warm_cache = LabelCache(tmp_path / "cache")
    warm = verify(example_copy / "claims.toml", root=str(example_copy), parsers=list(PARSERS), date="2026-01-01",
                  label_cache=warm_cache)
    assert [e.event for e in warm_cache.events] == ["hit"] * 10
    assert figures(plain) == figures(cold) == figures(warm)
    # the keys are provenance: the same with and without the cache, one per run and parser
    assert plain.runs.label_keys == cold.runs.label_keys == warm.runs.label_keys and len(plain.runs.label_keys) == 10


def test_a_matrix_run_warms_verify_and_verify_warms_matrix(example_copy, tmp_path):
    # the same files read the same way by the same parser version: one entry, whichever command wrote it
    # (matrix reads gold against its parser's label set, verify against none: that does not change labels)
    cache = tmp_path / "cache"
    matrix = ["matrix", "--runs", "runs.toml", "-p", PARSERS[0], "-f", "json", "--replicates", "0"]
    run(example_copy, cache, *matrix)
    assert len(entries(cache)) == 4  # the four runs of runs.toml
    warm = run(example_copy, cache, "--verbose", *VERIFY)
    assert warm.stderr.count("label cache: hit") == 4 and warm.stderr.count("label cache: miss") == 6
    hits = {line.split(" for run ")[1].split(" ")[0] for line in warm.stderr.splitlines() if "label cache: hit" in line}
    assert hits == {"alpha-2024-05", "alpha-2024-08", "alpha-2025-01", "alpha-2025-04"}
    # and back: a matrix under the other parser finds what verify wrote
    other = run(example_copy, cache, "--verbose", *matrix[:3], "-p", PARSERS[1], *matrix[5:])
    assert other.stderr.count("label cache: hit") == 4 and "label cache: miss" not in other.stderr


def test_what_changes_the_labels_changes_the_key():
    from replicate.judge.labelcache import label_key
    from replicate.judge.load import FieldSpec
    from replicate.labels import LabelSet
    from replicate.reading.contract import ReadOptions

    files = [("aa", "judge-jsonl@1"), ("bb", "judge-jsonl@1")]
    fs = FieldSpec()
    base = label_key(files, "umbrela-fallback@1", fs, None)
    # the same reading, spelled otherwise, or with gold read against another label set: the same key
    assert base == label_key(files, "umbrela-fallback@1", fs, ReadOptions(fields=fs))
    assert base == label_key(files, "umbrela-fallback@1", fs, ReadOptions())
    assert base == label_key(files, "umbrela-fallback@1", fs, ReadOptions(fields=fs, gold_labels=LabelSet.ordinal(0, 3)))
    assert base == label_key(files, "umbrela-fallback@1", fs, ReadOptions(gold_labels=LabelSet.categorical("A", "B")))
    two = ReadOptions(extra={"filter": "strict-match", "metric": "em"})
    assert label_key(files, "p@1", fs, two) == label_key(files, "p@1", fs, ReadOptions(extra={"metric": "em", "filter": "strict-match"}))
    # what can change them: another key
    others = [
        label_key(files, "umbrela-fallback@2", fs, None),  # the parser's version
        label_key(files, "umbrela-strict@1", fs, None),
        label_key([("aa", "judge-jsonl@1"), ("bc", "judge-jsonl@1")], "umbrela-fallback@1", fs, None),  # a file's bytes
        label_key([("aa", "judge-jsonl@2"), ("bb", "judge-jsonl@1")], "umbrela-fallback@1", fs, None),  # a reader
        label_key(files[::-1], "umbrela-fallback@1", fs, None),  # the files' order
        label_key(files, "umbrela-fallback@1", fs, ReadOptions(extra={"filter": "strict-match"})),  # a reader option
        label_key(files, "umbrela-fallback@1", fs, ReadOptions(extra={"filter": "flexible-extract"})),
        label_key(files, "umbrela-fallback@1", FieldSpec(output_fields=("gemini_output",)), None),  # a field option
        label_key(files, "umbrela-fallback@1", FieldSpec(key_fields=("query_id",)), None),
        label_key(files, "umbrela-fallback@1", fs, ReadOptions(fields=FieldSpec(output_fields=("out",)))),
    ]
    assert len({base, *others}) == len(others) + 1


def test_the_run_cache_key_counts_how_gold_is_read():
    # the run cache keeps gold: a label set with names reads "tie" otherwise; an unnamed ordinal set reads as none
    from replicate.judge.load import FieldSpec
    from replicate.judge.load.plan import run_key
    from replicate.labels import LabelSet
    from replicate.reading.contract import ReadOptions

    path = [Path(__file__)]
    fs = FieldSpec()
    base = run_key(path, None, fs, None)
    assert base == run_key(path, None, fs, ReadOptions(fields=fs, gold_labels=LabelSet.ordinal(0, 3)))
    assert base != run_key(path, None, fs, ReadOptions(gold_labels=LabelSet.categorical("A", "B", "tie")))
    assert base != run_key(path, None, fs, ReadOptions(gold_labels=LabelSet.named_ordinal("B>>A", "B>A", "A=B")))
    assert base != run_key(path, "judge-jsonl@1", fs, None)
