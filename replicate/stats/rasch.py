"""Conditional maximum likelihood of the difficulty-aware baseline, many edges and replicates at once (pure).

One edge (old run a, new run b) and ``m`` other runs, per item: whether a is
right (x), whether b is right (y), and how many other runs are right (k). The
null is the Rasch model: given the item (its difficulty ``d``) the runs are
right independently, run j with probability ``expit(a_j - d)``. Then, given
the item's total ``t = x + y + k``, which pattern it shows no longer depends
on ``d``::

    P(x, y, k | t) = w^x * g_k / G_t,    G_t = g_t + (1 + w) g_(t-1) + w g_(t-2)

with ``w = exp(a_a - a_b)`` and ``g_k`` the weight of k of the other runs
being right (an elementary symmetric function of their abilities). Here the
``g_k`` are free parameters, so the other runs need not be Rasch judges
among themselves: only their count enters, as in the log-linear model
``log mu(x, y, k) = x alpha + y beta + lambda_k + nu_(x+y+k)``. The fit
maximises the likelihood given every item's total, so no item's difficulty
is estimated (the noisy per-item estimate with its slope fixed at 1 is what
biased the smoothed-share baseline); it reproduces each side's right count
and the items per k. The expected regression count given the totals is
``sum_t n_t w g_(t-1) / G_t`` (``n_t`` items with total t), and the expected
progression count (the reverse edge's regressions) ``sum_t n_t g_(t-1) / G_t``.

What it reads, per row: ``h`` (items by k, (r, K), K = m + 1), ``n`` (items
by total, (r, K + 2)) and ``O`` (items old right). Parameters ``(alpha,
lambda_0..lambda_m)`` (``beta`` is 0: only ``a_a - a_b`` is identified; one
lambda, of the fullest bin, is pinned at 0; an empty bin has ``g = 0``).
Newton's method on all rows at once (:mod:`replicate.stats.rasch_steps`):
the information matrix is an arrow (alpha) on a five-band matrix (lambda),
solved by a Cholesky factor (:mod:`replicate.stats.band_cholesky`) whose loop runs
over the K bins, every line vectorised over rows. Steps that lower the
likelihood (it is concave) are halved; a step that repeats the previous one
(a walk towards a maximum at infinity) is doubled while the likelihood rises.
Near the maximum a row reuses its last factor (chord steps: the scores only). Bootstrap replicates start from the
full sample's fit moved by one chord step with its information
(:func:`predicted`). Only the path changes: every row stops at the same
tolerance, at the one maximum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from replicate.stats import rasch_steps as steps
from replicate.stats.band_cholesky import Factor, factor_rows
from replicate.stats.rasch_steps import Strata

TOLERANCE = 1e-12  # every score within TOLERANCE * max(items, 1)
MAX_STEPS = 100
_MAX_MOVE = 8.0  # a Newton step moves no parameter by more than this
_CHECKED_STEP = 0.5  # a step moving a parameter further is checked against the likelihood
_SMALL_STEP = 1e-6  # a step moving no parameter further ends the row's fit
_BOUND = 300.0  # parameters kept within +-_BOUND (a side always or never right drifts there; sparse end bins
# of many runs can have their maximum over 60 apart, and exp(300) keeps every product of the steps finite)
_PREDICTED_MOVE = 2.0  # a predicted start moving a parameter further is not used
_CHORD_STEP = 1e-3  # a row whose Newton step moved no parameter further takes chord steps next
_MAX_WALK = 64.0  # a step that repeats the previous one is extended at most this many times (_extended)


def strata(cells: np.ndarray) -> Strata:
    """:class:`Strata` from cell counts ``cells[..., 2 * x + y, k]`` (old right x, new right y), rows flattened."""
    c = np.asarray(cells, dtype=np.float64)
    c = c.reshape(-1, 4, c.shape[-1]).transpose(1, 2, 0)  # (4, K, r)
    _, K, r = c.shape
    n = np.zeros((K + 2, r))
    n[0:K] += c[0]
    n[1 : K + 1] += c[1] + c[2]
    n[2 : K + 2] += c[3]
    return Strata(c.sum(axis=0), n, c[2:].sum(axis=(0, 1)), (c[1] + c[3]).sum(axis=0), c[2].sum(axis=0))


def columns(cells: np.ndarray) -> np.ndarray:
    """The counts the fit reads, side by side, from cell counts ``cells[..., 2 * x + y, k]`` (..., 4, K), in
    their dtype: (..., 2K + 5), ``h``, ``n``, old, new, regressed (:class:`Strata`). They are linear in the
    cells, so a weighted sum of rows of these is that of the weighted sum of the cells."""
    c = np.asarray(cells)
    K = c.shape[-1]
    c0, c1, c2, c3 = (c[..., j, :] for j in range(4))
    out = np.zeros(c.shape[:-2] + (2 * K + 5,), dtype=c.dtype)
    np.add(c0, c1, out=out[..., :K])
    out[..., :K] += c2
    out[..., :K] += c3
    n = out[..., K : 2 * K + 2]
    n[..., 0:K] += c0
    n[..., 1 : K + 1] += c1
    n[..., 1 : K + 1] += c2
    n[..., 2 : K + 2] += c3
    out[..., 2 * K + 4] = c2.sum(axis=-1)
    out[..., 2 * K + 2] = out[..., 2 * K + 4] + c3.sum(axis=-1)
    out[..., 2 * K + 3] = c1.sum(axis=-1) + c3.sum(axis=-1)
    return out


def from_columns(x: np.ndarray) -> Strata:
    """:class:`Strata` of rows of :func:`columns` (r, 2K + 5)."""
    K = (x.shape[1] - 5) // 2
    t = np.ascontiguousarray(np.asarray(x, dtype=np.float64).T)
    return Strata(t[:K], t[K : 2 * K + 2], t[2 * K + 2], t[2 * K + 3], t[2 * K + 4])


def start(s: Strata) -> np.ndarray:
    """A first guess ``(alpha, lambda)`` (r, K + 1): the sides' logit difference and the log share of each bin."""
    n = np.maximum(s.items, 1)
    po, pn = np.clip(s.old / n, 0.01, 0.99), np.clip(s.new / n, 0.01, 0.99)
    lam = np.log(np.maximum(s.h, 0.5) / n)
    return np.concatenate([(np.log(po / (1 - po)) - np.log(pn / (1 - pn)))[None], lam]).T


