"""AlpacaEval's length-controlled win rate (replicate.pairwise.lc, replicate pairwise --length-controlled).

The fit is checked three ways: a closed form on a one-feature case, the optimality (KKT) conditions and an
independent optimiser on liblinear's own formulation (each row twice, y = +1 and -1, weighted p s and (1-p) s),
and AlpacaEval's own figures on seeded synthetic files (REFERENCE, recorded by
tools/alpacaeval_lc_reference.py with alpaca_eval 0.6.6 and scikit-learn 1.9.1; its liblinear stops at a
tolerance of 1e-4, so the two agree to about 0.01 points, not to the last digit).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.pairwise.lc import CS, Gamed, LengthControlError, fit_cv, fit_l1, folds, length_controlled
from tests.pairwise.lc_synthetic import write

#: AlpacaEval's get_length_controlled_winrate on tests/pairwise/lc_synthetic.py's files (percent, as it prints).
REFERENCE = {
    "weighted-120": (dict(n=120, seed=1, weighted=True), 61.58133527181185, 0.40611551110731214,
                     (-0.5988421662503476, -0.22527001926519968, 0.4644855335029199)),
    "discrete-60": (dict(n=60, seed=5, weighted=False), 50.0, 0.0, (0.0, 0.0, 0.0)),
    "discrete-805": (dict(n=805, seed=3, weighted=False), 59.63997806345925, 0.183401972073648,
                     (-0.7742818347671314, -0.21944105450054002, 0.4033793262496912)),
}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _liblinear_objective(w, x, p, s, c):
    """liblinear's L1-regularised logistic objective on the duplicated rows AlpacaEval gives it."""
    z = np.concatenate([x @ w, x @ w])
    y = np.concatenate([np.ones(len(p)), -np.ones(len(p))])
    weight = np.concatenate([p * s, (1 - p) * s])
    return np.abs(w).sum() + c * np.sum(weight * np.log1p(np.exp(-y * z)))


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.tanh(rng.normal(0, 1, n)), rng.normal(0, 1, n), (rng.random(n) < 0.7).astype(float)])
    p = expit(x @ np.array([-0.8, 0.5, 0.6]) + rng.normal(0, 0.5, n))
    s = np.where(x[:, 2] == 1, 1.0, 0.1)
    return x, p, s


@pytest.mark.parametrize("c", [0.05, 0.3, 10.0])
def test_one_constant_feature_has_a_closed_form(c):
    # |w| + c sum s_i CE(p_i, sigmoid(w)): sigmoid(w) = pbar - sign(w) / (c S), or w = 0 when |pbar - .5| c S <= 1
    p = np.array([0.9, 0.8, 1.0, 0.3, 0.7])
    s = np.array([1, 1, 1, 0.1, 0.1])
    pbar, total = (p * s).sum() / s.sum(), s.sum()
    expected = 0.0 if abs(pbar - 0.5) * c * total <= 1 else np.log((pbar - 1 / (c * total)) / (1 - pbar + 1 / (c * total)))
    (w,) = fit_l1(np.ones((5, 1)), p, s, c)
    assert w == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("c", [1e-3, 0.02, 0.3, 1e4])
def test_fit_is_the_optimum_of_liblinears_objective(c):
    x, p, s = _data()
    w = fit_l1(x, p, s, c)
    grad = c * x.T @ (s * (expit(x @ w) - p))  # the loss's gradient, on liblinear's scale
    on = w != 0
    assert np.allclose(grad[on] + np.sign(w[on]), 0, atol=1e-8)  # stationary where nonzero
    assert np.all(np.abs(grad[~on]) <= 1 + 1e-8)  # the subgradient holds zero where zero
    other = minimize(_liblinear_objective, np.zeros(3), args=(x, p, s, c), method="Powell",
                     options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100_000})
    assert _liblinear_objective(w, x, p, s, c) <= other.fun + 1e-9
    assert np.allclose(w, other.x, atol=1e-4)


def test_folds_are_group_kfolds_of_single_rows():
    # groups of equal size, last first, each to the lightest fold (first of equals): 6,5,4,3,2 -> 0..4, 1 -> 0, 0 -> 1
    assert folds(7).tolist() == [1, 0, 4, 3, 2, 1, 0]
    assert np.bincount(folds(23)).tolist() == [5, 5, 5, 4, 4]
    with pytest.raises(LengthControlError, match="fewer than"):
        folds(4)


def test_annotations_from_standard_input_are_refused(tmp_path):
    annotations, df_gamed = write(tmp_path, n=20, seed=2, weighted=True)
    r = CliRunner().invoke(app, ["pairwise", "-", "--length-controlled", str(df_gamed), "--replicates", "0"],
                           input=annotations.read_text())
    assert r.exit_code == 2 and "give files, not standard input" in r.output


