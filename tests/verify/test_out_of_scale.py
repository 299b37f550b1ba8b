"""Figures printed after clipping stray grades to the scale: ``--out-of-scale clip`` reproduces them, and under the
default (keep) the alternatives name clipping. The data: a run that grades two pairs 5 on a 0-3 scale."""

from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.printed import Verdict
from replicate.verify.api import verify
from replicate.verify.note import render_note

metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")


def _data(tmp_path):
    """Gold and one run, 60 pairs over 6 queries (seeded); two of the run's grades are 5."""
    rng = np.random.default_rng(38)
    gold = rng.integers(0, 4, 60)
    run = np.clip(gold + rng.integers(-1, 2, 60), 0, 3)
    run[[7, 41]] = 5
    lines = [f"q{i // 10} 0 d{i} {{}}" for i in range(60)]
    (tmp_path / "gold.txt").write_text("".join(line.format(g) + "\n" for line, g in zip(lines, gold)))
    (tmp_path / "run.txt").write_text("".join(line.format(x) + "\n" for line, x in zip(lines, run)))
    return run.astype(float), gold.astype(float)


def _printed(x: float) -> str:
    return str(Decimal(repr(float(x))).quantize(Decimal("0.0001")))


def _claims(tmp_path, kappa: str, alpha: str):
    claims = [{"id": "kappa", "metric": "agreement.cohen_kappa", "run": "run", "value": kappa},
              {"id": "alpha", "metric": "agreement.krippendorff_alpha", "level": "ordinal", "run": "run",
               "value": alpha}]
    text = ('[runs]\n"run" = { files = ["run.txt"], reader = "trec-qrels@1" }\n'
            '[gold]\nfile = "gold.txt"\nreader = "trec-qrels@1"\n')
    text += "".join("\n[[claims]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in {**c, "unit": "ratio"}.items())
                    for c in claims)
    (tmp_path / "claims.toml").write_text(text)
    return tmp_path / "claims.toml"


