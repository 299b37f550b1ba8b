"""AlpacaEval 2.0's length-controlled win rate, as ``alpaca_eval/metrics/glm_winrate.py`` computes it (pure).

AlpacaEval (``get_length_controlled_winrate``, GLM ``length_controlled_v1``)
fits one logistic model per evaluated model and predicts each instruction's
preference as if the two outputs had the same length:

- Features of an annotation: ``tanh(std_delta_len)``, where ``std_delta_len``
  is len(output_1) - len(output_2) (characters; the baseline's length minus
  the model's) divided by the sample standard deviation (ddof 1) of that
  difference over the file's annotations (not centred); the instruction's
  ``instruction_difficulty``; and 1 for the evaluated model
  (``not_gamed_baseline``). No intercept.
- Target: preference - 1 (0 read as a draw, 1.5), a probability in 0-1; an
  annotation without a preference is left out of the fit, not of the mean.
- Regularisation towards the baseline: the rows of AlpacaEval's
  ``df_gamed.csv`` (annotations of two "gamed" baselines, a verbose and a
  concise prompt of the baseline model, with their own ``std_delta_len``,
  the difficulty and ``not_gamed_baseline`` false, so their model feature is
  0) join the fit with weight 0.2 / 2 each; the model's rows weigh 1.
- The fit is scikit-learn's ``LogisticRegressionCV`` (liblinear, L1 penalty,
  no intercept) on the soft targets: the objective at an inverse penalty C is
  ``||w||_1 + C * sum_i s_i * CE(p_i, sigmoid(x_i . w))``, CE the cross
  entropy of the target p_i, s_i the row's weight. C is chosen among
  ``logspace(-4, 4, 10)`` by 5-fold cross-validation over rows
  (``GroupKFold``), scored by the weighted cross entropy (predictions clipped
  to 1e-15), the fold scores summed, the first best C kept; the model is then
  refitted on every row at that C.
- Prediction: each annotation with the length term at 0,
  ``sigmoid(w_difficulty * difficulty + w_model)``; the length-controlled win
  rate is their mean over every annotation of the file (times 100 in
  AlpacaEval's print), its standard error their ``sem`` (ddof 1).

The instruction difficulty is not fitted here: AlpacaEval takes it from
``df_gamed.csv`` (the ``instruction_difficulty`` of each instruction index's
first row there), and looks annotation i (the i-th of the file, from 0) up
by position. Where AlpacaEval's own procedure is not determined by its code
alone: liblinear stops at a tolerance of 1e-4 where this fit is solved to its
optimum (figures agree to about 0.01 points, not to the last digit), and
``GroupKFold`` forms folds from a sort of equal group sizes: stable in
scikit-learn 1.9 (row g of G in fold (G - 1 - g) mod 5, used here), numpy's
default unstable argsort before, which gives the same order on numpy 2.4 (checked
up to 1,843 rows) but is not promised to on every numpy build (other folds could
choose another C among near-equal scores; the chosen C is printed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

#: AlpacaEval's GLM, its candidate inverse penalties (``LogisticRegressionCV``'s ``Cs=10``) and folds.
GLM = "length_controlled_v1"
CS = tuple(float(c) for c in np.logspace(-4, 4, 10))
N_SPLITS = 5
#: ``regularize_to_baseline_lambda``: the gamed baselines' rows weigh this, halved (two gamed baselines).
GAMED_WEIGHT = 0.2 / 2
#: AlpacaEval's ``logloss`` clips predictions to [CLIP, 1 - CLIP].
CLIP = 1e-15
#: AlpacaEval's names of the three weights (its patsy formula's columns).
WEIGHT_NAMES = ("np.tanh(std_delta_len)", "instruction_difficulty", "not_gamed_baseline.astype(float)")


class LengthControlError(ValueError):
    """Inputs AlpacaEval's length-controlled fit cannot take (the message says why)."""