def _pinned(h: np.ndarray) -> np.ndarray:
    """Bins whose lambda does not move (K, r): the empty ones (g = 0) and, per row, the fullest (lambda = 0)."""
    fixed = h <= 0
    fixed[np.argmax(h, axis=0), np.arange(h.shape[1])] = True
    return fixed


def informative(s: Strata) -> Strata:
    """``s`` without the items of its certain strata: those in which only one pattern has a live bin.

    A stratum whose items can show one pattern only (t = 0: every run wrong; t = K + 1: every run right;
    or any t whose other patterns' bins hold no items) holds items that are certain given their total: they
    add 0 to the conditional log-likelihood and to every score and information, and the maximum is the
    same without them. Taking them out can leave a bin with no items, whose maximum is then at g = 0 (its
    items only ever sat in certain strata): that bin is not live, which can make a neighbouring stratum
    certain in turn, so the strata are taken out until none is left (at 44 runs the sparse ends of the
    bins cascade like this on some edges). A fit of ``s`` itself would only creep towards such a maximum,
    a bounded step at a time, and never meet its tolerance. A certain stratum has no regression or
    progression (its pattern is 00 or 11), so :func:`expected` reads these counts too.
    """
    K = s.h.shape[0]
    if K < 1:
        return s
    h, n = s.h.copy(), s.n.copy()
    both = np.zeros_like(s.old)
    # live bins padded by two dead ones on each side: stratum t's patterns are in bins t (00),
    # t - 1 (10, 01) and t - 2 (11), rows t + 2, t + 1 and t of ``on``
    on = np.zeros((K + 4,) + h.shape[1:], dtype=bool)
    while True:
        on[2 : K + 2] = h > 0
        lone00, lone11 = on[2 : K + 4] & ~on[0 : K + 2], on[0 : K + 2] & ~on[2 : K + 4]
        certain = (n > 0) & ~on[1 : K + 3] & (lone00 | lone11)
        if not certain.any():
            break
        gone = np.where(certain, n, 0.0)
        h -= np.where(lone00, gone, 0.0)[0:K]
        h -= np.where(lone11, gone, 0.0)[2 : K + 2]
        both += np.where(lone11, gone, 0.0).sum(axis=0)
        n -= gone
    return Strata(h, n, s.old - both, s.new - both, s.regressed)


