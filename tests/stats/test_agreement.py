"""Agreement figures against independent references: sklearn's kappa, the krippendorff package, scipy's
tau-b and rho, a plain loop for Scott's pi; on random tables with missing values and on the LLMJudge runs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from replicate.stats.agreement import (
    Figure,
    agreement,
    all_figures,
    figure_values,
    krippendorff_alpha,
    pair_table,
)
from support.paths import LLMJUDGE, text_of

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")

TOL = 1e-12


def _same(got, ref):
    """None for undefined matches a NaN reference (or a reference that refused: None)."""
    if ref is None or (isinstance(ref, float) and math.isnan(ref)):
        return got is None
    return got is not None and abs(got - ref) <= TOL


def _kappa_ref(a, b, weights, domain):
    """sklearn's kappa over every whole number of the domain's range: sklearn weighs positions in ``labels``,
    and with no gap in them positions are the values (less a constant), as our weights are."""
    ok = ~np.isnan(a) & ~np.isnan(b)
    if not ok.any():
        return None
    labels = list(range(int(min(domain)), int(max(domain)) + 1))
    with _quiet():  # sklearn warns where kappa is undefined (and returns NaN)
        return float(metrics.cohen_kappa_score(a[ok], b[ok], labels=labels, weights=None if weights == "none" else weights))


def _quiet():
    return warnings.catch_warnings(action="ignore")


def _alpha_ref(data, level, domain):
    try:
        return float(krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level))
    except ValueError:  # the package refuses what is undefined (one value, no pairable unit)
        return None


def _pi_loop(a, b):
    """Scott's pi by hand: observed agreement and pooled label shares over the pairs."""
    pairs = [(x, y) for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y))]
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in pairs) / n
    counts: dict[float, int] = {}
    for x, y in pairs:
        counts[x] = counts.get(x, 0) + 1
        counts[y] = counts.get(y, 0) + 1
    p_e = sum((c / (2 * n)) ** 2 for c in counts.values())
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def _random_pair(rng, n, k=4, missing=0.1):
    a = rng.integers(0, k, n).astype(float)
    b = np.clip(a + rng.integers(-1, 2, n), 0, k - 1).astype(float)
    a[rng.random(n) < missing] = np.nan
    b[rng.random(n) < missing] = np.nan
    return a, b


def _check_pair(a, b, domain):
    """Every figure of two label vectors (NaN missing) against its reference."""
    ok = ~np.isnan(a) & ~np.isnan(b)
    for w in ("none", "linear", "quadratic"):
        got = agreement(a, b, weights=w, domain=domain)
        assert _same(got, _kappa_ref(a, b, w, domain)), (w, got)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        got = agreement(a, b, figure="krippendorff_alpha", level=level, domain=domain)
        assert _same(got, _alpha_ref(np.vstack([a, b]), level, domain)), (level, got)
    with _quiet():
        tau, rho = kendalltau(a[ok], b[ok]).statistic, spearmanr(a[ok], b[ok]).statistic
    assert _same(agreement(a, b, figure="kendall_tau"), float(tau) if ok.sum() > 1 else None)
    assert _same(agreement(a, b, figure="spearman"), float(rho) if ok.sum() > 1 else None)
    assert _same(agreement(a, b, figure="scott_pi"), _pi_loop(a, b))


@pytest.mark.parametrize("seed", range(24))
def test_random_pairs_with_missing_values_match_the_references(seed):
    rng = np.random.default_rng(seed)
    a, b = _random_pair(rng, int(rng.integers(3, 80)))
    _check_pair(a, b, [0, 1, 2, 3])


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_binarized_figures_equal_the_references_on_binarized_labels(seed, threshold):
    rng = np.random.default_rng(100 + seed)
    a, b = _random_pair(rng, int(rng.integers(5, 80)))
    ok = ~np.isnan(a) & ~np.isnan(b)
    ab, bb = (a[ok] >= threshold).astype(int), (b[ok] >= threshold).astype(int)
    with _quiet():
        for w in ("none", "linear", "quadratic"):
            ref = metrics.cohen_kappa_score(ab, bb, labels=[0, 1], weights=None if w == "none" else w)
            assert _same(agreement(a, b, weights=w, binarize=threshold, domain=[0, 1, 2, 3]), float(ref))
        tau = kendalltau(ab, bb).statistic
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ref = _alpha_ref(np.vstack([ab, bb]).astype(float), level, [0, 1])
        got = agreement(a, b, figure="krippendorff_alpha", level=level, binarize=threshold, domain=[0, 1, 2, 3])
        assert _same(got, ref), (level, got, ref)
    assert _same(agreement(a, b, figure="kendall_tau", binarize=threshold), float(tau))