@dataclass(frozen=True)
class Gamed:
    """The rows of AlpacaEval's ``df_gamed.csv``, in file order: the instruction index, the preference as a
    probability (NaN: none), the standardised length difference, the difficulty, and ``not_gamed_baseline``."""

    index: np.ndarray
    preference: np.ndarray
    std_delta_len: np.ndarray
    difficulty: np.ndarray
    not_gamed: np.ndarray

    def difficulty_of(self, n: int) -> np.ndarray:
        """The difficulty AlpacaEval gives annotations 0..n-1: row i of the file when that row is its index's
        first (AlpacaEval's ``drop_duplicates("index")`` keeps row labels); refused otherwise."""
        _, first = np.unique(self.index, return_index=True)
        is_first = np.zeros(len(self.index), dtype=bool)
        is_first[first] = True
        if n > len(self.index):
            raise LengthControlError(f"{n} annotations, but df_gamed holds {len(self.index)} rows: AlpacaEval looks an "
                                     "annotation's difficulty up by its position there")
        bad = np.flatnonzero(~is_first[:n] | (self.index[:n] != np.arange(n)))
        if len(bad):
            i = int(bad[0])
            raise LengthControlError(
                f"df_gamed's row {i} (instruction index {int(self.index[i])}) is not the first row of instruction "
                f"{i}: AlpacaEval looks annotation {i}'s difficulty up at that row, which does not give it")
        return self.difficulty[:n]


@dataclass(frozen=True)
class Fit:
    """A fitted GLM: the three weights, the chosen C and every candidate's summed cross-validation score."""

    weights: tuple[float, float, float]
    c: float
    cv_scores: tuple[float, ...]
    rows: int  # training rows (gamed and the model's, with a preference)


@dataclass(frozen=True)
class LengthControlled:
    """One model's length-controlled win rate against its baseline (a fraction; AlpacaEval prints it x 100)."""

    model: str
    baseline: str
    win_rate: float
    standard_error: float | None
    annotations: int  # annotations predicted (every one of the file)
    fitted: int  # of which with a preference (in the fit)
    gamed_rows: int  # df_gamed rows in the fit
    gamed_without_preference: int  # df_gamed rows left out of the fit (no preference)
    fit: Fit | None  # None when the model is its own baseline (0.5 by construction, as AlpacaEval)

    def to_json(self) -> dict:
        return {
            "model": self.model, "baseline": self.baseline, "glm": GLM, "length_controlled_win_rate": self.win_rate,
            "lc_standard_error": self.standard_error, "annotations": self.annotations, "fitted": self.fitted,
            "gamed_rows": self.gamed_rows, "gamed_rows_without_preference": self.gamed_without_preference,
            "weights": None if self.fit is None else dict(zip(WEIGHT_NAMES, self.fit.weights)),
            "C": None if self.fit is None else self.fit.c,
            "cv_scores": None if self.fit is None else dict(zip((f"{c:g}" for c in CS), self.fit.cv_scores)),
        }