def _weights(th: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per stratum t = 0..K+1 (rows of ``(K + 2, r)``) the four patterns' weights, (00, k=t), (10, k=t-1),
    (01, k=t-1), (11, k=t-2), and their sum G_t; ``th`` is bins first, (K + 1, r)."""
    K1, r = th.shape
    K = K1 - 1
    w = np.exp(th[0])
    gp = np.zeros((K + 4, r))
    np.exp(th[1:], out=gp[2 : K + 2])
    gp[2 : K + 2][~live] = 0.0
    a, b, c = gp[2 : K + 4], gp[1 : K + 3], gp[0 : K + 2]
    ten, eleven = b * w, c * w
    return a, ten, b, eleven, a + ten + b + eleven


def loglik(th: np.ndarray, s: Strata, live: np.ndarray) -> np.ndarray:
    """The conditional log-likelihood of each row (up to a constant); ``th`` bins first."""
    *_, G = _weights(th, live)
    logG = np.log(np.where(s.n > 0, G, 1.0))
    return s.old * th[0] + (s.h * np.where(live, th[1:], 0.0)).sum(axis=0) - (s.n * logG).sum(axis=0)


class Fitting(NamedTuple):
    """Rows of a fit still stepping, set aside (:func:`fit_paused`) to be stepped on with others
    (:func:`resume`): their counts (the parameters ``params`` they step: alpha and the bins used), parameters
    ``th``, and per row its previous step, last Newton move, log-likelihood, tolerance, steps taken and
    factor; ``todo`` numbers them as the paused fit's rows."""

    sub: steps.Rows
    th: np.ndarray
    todo: np.ndarray
    params: np.ndarray
    since: np.ndarray
    last: np.ndarray
    ll: np.ndarray
    limit: np.ndarray
    taken: np.ndarray
    f: Factor


def fit(
    s: Strata, theta: np.ndarray | None = None, *, tolerance: float = TOLERANCE, max_steps: int = MAX_STEPS,
    work: steps.Work | None = None, told: Strata | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's maximum-likelihood ``(alpha, lambda)`` (r, K + 1) and whether it converged (r,).

    ``theta`` is the start (:func:`start` when None); lambda is shifted so that
    the fullest bin's is 0. A row is done when every score is within
    ``tolerance`` of its items, or when its Newton step moved no parameter by
    more than :data:`_SMALL_STEP` (Newton converges quadratically: its scores
    are then far inside the tolerance). A row whose Newton step moved no
    parameter by more than :data:`_CHORD_STEP` takes its next steps with that
    step's factor of the information (chord steps: no new information; each
    shrinks the error by a factor about that Newton step's move, so the row is
    done when its move times that one is at most ``_SMALL_STEP ** 2``). A step
    that moves a parameter by more than :data:`_CHECKED_STEP` is halved while
    it lowers the likelihood. Rows whose sides are always or never right drift
    to the bounds; their expected counts are set in :func:`expected` outright.
    ``max_steps`` bounds the steps (a row stopped by it is not done). ``work``
    holds the buffers of the steps (pass one to fits of the same size in turn:
    fresh memory costs page faults). ``told``: :func:`informative` of ``s`` when the caller has it.
    """
    theta, done, _ = fit_paused(s, theta, tolerance=tolerance, max_steps=max_steps, work=work, told=told)
    return theta, done


def fit_paused(
    s: Strata, theta: np.ndarray | None = None, *, tolerance: float = TOLERANCE, max_steps: int = MAX_STEPS,
    work: steps.Work | None = None, told: Strata | None = None, pause_below: int = 0,
) -> tuple[np.ndarray, np.ndarray, Fitting | None]:
    """:func:`fit`, set aside once fewer than ``pause_below`` rows are still stepping: (each row's parameters
    (r, K + 1), whether it converged, and the rows still stepping or None). The rows set aside have their
    start in the parameters returned; :func:`resume` steps them on, each exactly as :func:`fit` would.

    Every row steps on its own (each array operation is per row, every sum over the bins made in the same
    order), so a row's steps do not depend on the rows beside it; few rows a step cost mostly the steps' own
    overhead, which rows set aside from many fits and stepped together share."""
    told = informative(s) if told is None else told
    live = told.h > 0
    fixed = _pinned(told.h)
    r = s.h.shape[1]
    theta = (start(s) if theta is None else np.asarray(theta, dtype=np.float64)).T.copy()  # bins first
    theta[1:] -= theta[1 + np.argmax(told.h, axis=0), np.arange(r)]
    theta[1:][~live] = 0.0
    theta[1:][~live & (s.h > 0)] = -_BOUND  # items only in certain strata: the maximum is at g = 0
    done = np.zeros(r, dtype=bool)
    # the steps leave out the bins that are empty in every row at either end (their strata hold no
    # items, nothing couples them to the others, their lambda stays 0): the same steps on fewer bins
    used = np.flatnonzero(live.any(axis=1))
    k0, k1 = (int(used[0]), int(used[-1]) + 1) if len(used) else (0, live.shape[0])
    params = np.r_[0, 1 + k0 : 1 + k1]
    trimmed = Strata(told.h[k0:k1], told.n[k0 : k1 + 2], told.old, told.new, told.regressed)
    out = theta[params]
    paused = _run(
        steps.rows_of(trimmed, live[k0:k1], fixed[k0:k1]), out.copy(), np.arange(r), params,
        tolerance * np.maximum(s.items, 1.0), None, out, done, max_steps, steps.Work() if work is None else work,
        pause_below,
    )
    theta[params] = out
    return theta.T, done, paused


def resume(
    paused: list[Fitting], *, max_steps: int = MAX_STEPS, work: steps.Work | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of fits set aside by :func:`fit_paused` stepped on together to the end: per fit, its rows'
    parameters (those of its ``params``, (len(params), rows)) and whether each converged, in its ``todo``
    order. Fits that step other parameters (bins) are stepped on apart."""
    result: list[tuple[np.ndarray, np.ndarray]] = [(np.empty((0, 0)), np.empty(0, dtype=bool))] * len(paused)
    ws = steps.Work() if work is None else work
    groups: dict[bytes, list[int]] = {}
    for i, p in enumerate(paused):
        groups.setdefault(p.params.tobytes(), []).append(i)
    for members in groups.values():
        ps = [paused[i] for i in members]
        sub = steps.Rows(
            Strata(*(np.concatenate([getattr(p.sub.s, a) for p in ps], axis=-1) for a in Strata.__dataclass_fields__)),
            *(np.concatenate([p.sub[j] for p in ps], axis=-1) for j in range(1, len(steps.Rows._fields))),
        )
        th = np.concatenate([p.th for p in ps], axis=1)
        f = Factor(*(np.concatenate([p.f[j] for p in ps], axis=-1) for j in range(len(Factor._fields))))
        n = th.shape[1]
        out, done = th.copy(), np.zeros(n, dtype=bool)
        state = [np.concatenate([getattr(p, a) for p in ps], axis=-1) for a in ("since", "last", "ll", "taken")]
        limit = np.concatenate([p.limit for p in ps])
        _run(sub, th, np.arange(n), ps[0].params, limit, f, out, done, max_steps, ws, 0, state)
        at = 0
        for i, p in zip(members, ps):
            m = len(p.todo)
            result[i] = out[:, at : at + m], done[at : at + m]
            at += m
    return result


def _run(
    sub: steps.Rows, th: np.ndarray, todo: np.ndarray, params: np.ndarray, limit: np.ndarray, f: Factor | None,
    out: np.ndarray, done: np.ndarray, max_steps: int, ws: steps.Work, pause_below: int,
    state: list[np.ndarray] | None = None,
) -> Fitting | None:
    """Step the rows ``todo`` of ``out`` (their counts ``sub``, parameters ``th``) until each is done or has
    taken ``max_steps`` steps, writing their parameters into ``out`` and ``done``; or, once fewer than
    ``pause_below`` are still stepping, set those aside (returned). ``limit`` is per row of ``todo``;
    ``state``: (since, last, ll, steps taken) of rows set aside before, else a fresh start."""
    r = len(todo)
    if state is None:
        since = np.full(r, np.inf)  # per row, its last Newton step's move (its factor is from that step's start)
        last = np.zeros_like(th)  # each row's previous step (before any extension)
        ll = np.full(r, np.nan)  # each row's log-likelihood at th where a step computed it (else NaN)
        taken = np.zeros(r, dtype=np.int64)
    else:
        since, last, ll, taken = state
    alive = np.ones(r, dtype=bool)  # rows of the subset still fitting (the others step 0 until dropped)
    while True:
        chord = (since <= _CHORD_STEP) | ~alive
        step, biggest, f = _step(th, sub, f, chord, ws)
        moved = np.abs(step, out=ws.get("abs", *step.shape)).max(axis=0)
        step *= np.minimum(1.0, _MAX_MOVE / np.maximum(moved, 1e-300))
        met = biggest <= limit
        step[:, met | ~alive] = 0.0
        check = np.flatnonzero((moved > _CHECKED_STEP) & ~met & alive)
        value = np.full(len(moved), np.nan)  # the log-likelihood after the step, where computed
        if len(check):
            step[:, check], value[check] = _halved(
                th[:, check], step[:, check], sub.s.rows(check), sub.live[:, check], ll[check]
            )
        walk = np.flatnonzero(_walking(step, last) & ~met & alive)
        last[...] = step
        if len(walk):
            step[:, walk], value[walk] = _extended(
                th[:, walk], step[:, walk], sub.s.rows(walk), sub.live[:, walk], value[walk]
            )
        th += step
        np.clip(th, -_BOUND, _BOUND, out=th)
        ll = np.where(met | ~alive, ll, value)  # the rows that moved: the value after their step, or unknown
        finished = alive & (met | np.where(chord, moved * since <= _SMALL_STEP**2, moved <= _SMALL_STEP))
        since = np.where(chord, since, moved)
        done[todo[finished]] = True
        alive &= ~finished
        taken += 1
        alive &= taken < max_steps  # a row stopped by the bound is not done
        if not alive.any():
            break
        n_alive = np.count_nonzero(alive)
        if n_alive < pause_below or n_alive < 0.75 * len(todo):  # drop the finished rows (a copy of every array)
            out[:, todo] = th
            keep = np.flatnonzero(alive)
            todo, th, sub, since, f = todo[keep], th[:, keep], sub.rows(keep), since[keep], factor_rows(f, keep)
            alive, last, ll, limit, taken = alive[keep], last[:, keep], ll[keep], limit[keep], taken[keep]
            if n_alive < pause_below:
                return Fitting(sub, th, todo, params, since, last, ll, limit, taken, f)
    out[:, todo] = th
    return None


def _step(
    th: np.ndarray, rows: steps.Rows, f: Factor | None, chord: np.ndarray, ws: steps.Work
) -> tuple[np.ndarray, np.ndarray, Factor]:
    """Chord steps where ``chord``, Newton steps elsewhere: (steps, largest scores, each row's factor).

    The larger group's steps are taken on every row and the smaller group's (copied out) replace them: no
    large copies, and each row's step is what it would be alone.
    """
    if f is None or not chord.any():
        return steps.newton_step(th, rows, ws)
    if chord.all():
        return (*steps.chord_step(th, rows, f, ws), f)
    c, n = np.flatnonzero(chord), np.flatnonzero(~chord)
    if len(c) >= len(n):
        step, biggest = steps.chord_step(th, rows, f, ws)
        step[:, n], biggest[n], fn = steps.newton_step(th[:, n], rows.rows(n), ws)
        for old, new in zip(f, fn):
            old[..., n] = new
        return step, biggest, f
    step, biggest, fn = steps.newton_step(th, rows, ws)
    keep = factor_rows(f, c)
    step[:, c], biggest[c] = steps.chord_step(th[:, c], rows.rows(c), keep, ws)
    for new, old in zip(fn, keep):
        new[..., c] = old
    return step, biggest, fn


def information(theta: np.ndarray, s: Strata) -> np.ndarray:
    """Each row's information matrix (r, K + 1, K + 1) at ``theta`` (rows first), alpha first; a pinned bin's
    (:func:`_pinned`, of the counts outside the certain strata, :func:`informative`) row and column are the
    identity's."""
    th = np.ascontiguousarray(np.asarray(theta, dtype=np.float64).T)
    r, K = th.shape[1], th.shape[0] - 1
    ws = steps.Work()
    s = informative(s)
    rows = steps.rows_of(s, s.h > 0, _pinned(s.h))
    iaa, ial, diag, b1, b2 = steps.information(steps.scores(th, rows, ws)[2], ws)
    out = np.zeros((r, K + 1, K + 1))
    out[:, 0, 0] = iaa
    out[:, 0, 1:] = out[:, 1:, 0] = ial.T
    k = np.arange(K)
    out[:, 1 + k, 1 + k] = diag.T
    out[:, 1 + k[:-1], 2 + k[:-1]] = out[:, 2 + k[:-1], 1 + k[:-1]] = b1.T
    out[:, 1 + k[:-2], 3 + k[:-2]] = out[:, 3 + k[:-2], 1 + k[:-2]] = b2.T
    held = np.concatenate([np.zeros((1, r), dtype=bool), _pinned(s.h)]).T  # (r, K + 1)
    out[held[:, :, None] | held[:, None, :]] = 0.0
    out[:, np.arange(K + 1), np.arange(K + 1)] += np.where(held, 1.0, steps.RIDGE * np.maximum(s.items, 1.0)[:, None])
    return out


def inverse_information(theta: np.ndarray, s: Strata) -> np.ndarray:
    """The inverse of each row's :func:`information` (r, K + 1, K + 1); zeros (no predicted move) for a row
    whose information has no finite inverse."""
    info = information(theta, s)
    try:
        out = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        out = np.zeros_like(info)
        for j, m in enumerate(info):
            try:
                out[j] = np.linalg.inv(m)
            except np.linalg.LinAlgError:
                pass
    out[~np.isfinite(out).all(axis=(1, 2))] = 0.0
    return out


def predicted(
    s: Strata, theta: np.ndarray, inverse: np.ndarray, h: np.ndarray, *, told: Strata | None = None
) -> np.ndarray:
    """Starts (r, K + 1) for rows that are B replicates of P edges (edge fastest): each edge's fit ``theta``
    (P, K + 1) moved by one chord step, the edge's inverse information ``inverse`` (P, K + 1, K + 1) applied
    to the row's scores. Both are from the full sample, whose items by bin outside its certain strata
    (:func:`informative`) are ``h`` (K, P). A row keeps
    ``theta`` where its empty bins are not the full sample's or the step moves a parameter by more than
    :data:`_PREDICTED_MOVE`. (Near the full sample's fit, this step is nearly the row's first Newton step,
    for a fraction of its cost: no information of the row's own and no banded solve.)
    """
    P, K1 = theta.shape
    r = s.h.shape[1]
    B = r // P
    th = np.tile(np.asarray(theta, dtype=np.float64).T, (1, B))
    s = informative(s) if told is None else told
    live = s.h > 0
    sa, sl, _ = steps.scores(th, steps.rows_of(s, live, _pinned(s.h)), steps.Work())
    sl[np.tile(_pinned(h), (1, B))] = 0.0
    sc = np.concatenate([sa[None], sl]).reshape(K1, B, P).transpose(2, 0, 1)  # (P, K + 1, B)
    step = np.matmul(inverse, sc).transpose(1, 2, 0).reshape(K1, r)
    same = (live == np.tile(h > 0, (1, B))).all(axis=0)
    ok = same & (np.abs(step).max(axis=0) <= _PREDICTED_MOVE)
    th += np.where(ok, step, 0.0)
    return th.T


def _walking(step: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Rows whose step repeats their previous one (a move of at least :data:`_CHECKED_STEP`, the same
    direction and length within 1%): walking out towards a maximum at infinity, one unit a step."""
    size, before = np.linalg.norm(step, axis=0), np.linalg.norm(last, axis=0)
    cos = np.einsum("kr,kr->r", step, last) / np.maximum(size * before, 1e-300)
    return (np.abs(step).max(axis=0) >= _CHECKED_STEP) & (cos >= 0.9999) & (np.abs(size - before) <= 0.01 * before)


def _extended(
    th: np.ndarray, step: np.ndarray, sub: Strata, live: np.ndarray, at_step: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``step`` times the largest of 1, 2, 4, ... :data:`_MAX_WALK` up to which the likelihood keeps rising,
    column by column.

    Newton's method walks towards a maximum at infinity (a bin whose weight vanishes next to its
    neighbours', which the data ask for without making its stratum certain) one unit of the parameter a
    step: its scores shrink by a factor e a step, and meeting the tolerance took some 15 steps more than
    the rows around it. The likelihood is concave, so along a step that repeats itself it rises up to its
    maximum on that line; doubling the step while it rises reaches the tolerance in a few steps. Only the
    path changes: the fit still ends at the tolerance. ``at_step``: the log-likelihood at ``th + step`` where
    known (else NaN); returned with the step, at the step returned."""
    best = _known(at_step, lambda idx: loglik(np.clip(th[:, idx] + step[:, idx], -_BOUND, _BOUND), sub.rows(idx),
                                              live[:, idx]))
    factor = np.ones(step.shape[1])
    going = np.arange(step.shape[1])
    m = 2.0
    while len(going) and m <= _MAX_WALK:
        trial = np.clip(th[:, going] + m * step[:, going], -_BOUND, _BOUND)
        value = loglik(trial, sub.rows(going), live[:, going])
        up = value > best[going] + 1e-12 * np.abs(best[going])
        factor[going[up]] = m
        best[going[up]] = value[up]
        going = going[up]
        m *= 2.0
    return step * factor, best


def _halved(
    th: np.ndarray, step: np.ndarray, sub: Strata, live: np.ndarray, at_start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``step`` halved, column by column, until it no longer lowers the likelihood (at most 40 times), and
    the log-likelihood after it (NaN where the 40th halving left it unknown). ``at_start``: the
    log-likelihood at ``th`` where known (a row's previous step computed it; else NaN).

    After the first trial only the columns whose step was halved are evaluated again (the others' value
    stands), as one column where there is one column in all, else as two at least: a column's sum over the
    bins is then added in the same order as among all of them (numpy sums a lone column pairwise)."""
    before = _known(at_start, lambda idx: loglik(th[:, idx], sub.rows(idx), live[:, idx]))
    after = loglik(np.clip(th + step, -_BOUND, _BOUND), sub, live)
    bad = np.flatnonzero(after < before - 1e-12 * np.abs(before))
    for _ in range(39):
        if not len(bad):
            return step, after
        step[:, bad] *= 0.5
        idx = bad if len(bad) > 1 or len(after) == 1 else np.repeat(bad, 2)
        value = loglik(np.clip(th[:, idx] + step[:, idx], -_BOUND, _BOUND), sub.rows(idx), live[:, idx])[: len(bad)]
        after[bad] = value
        bad = bad[value < before[bad] - 1e-12 * np.abs(before[bad])]
    step[:, bad] *= 0.5
    after[bad] = np.nan
    return step, after


def _known(values: np.ndarray, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``values`` with their NaNs replaced by ``compute`` of those columns."""
    missing = np.flatnonzero(np.isnan(values))
    if not len(missing):
        return values.copy()
    if len(missing) == len(values):
        return compute(missing)
    out = values.copy()
    out[missing] = compute(missing)
    return out


def expected(theta: np.ndarray, s: Strata, *, told: Strata | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(expected regression count, expected progression count) per row given the items' totals.

    A side always or never right has its limit outright: old never right or
    new always right, no regression; old always right, every new wrong item;
    new never right, every old right item (and the same for progressions).
    """
    # a certain stratum has no regression or progression, a bin only in them g = 0
    told = informative(s) if told is None else told
    _, ten, one, _, G = _weights(np.asarray(theta).T, told.h > 0)
    G += told.n <= 0  # a stratum without items: q = 0 (no masked division: far slower)
    q = told.n / G
    reg, prog = (ten * q).sum(axis=0), (one * q).sum(axis=0)
    items, old, new = s.items, s.old, s.new
    reg = _limits(reg, old, new, items)
    prog = _limits(prog, new, old, items)
    return np.where(items > 0, reg, np.nan), np.where(items > 0, prog, np.nan)


def _limits(out: np.ndarray, old: np.ndarray, new: np.ndarray, items: np.ndarray) -> np.ndarray:
    out = np.where((old <= 0) | (new >= items), 0.0, out)
    out = np.where((old >= items) & (new < items), items - new, out)
    return np.where((new <= 0) & (old > 0) & (old < items), old, out)