def _printed_after_clipping(tmp_path):
    """The two figures as the challenge's analysis code prints them: grades clipped to 0-3, then sklearn's kappa
    and krippendorff's ordinal alpha (an independent reference); checked to differ from the kept reading."""
    run, gold = _data(tmp_path)
    clipped = np.clip(run, 0, 3)
    kappa = metrics.cohen_kappa_score(clipped, gold)
    alpha = krippendorff.alpha(np.vstack([clipped, gold]), level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    kept_kappa = metrics.cohen_kappa_score(run, gold)
    kept_alpha = krippendorff.alpha(np.vstack([run, gold]), level_of_measurement="ordinal", value_domain=[0, 1, 2, 3, 5])
    assert _printed(kappa) != _printed(kept_kappa) and _printed(alpha) != _printed(kept_alpha)
    return _claims(tmp_path, _printed(kappa), _printed(alpha)), (kappa, alpha)


def test_clipped_figures_match_under_clip(tmp_path):
    path, (kappa, alpha) = _printed_after_clipping(tmp_path)
    v = verify(path, root=tmp_path, date="2026-01-01", out_of_scale="clip")
    assert [r.verdict(r.primary) for r in v.runs.results] == [Verdict.match, Verdict.match]
    assert [float(r.computed[r.primary].value) for r in v.runs.results] == pytest.approx([kappa, alpha], abs=1e-12)
    out = v.to_json()["out_of_scale"]
    assert out == {"policy": "clip", "runs": [{"run": "run", "scale": {"min": 0, "max": 3}, "outside": 2,
                                                "values": {"5": 2}, "policy": "clip"}]}
    note = render_note(v)
    assert "| Out-of-scale labels | clip (`--out-of-scale clip`); run: 2 labels outside the scale 0-3 (5 x2), " \
           "clipped to 0-3" in note
    assert "--out-of-scale clip" in note.split("## Reproduce")[1]


def test_under_the_default_the_alternatives_name_clipping(tmp_path):
    path, (kappa, alpha) = _printed_after_clipping(tmp_path)
    v = verify(path, root=tmp_path, date="2026-01-01")
    for r, value in zip(v.runs.results, (kappa, alpha)):
        assert r.verdict(r.primary) is Verdict.mismatch  # an explanation is not a match
        first = r.to_json()["alternatives"][0]  # the claim's own figure, clipped: one change, listed first
        assert first["metric"] == r.claim.metric and first["settings"]["out_of_scale"] == "clip"
        assert first["value"] == pytest.approx(value, abs=1e-12)
    note = " ".join(render_note(v).split())
    assert "reproduced by Cohen's kappa, labels outside the scale clipped to it (--out-of-scale clip)" in note
    assert ("| Out-of-scale labels | kept as read; run: 2 labels outside the scale 0-3 (5 x2), kept as a category "
            "of its own |") in note
    assert "--out-of-scale" not in render_note(v).split("## Reproduce")[1]  # the default is not written


def test_drop_leaves_the_items_out_of_that_run(tmp_path):
    run, gold = _data(tmp_path)
    path = _claims(tmp_path, "0.5", "0.5")
    v = verify(path, root=tmp_path, date="2026-01-01", out_of_scale="drop")
    ok = run <= 3
    assert float(v.runs.results[0].computed[v.runs.results[0].primary].value) == pytest.approx(
        metrics.cohen_kappa_score(run[ok], gold[ok]), abs=1e-12)


def test_the_commands_say_the_policy(tmp_path):
    _data(tmp_path)
    args = ["agreement", str(tmp_path / "run.txt"), "--reader", "trec-qrels@1", "--gold", str(tmp_path / "gold.txt"),
            "--replicates", "0"]
    kept = CliRunner().invoke(app, args)
    assert kept.exit_code == 0, kept.output
    assert ("out-of-scale labels: run.txt: 2 labels outside the scale 0-3 (5 x2), kept as a category of its own "
            "(--out-of-scale drop or clip to change)") in kept.stderr
    assert "out-of-scale labels: keep" not in kept.stdout  # the default heads nothing
    clipped = CliRunner().invoke(app, [*args, "--out-of-scale", "clip"])
    assert clipped.stdout.startswith("out-of-scale labels: clip (labels outside the run's scale are clipped")
    assert "  run.txt: 2 labels outside the scale 0-3 (5 x2), clipped to 0-3\n" in clipped.stdout
    dropped = CliRunner().invoke(app, [*args, "--out-of-scale", "drop", "-f", "json"])
    body = json.loads(dropped.stdout)
    assert body["out_of_scale"]["policy"] == "drop" and body["out_of_scale"]["runs"][0]["outside"] == 2
    assert body["rows"][0]["items"] == 58  # the two items left the run
    bad = CliRunner().invoke(app, [*args, "--out-of-scale", "round"])
    assert bad.exit_code == 2


def test_the_llmjudge_notebook_figure_is_the_clipped_one(tmp_path):
    """The challenge's analysis notebook (llm4eval/LLMJudge-benchmark, codes/0-corr-analysis.ipynb) prints
    h2oloo-zeroshot2's ordinal alpha as 0.389818, six decimals, computed after clipping grades to 0-3: it matches
    under --out-of-scale clip and, under the default, is named as the clipped figure (the committed release)."""
    from support.paths import LLMJUDGE

    text = ('[runs]\n"h2oloo-zeroshot2" = { files = ["h2oloo-zeroshot2.txt.gz"], reader = "trec-qrels@1" }\n'
            '[gold]\nfile = "llmjudge_test_qrel_idx.txt.gz"\nreader = "trec-qrels@1"\n\n[[claims]]\nid = "nb"\n'
            'metric = "agreement.krippendorff_alpha"\nlevel = "ordinal"\nrun = "h2oloo-zeroshot2"\n'
            'value = "0.389818"\nunit = "ratio"\n')
    (tmp_path / "claims.toml").write_text(text)
    clipped = verify(tmp_path / "claims.toml", root=LLMJUDGE, date="2026-01-01", out_of_scale="clip")
    assert clipped.runs.results[0].verdict(clipped.runs.results[0].primary) is Verdict.match
    kept = verify(tmp_path / "claims.toml", root=LLMJUDGE, date="2026-01-01")
    (r,) = kept.runs.results
    assert r.verdict(r.primary) is Verdict.mismatch
    assert r.to_json()["alternatives"][0]["settings"] == {"level": "ordinal", "binarize": None, "out_of_scale": "clip"}