# the L1-penalised soft-target logistic regression ------------------------------------------------------------
def _loss(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """sum_i s_i CE(p_i, sigmoid(x_i . w)), its gradient and its Hessian."""
    z = x @ w
    value = -float(np.sum(s * (p * log_expit(z) + (1 - p) * log_expit(-z))))
    q = expit(z)
    grad = x.T @ (s * (q - p))
    hess = (x * (s * q * (1 - q))[:, None]).T @ x
    return value, grad, hess


def _polish(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray, lam: float) -> np.ndarray:
    """Newton steps on the nonzero weights with their signs fixed (the smooth problem on that orthant)."""
    support = np.flatnonzero(w)
    for _ in range(50):
        if not len(support):
            break
        _, grad, hess = _loss(w, x, p, s)
        step = np.linalg.solve(hess[np.ix_(support, support)], grad[support] + lam * np.sign(w[support]))
        new = w.copy()
        new[support] -= step
        if np.any(np.sign(new[support]) != np.sign(w[support])):
            break  # a weight would cross zero: keep the last point
        w = new
        if np.max(np.abs(step)) <= 1e-14 * max(1.0, float(np.max(np.abs(w)))):
            break
    return w


def _optimal(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray, lam: float) -> bool:
    """The optimality conditions: the loss's gradient is -lam sign(w) where w is nonzero, within lam where zero."""
    _, grad, _ = _loss(w, x, p, s)
    on = w != 0
    scale = lam + float(np.max(np.abs(grad)))
    return bool(np.all(np.abs(grad[on] + lam * np.sign(w[on])) <= 1e-9 * scale)
                and np.all(np.abs(grad[~on]) <= lam + 1e-9 * scale))


def _newton_l1(x: np.ndarray, p: np.ndarray, s: np.ndarray, lam: float) -> np.ndarray:
    """Proximal Newton from w = 0: each step minimises the loss's quadratic model plus ``lam ||w||_1`` by
    coordinate descent (soft thresholding), then backtracks until the objective decreases."""
    k = x.shape[1]
    w = np.zeros(k)

    def objective(v: np.ndarray) -> float:
        return _loss(v, x, p, s)[0] + lam * float(np.abs(v).sum())

    current = objective(w)
    for _ in range(100):
        _, grad, hess = _loss(w, x, p, s)
        d = np.zeros(k)
        for _sweep in range(500):
            moved = 0.0
            for j in range(k):
                a = hess[j, j]
                if a <= 0:
                    continue
                b = grad[j] + hess[j] @ d - a * d[j]
                u = w[j] - b / a
                t = np.sign(u) * max(abs(u) - lam / a, 0.0) - w[j]
                moved = max(moved, abs(t - d[j]))
                d[j] = t
            if moved <= 1e-16:
                break
        step = 1.0
        while step > 1e-10:
            trial = w + step * d
            value = objective(trial)
            if value <= current:
                break
            step /= 2
        else:
            break
        w, previous, current = trial, current, value
        if np.max(np.abs(step * d)) <= 1e-15 * max(1.0, float(np.max(np.abs(w)))) or previous - current <= 0:
            break
    return w


def fit_l1(x: np.ndarray, p: np.ndarray, s: np.ndarray, c: float) -> np.ndarray:
    """The minimiser of ``||w||_1 + c * sum_i s_i CE(p_i, sigmoid(x_i . w))`` (liblinear's L1 objective with
    instance weights; no intercept): proximal Newton, then Newton steps on the nonzero weights with their
    signs fixed, to the optimum's precision, checked by the optimality conditions (when they fail: L-BFGS-B on
    w = u - v with u, v >= 0, polished the same way)."""
    k = x.shape[1]
    lam = 1.0 / c  # the same minimiser, the loss unscaled
    w = _polish(_newton_l1(x, p, s, lam), x, p, s, lam)
    if _optimal(w, x, p, s, lam):
        return w

    def fun(uv: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad, _ = _loss(uv[:k] - uv[k:], x, p, s)
        return value + lam * float(uv.sum()), np.concatenate([grad + lam, -grad + lam])

    res = minimize(fun, np.zeros(2 * k), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * k),
                   options={"ftol": 0.0, "gtol": 1e-12, "maxiter": 10_000})
    w = res.x[:k] - res.x[k:]
    w[np.abs(w) < 1e-12] = 0.0
    w = _polish(w, x, p, s, lam)
    if _optimal(w, x, p, s, lam):
        return w
    raise LengthControlError(f"the fit at C={c:g} did not reach its optimum")


def _cv_score(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray) -> float:
    """AlpacaEval's ``logloss_continuous`` score of a held-out fold: minus the mean weighted cross entropy."""
    q = np.clip(expit(x @ w), CLIP, 1 - CLIP)
    return float(np.mean(s * (p * np.log(q) + (1 - p) * np.log(1 - q))))


def folds(n: int, n_splits: int = N_SPLITS) -> np.ndarray:
    """Each row's fold under ``GroupKFold`` (scikit-learn 1.9's stable sort) with one group per row: groups of equal size
    taken from the last to the first, each to the lightest fold (the first of equals), so row g of n goes to
    fold (n - 1 - g) mod n_splits."""
    if n < n_splits:
        raise LengthControlError(f"{n} training rows, fewer than AlpacaEval's {n_splits} cross-validation folds")
    return (n - 1 - np.arange(n)) % n_splits


def fit_cv(x: np.ndarray, p: np.ndarray, s: np.ndarray) -> Fit:
    """AlpacaEval's ``fit_LogisticRegressionCV`` (soft targets, L1, no intercept, 5 group folds): every C in
    :data:`CS` fitted on four folds and scored on the fifth, the summed scores' first best C refitted on all."""
    fold = folds(len(p))
    scores = np.zeros(len(CS))
    for f in range(N_SPLITS):
        train, test = fold != f, fold == f
        for j, c in enumerate(CS):
            w = fit_l1(x[train], p[train], s[train], c)
            scores[j] += _cv_score(w, x[test], p[test], s[test])
    best = int(np.argmax(scores))
    w = fit_l1(x, p, s, CS[best])
    return Fit((float(w[0]), float(w[1]), float(w[2])), CS[best], tuple(float(v) for v in scores), len(p))


def length_controlled(
    preference: np.ndarray, len_1: np.ndarray, len_2: np.ndarray, gamed: Gamed, *, model: str, baseline: str,
) -> LengthControlled:
    """AlpacaEval's length-controlled win rate of one file's annotations, in file order: ``preference`` as
    recorded (1-2, 0 a draw, NaN none), ``len_1``/``len_2`` the characters of output_1 (the baseline's) and
    output_2 (the model's); ``gamed`` AlpacaEval's ``df_gamed.csv``."""
    pref = np.asarray(preference, dtype=np.float64)
    n = len(pref)
    pref = np.where(pref == 0, 1.5, pref) - 1
    known = ~np.isnan(pref)
    if np.any((pref[known] < 0) | (pref[known] > 1)):
        raise LengthControlError("a preference outside 1-2: AlpacaEval's fit would take it as a target outside 0-1")
    difficulty = gamed.difficulty_of(n)
    if model == baseline:  # AlpacaEval: 0.5 by construction, no fit
        return LengthControlled(model, baseline, 0.5, 0.0 if n > 1 else None, n, int(known.sum()), 0, 0, None)
    delta = np.asarray(len_1, dtype=np.float64) - np.asarray(len_2, dtype=np.float64)
    spread = float(np.std(delta, ddof=1)) if n > 1 else 0.0
    if not spread > 0:
        raise LengthControlError("the outputs' length differences do not vary: AlpacaEval's standardised length "
                                 "difference is undefined")
    g_known = ~np.isnan(gamed.preference)
    g_x = np.column_stack([np.tanh(gamed.std_delta_len), gamed.difficulty, gamed.not_gamed.astype(np.float64)])
    m_x = np.column_stack([np.tanh(delta / spread), difficulty, np.ones(n)])
    x = np.vstack([g_x[g_known], m_x[known]])
    p = np.concatenate([gamed.preference[g_known], pref[known]])
    s = np.concatenate([np.where(gamed.not_gamed, 1.0, GAMED_WEIGHT)[g_known], np.ones(int(known.sum()))])
    fit = fit_cv(x, p, s)
    q = expit(fit.weights[1] * difficulty + fit.weights[2])
    se = float(np.std(q, ddof=1) / np.sqrt(n)) if n > 1 else None
    return LengthControlled(model, baseline, float(q.mean()), se, n, int(known.sum()), int(g_known.sum()),
                            int((~g_known).sum()), fit)


@dataclass(frozen=True)
class LengthControl:
    """The length-controlled win rates of some annotation files (``results``), or why there are none
    (``reason``); ``gamed`` names the df_gamed file the fits used, ``gamed_sha256`` its content."""

    results: tuple[LengthControlled, ...] = ()
    reason: str | None = None
    gamed: str | None = None
    gamed_sha256: str | None = None

    def to_json(self) -> dict:
        return {"glm": GLM, "computed": self.reason is None, "reason": self.reason, "df_gamed": self.gamed,
                "df_gamed_sha256": self.gamed_sha256, "models": [r.to_json() for r in self.results]}