@pytest.mark.parametrize("seed", range(20))
def test_alpha_of_many_coders_with_missing_values_matches_krippendorff(seed):
    rng = np.random.default_rng(1000 + seed)
    coders, units = int(rng.integers(2, 7)), int(rng.integers(3, 60))
    data = rng.integers(1, 6, (coders, units)).astype(float)
    data[rng.random((coders, units)) < 0.35] = np.nan
    domain = [0, 1, 2, 3, 4, 5, 6]  # 0 and 6 never used: the ordinal distance still spans the domain
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert _same(krippendorff_alpha(data, level=level, domain=domain), _alpha_ref(data, level, domain)), level
        assert _same(krippendorff_alpha(data, level=level), _alpha_ref(data, level, None)), level


def test_ordinal_alpha_depends_on_the_value_domain_only_through_used_values():
    # krippendorff's ordinal distance sums the counts between two values: unused values add 0
    rng = np.random.default_rng(7)
    data = rng.integers(0, 3, (3, 40)).astype(float)
    a = krippendorff_alpha(data, level="ordinal", domain=[0, 1, 2])
    assert a == pytest.approx(krippendorff_alpha(data, level="ordinal", domain=[0, 1, 2, 3, 4]), abs=TOL)
    assert _same(a, _alpha_ref(data, "ordinal", [0, 1, 2, 3, 4]))


def test_kappa_weights_are_over_label_values_not_positions():
    # grade 2 unused: sklearn without labels would put 3 next to 1; the weights keep the distance 2,
    # with or without a domain naming 2
    a = np.array([0, 1, 3, 3, 1, 0, 3], dtype=float)
    b = np.array([0, 3, 3, 1, 1, 0, 0], dtype=float)
    ref = metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="linear")
    assert _same(agreement(a, b, weights="linear", domain=[0, 1, 2, 3]), float(ref))
    assert _same(agreement(a, b, weights="linear"), float(ref))
    assert agreement(a, b, weights="linear", domain=[0, 1, 2, 3]) != pytest.approx(
        metrics.cohen_kappa_score(a, b, weights="linear"))


@pytest.mark.parametrize("seed", range(12))
def test_a_stray_grade_lies_at_its_value_in_every_weighted_figure(seed):
    """A grade 10 on a 0-3 scale: weighted kappa, interval and ratio alpha all put it 7 above 3 (sklearn over
    the whole range 0-10, krippendorff with the values), not one step above 3 (sklearn over the values seen)."""
    rng = np.random.default_rng(500 + seed)
    a, b = _random_pair(rng, int(rng.integers(20, 80)), missing=0.05)
    stray = rng.choice(np.flatnonzero(~np.isnan(a)), 2, replace=False)
    a[stray] = [10, 5]
    domain = [0, 1, 2, 3, 5, 10]
    ok = ~np.isnan(a) & ~np.isnan(b)
    whole = list(range(11))
    with _quiet():
        for w in ("linear", "quadratic"):
            got = agreement(a, b, weights=w, domain=domain)
            assert _same(got, float(metrics.cohen_kappa_score(a[ok], b[ok], labels=whole, weights=w))), w
            assert _same(agreement(a, b, weights=w, domain=whole), got)  # the same whatever domain is named
            by_rank = float(metrics.cohen_kappa_score(a[ok], b[ok], labels=domain, weights=w))
            assert got is not None and abs(got - by_rank) > 1e-6, w
    for level in ("interval", "ratio", "ordinal", "nominal"):
        got = agreement(a, b, figure="krippendorff_alpha", level=level, domain=domain)
        assert _same(got, _alpha_ref(np.vstack([a, b]), level, domain)), level


def test_policy_wrong_keeps_unparsed_in_nominal_figures_only():
    a = np.array([0, 1, 2, np.nan, 3, 2, np.nan, 1], dtype=float)
    gold = np.array([0, 1, 2, 2, 3, 1, 0, 1], dtype=float)
    ok = ~np.isnan(a)
    as_label = np.where(ok, a, 9)  # an unparsed output as a label of its own
    with _quiet():
        ref = metrics.cohen_kappa_score(as_label, gold, labels=[0, 1, 2, 3, 9])
    assert _same(agreement(a, gold, policy="wrong"), float(ref))
    assert _same(agreement(a, gold, figure="krippendorff_alpha", policy="wrong"),
                 _alpha_ref(np.vstack([as_label, gold]), "nominal", [0, 1, 2, 3, 9]))
    assert _same(agreement(a, gold, figure="scott_pi", policy="wrong"), _pi_loop(as_label, gold))
    # intersect: the unparsed items leave; the ordered figures use the parsed pairs under either policy
    assert _same(agreement(a, gold), _kappa_ref(a, gold, "none", [0, 1, 2, 3]))
    for kw in (dict(weights="linear"), dict(figure="krippendorff_alpha", level="ordinal"), dict(figure="spearman")):
        assert agreement(a, gold, policy="wrong", **kw) == agreement(a, gold, **kw)