def test_cross_validation_keeps_the_first_best_c_by_an_independent_count():
    x, p, s = _data(seed=3, n=40)
    fit = fit_cv(x, p, s)
    fold = (len(p) - 1 - np.arange(len(p))) % 5
    scores = []
    for c in CS:
        total = 0.0
        for f in range(5):
            tr, te = fold != f, fold == f
            w = minimize(_liblinear_objective, np.zeros(3), args=(x[tr], p[tr], s[tr], c), method="Powell",
                         options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100_000}).x
            q = np.clip(expit(x[te] @ w), 1e-15, 1 - 1e-15)
            total += np.mean(s[te] * (p[te] * np.log(q) + (1 - p[te]) * np.log(1 - q)))
        scores.append(total)
    assert np.allclose(fit.cv_scores, scores, atol=1e-6)
    assert fit.c == CS[int(np.argmax(fit.cv_scores))]


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_cli_matches_alpacaevals_own_figure(tmp_path, case):
    spec, lc, se, weights = REFERENCE[case]
    annotations, df_gamed = write(tmp_path, **spec)
    r = _run("pairwise", annotations, "--length-controlled", df_gamed, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)["length_controlled"]
    assert body["df_gamed_sha256"] == hashlib.sha256(df_gamed.read_bytes()).hexdigest()
    (m,) = body["models"]
    assert (m["model"], m["baseline"], m["annotations"], m["fitted"]) == ("m", "gpt4_1106_preview", spec["n"], spec["n"] - 3)
    assert 100 * m["length_controlled_win_rate"] == pytest.approx(lc, abs=0.01)
    assert 100 * m["lc_standard_error"] == pytest.approx(se, abs=0.001)
    assert list(m["weights"].values()) == pytest.approx(weights, abs=2e-4)
    text = _run("pairwise", annotations, "--length-controlled", df_gamed, "--replicates", "0").stdout
    assert f"{lc:.2f}%" in text and "length_controlled_v1" in text and "tolerance of 1e-4" in text


def test_prediction_is_the_mean_over_every_annotation_at_equal_lengths():
    # one instruction difficulty per annotation; annotations without a preference are predicted, not fitted
    rng = np.random.default_rng(7)
    n = 30
    gamed = Gamed(np.arange(n), rng.uniform(0.2, 0.8, n), rng.normal(0, 1, n), rng.normal(0, 1, n), np.zeros(n, bool))
    pref = 1 + rng.uniform(0, 1, n)
    pref[[0, 5]] = np.nan
    pref[3] = 0  # AlpacaEval's old draw: 1.5
    len_1, len_2 = rng.integers(100, 900, n), rng.integers(100, 900, n)
    res = length_controlled(pref, len_1, len_2, gamed, model="m", baseline="b")
    _, w_diff, w_model = res.fit.weights
    q = expit(w_diff * gamed.difficulty + w_model)
    assert res.win_rate == pytest.approx(q.mean(), rel=1e-12) and (res.annotations, res.fitted) == (30, 28)
    assert res.standard_error == pytest.approx(q.std(ddof=1) / np.sqrt(n), rel=1e-12)
    # the fit's rows: the gamed rows (weight 0.1, model feature 0), then the 28 with a preference (draw as 0.5)
    delta = (len_1 - len_2).astype(float)
    known = ~np.isnan(pref)
    x = np.vstack([np.column_stack([np.tanh(gamed.std_delta_len), gamed.difficulty, np.zeros(n)]),
                   np.column_stack([np.tanh(delta / delta.std(ddof=1)), gamed.difficulty, np.ones(n)])[known]])
    p = np.concatenate([gamed.preference, np.where(pref == 0, 0.5, pref - 1)[known]])
    s = np.concatenate([np.full(n, 0.1), np.ones(28)])
    other = minimize(_liblinear_objective, np.zeros(3), args=(x, p, s, res.fit.c), method="Powell",
                     options={"xtol": 1e-10, "ftol": 1e-14, "maxiter": 100_000})
    assert np.allclose(res.fit.weights, other.x, atol=1e-4)
    same = length_controlled(pref, len_1, len_2, gamed, model="b", baseline="b")  # its own baseline: 0.5, no fit
    assert (same.win_rate, same.fit) == (0.5, None)


def test_without_df_gamed_the_figure_is_not_computed_and_says_why(tmp_path):
    annotations, _ = write(tmp_path, n=20, seed=2, weighted=True)
    r = _run("pairwise", annotations, "--replicates", "0")
    assert r.exit_code == 0 and "Length-controlled win rate: not computed" in r.stdout and "--length-controlled" in r.stdout
    body = json.loads(_run("pairwise", annotations, "-f", "json", "--replicates", "0").stdout)
    assert body["length_controlled"]["computed"] is False and body["length_controlled"]["models"] == []


def test_bad_df_gamed_and_misfit_annotations_are_refused(tmp_path):
    annotations, df_gamed = write(tmp_path, n=20, seed=2, weighted=True)
    lines = df_gamed.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1], lines[2].replace(",False", ",maybe")]) + "\n")
    r = _run("pairwise", annotations, "--length-controlled", bad)
    assert r.exit_code == 2 and "bad.csv:3: not_gamed_baseline 'maybe'" in r.output
    bad.write_text(lines[0].replace("std_delta_len,", "") + "\n")
    assert "no column std_delta_len" in _run("pairwise", annotations, "--length-controlled", bad).output
    short = tmp_path / "short.csv"
    short.write_text("\n".join(lines[:11]) + "\n")
    r = _run("pairwise", annotations, "--length-controlled", short)
    assert r.exit_code == 2 and "20 annotations, but df_gamed holds 10 rows" in r.output
    rows = json.loads(annotations.read_text())
    rows[4]["generator_2"] = "other"
    two = tmp_path / "two.json"
    two.write_text(json.dumps(rows, indent=2))
    r = _run("pairwise", two, "--length-controlled", df_gamed)
    assert r.exit_code == 2 and "generator_2 'other'" in r.output and "two.json:" in r.output


def test_the_fallback_solver_reaches_the_same_optimum(monkeypatch):
    import replicate.pairwise.lc as lc

    x, p, s = _data(seed=4)
    expected = fit_l1(x, p, s, 0.3)
    monkeypatch.setattr(lc, "_newton_l1", lambda x, p, s, lam: np.zeros(x.shape[1]))  # not the optimum
    assert np.allclose(fit_l1(x, p, s, 0.3), expected, atol=1e-10)
