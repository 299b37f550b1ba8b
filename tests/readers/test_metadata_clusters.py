"""``--cluster metadata.FIELD`` (inspect_ai) and ``--cluster doc.FIELD`` (lm-eval): clusters from each sample's metadata.

The logs are synthetic, in the layouts the harnesses write (tests/support/synth), with a passage in each
sample's ``metadata`` (``doc``). The reference: the same runs read without the option, their keys grouped
by hand (the passage, read by the test from the files, appended as a second key field) and compared by the
library's cluster bootstrap with that key field named: every interval and the clustered McNemar test agree.
"""

from __future__ import annotations

import json
import random
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.api import load_runs
from replicate.judge.compare import compare
from replicate.judge.model import KEY_SEP
from replicate.judge.select import RunSpec
from replicate.judge.uncertainty import Uncertainty
from replicate.reading.contract import ReadOptions
from support.synth import lm_eval_logs
from support.synth.inspect_logs import Sample, write_eval_log

REPLICATES = 300


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _inspect_pair(tmp_path, *, drop: int | None = None):
    rng = random.Random(7)
    paths = []
    for name in ("old", "new"):
        samples = [Sample(i, {"match": rng.choice("CI")},
                          extra={"metadata": {} if i == drop else {"passage": f"p{(i - 1) // 5}", "n": i}})
                   for i in range(1, 61)]
        paths.append(write_eval_log(tmp_path / f"{name}.eval", samples, model=f"org/{name}"))
    return paths


def _passages_of_eval(path) -> dict[str, str]:
    """Sample id -> passage, read from the zip's members by the test."""
    with zipfile.ZipFile(path) as zf:
        objs = [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("samples/")]
    return {str(o["id"]): o["metadata"]["passage"] for o in objs}


def _hand_grouped(specs, passages, parser, options=None):
    """The runs read without the option, each key extended by its passage (the reference's grouping)."""
    runs = load_runs(specs, options=options).labelled(parser)
    return [replace(r, keys=np.array([f"{k}{KEY_SEP}{passages[k]}" for k in r.keys], dtype=object),
                    key_names=(r.key_names or ("id",))[:1] + ("passage",)) for r in runs]


def _agree(cli: dict, ref: dict, clusters: int) -> None:
    assert cli["mcnemar_clustered"]["clusters"] == clusters
    assert cli["mcnemar_clustered"]["statistic"] == ref["mcnemar_clustered"]["statistic"]
    assert cli["mcnemar_clustered"]["p"] == ref["mcnemar_clustered"]["p"]
    for figure, by_method in ref["ci"].items():
        for method, interval in by_method.items():
            if isinstance(interval, dict):
                got = cli["ci"][figure][method]
                assert (got["low"], got["high"]) == (interval["low"], interval["high"]), (figure, method)
                assert got["clusters"] == interval["clusters"]


def test_inspect_metadata_clusters_equal_the_hand_grouped_cluster_bootstrap(tmp_path):
    old, new = _inspect_pair(tmp_path)
    res = _run("compare", old, new, "--inspect-scorer", "match", "--cluster", "metadata.passage",
               "--replicates", REPLICATES, "-f", "json")
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    assert cli["uncertainty"]["cluster"] == "metadata.passage" and cli["n"] == 60
    passages = _passages_of_eval(old)
    assert passages == _passages_of_eval(new) and len(set(passages.values())) == 12
    a, b = _hand_grouped([RunSpec("old", (old,)), RunSpec("new", (new,))], passages, "inspect-score")
    ref = compare(a, b, uncertainty=Uncertainty(replicates=REPLICATES, cluster="passage", key_fields=a.key_names))
    _agree(cli, ref.to_json(), 12)
    item = json.loads(_run("compare", old, new, "--cluster", "item", "--replicates", REPLICATES, "-f", "json").stdout)
    assert item["ci"]["em_old"] != cli["ci"]["em_old"]  # the grouping changed the intervals


def test_lm_eval_doc_clusters_equal_the_hand_grouped_cluster_bootstrap(tmp_path):
    a_path, b_path = lm_eval_logs.write_pair(tmp_path)
    passages = {}
    for path in (a_path, b_path):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        for obj in lines:
            obj["doc"]["passage"] = f"p{obj['doc_id'] % 17}"
            passages[str(obj["doc_id"])] = obj["doc"]["passage"]
        path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines), encoding="utf-8")
    res = _run("compare", a_path, b_path, "--cluster", "doc.passage", "--replicates", REPLICATES, "-f", "json")
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    assert cli["uncertainty"]["cluster"] == "doc.passage"
    a, b = _hand_grouped([RunSpec("a", (a_path,)), RunSpec("b", (b_path,))], passages, "lm-eval-metric")
    ref = compare(a, b, uncertainty=Uncertainty(replicates=REPLICATES, cluster="passage", key_fields=a.key_names))
    _agree(cli, ref.to_json(), 17)


def test_a_sample_lacking_the_field_is_refused_naming_it(tmp_path):
    old, new = _inspect_pair(tmp_path, drop=7)
    res = _run("compare", old, new, "--cluster", "metadata.passage")
    assert res.exit_code == 2
    assert "old.eval" in res.output and "samples/7_epoch_1.json" in res.output and "metadata.passage" in res.output
    a_path, b_path = lm_eval_logs.write_pair(tmp_path)
    res = _run("compare", a_path, b_path, "--cluster", "doc.passage")
    assert res.exit_code == 2 and f"{a_path.name}:1" in res.output and "doc.passage" in res.output, res.output


@pytest.mark.parametrize("spec", ["doc.passage", "metadata."])
def test_the_wrong_prefix_is_refused(tmp_path, spec):
    old, new = _inspect_pair(tmp_path)
    res = _run("compare", old, new, "--cluster", spec)
    assert res.exit_code == 2 and "metadata.FIELD" in res.output, res.output


def test_the_run_cache_keys_on_the_field(tmp_path):
    from replicate.judge.load.plan import run_key

    old, _ = _inspect_pair(tmp_path)
    keys = {run_key([old], "inspect-log@1", None, ReadOptions(extra=extra))
            for extra in ({}, {"cluster_by": "metadata.passage"}, {"cluster_by": "metadata.n"})}
    assert len(keys) == 3