@pytest.mark.parametrize("seed", range(5))
def test_nominal_alpha_of_two_coders_is_pi_plus_its_small_sample_term(seed):
    # alpha = 1 - (2N - 1)(1 - p_o) / (2N (1 - p_e)) = pi + (1 - pi) / (2N): the relation docs/concepts.md states
    rng = np.random.default_rng(50 + seed)
    a, b = _random_pair(rng, 60, missing=0)
    pi = agreement(a, b, figure="scott_pi")
    assert agreement(a, b, figure="krippendorff_alpha") == pytest.approx(pi + (1 - pi) / (2 * 60), abs=1e-12)
    assert pi <= agreement(a, b)  # pooled chance agreement is never smaller than kappa's


def test_undefined_figures_are_none():
    same = np.array([2.0, 2.0, 2.0])
    assert agreement(same, same) is None  # no chance-corrected agreement without variation
    assert agreement(same, same, figure="kendall_tau") is None
    assert agreement(np.array([np.nan]), np.array([1.0])) is None
    assert krippendorff_alpha([[1.0, np.nan], [np.nan, 2.0]]) is None  # no unit coded twice


def test_tables_give_the_figure_of_the_vectors_along_every_leading_axis():
    rng = np.random.default_rng(3)
    tables = []
    vectors = []
    for _ in range(6):
        a, b = _random_pair(rng, 50)
        vectors.append((a, b))
        codes = [np.where(np.isnan(x), 4, x).astype(int) for x in (a, b)]
        tables.append(pair_table(codes[0], codes[1], 5))
    stacked = np.stack(tables).reshape(2, 3, 5, 5)
    for fig in all_figures() + all_figures(2):
        got = figure_values(stacked, fig, [0, 1, 2, 3]).ravel()
        for k, (a, b) in enumerate(vectors):
            ref = agreement(a, b, figure=fig.name, weights=fig.weights, level=fig.level, binarize=fig.binarize,
                            domain=[0, 1, 2, 3])
            assert _same(None if np.isnan(got[k]) else float(got[k]), ref), fig


def test_figure_settings_are_checked_and_columns_round_trip():
    for fig in all_figures(3):
        assert Figure.from_column(fig.column, 3) == fig
    with pytest.raises(ValueError, match="weights must be one of none, linear, quadratic; got 'cubic'"):
        Figure("cohen_kappa", weights="cubic")
    with pytest.raises(ValueError, match="level applies to krippendorff_alpha only"):
        Figure("cohen_kappa", level="ordinal")
    with pytest.raises(ValueError, match="figure must be one of"):
        Figure("fleiss_kappa")
    with pytest.raises(ValueError, match="unknown agreement figure 'kappa'"):
        Figure.from_column("kappa")
    with pytest.raises(ValueError, match=r"labels \[7.0\] lie outside the domain"):
        agreement([1.0, 7.0], [1.0, 2.0], domain=[0, 1, 2, 3])


def _qrels(path):
    out = {}
    for line in text_of(path).splitlines():
        qid, _, docid, grade = line.split()
        out[(qid, docid)] = int(grade)
    return out


RUNS = ["h2oloo-zeroshot1", "h2oloo-zeroshot2", "willia-umbrela1", "Olz-gpt4o", "TREMA-direct",
        "NISTRetrieval-instruct0", "NISTRetrieval-instruct1", "NISTRetrieval-instruct2"]


@pytest.mark.parametrize("run", RUNS)
def test_llmjudge_runs_against_human_qrels_match_the_references(run):
    gold = _qrels(LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz")
    labels = _qrels(LLMJUDGE / f"{run}.txt.gz")
    keys = sorted(gold.keys() & labels.keys())
    assert len(keys) == 4423
    g = np.array([gold[k] for k in keys], dtype=float)
    x = np.array([labels[k] for k in keys], dtype=float)
    # h2oloo-zeroshot2 grades one item 10 (kept as read): the domain is every grade seen
    domain = sorted({*x.tolist(), *g.tolist()})
    assert domain == ([0, 1, 2, 3, 10] if run == "h2oloo-zeroshot2" else [0, 1, 2, 3])
    _check_pair(x, g, domain)
    for t in (1, 2, 3):
        xb, gb = (x >= t).astype(int), (g >= t).astype(int)
        ref = metrics.cohen_kappa_score(xb, gb)
        assert _same(agreement(x, g, binarize=t, domain=domain), float(ref))
        for level in ("nominal", "ordinal", "interval"):
            ref = _alpha_ref(np.vstack([xb, gb]).astype(float), level, [0, 1])
            assert _same(agreement(x, g, figure="krippendorff_alpha", level=level, binarize=t), ref)
