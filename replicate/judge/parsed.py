"""The shares of one run as a parser read it, with bootstrap intervals (pure): what ``replicate parse`` reports.

- ``parsed_rate`` and ``unparsed_rate``: the share of the run's outputs the
  parser reads and leaves unparsed (over every record);
- per label, its share of the parsed outputs;
- with gold, the accuracy against it under the unparsed policy (the source's
  rule by default: :mod:`replicate.judge.sourcerule`).

Each is a share of items resampled like every other share
(:meth:`~replicate.judge.uncertainty.Uncertainty.shares`): whole clusters
(the first key field, e.g. ``query_id``, or ``--cluster FIELD``), or items one
by one without a cluster key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.judge.harness import accuracy_masks
from replicate.judge.keytable import KeyTable, raw_keys
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import UNPARSED
from replicate.stats.bootstrap import Clusters, Interval
from replicate.stats.policy import Policy
from replicate.stats.shares import value_counts


@dataclass(frozen=True)
class ParseIntervals:
    """Intervals of a parse's shares: ``parsed_rate``, ``unparsed_rate`` and each label's share of parsed."""

    rates: dict[str, Interval]
    labels: dict[int, Interval]
    settings: Uncertainty


def clusters_of(run: LabelledRun, settings: Uncertainty) -> Clusters:
    """The clusters ``settings`` resample ``run``'s items by: the first key field's read from the run's
    :class:`~replicate.judge.keytable.KeyTable` when it holds one (no string made per item), else
    :meth:`~replicate.judge.uncertainty.Uncertainty.clusters` of its keys (the same codes)."""
    keys = raw_keys(run)
    if isinstance(keys, KeyTable) and settings.cluster_field == 0:
        got = keys.first_field_codes(KEY_SEP)
        if got is not None:
            return Clusters(got[0], got[1], settings.key_fields[0])
    return settings.clusters(run.keys)


def parse_intervals(
    run: LabelledRun, labels: Sequence[int], settings: Uncertainty, policy: Policy | None = None,
) -> ParseIntervals:
    """Bootstrap intervals of the shares of ``run`` (labels of one parser), ``labels`` giving which label shares;
    with ``policy`` and gold, of the accuracy against gold under that unparsed policy too (``accuracy``)."""
    clusters = clusters_of(run, settings)
    label_list = [int(k) for k in labels]
    accuracy = policy is not None and bool((np.asarray(run.gold) >= 0).any())
    codes, n_clusters = (None, 1) if clusters.is_items else (clusters.codes, clusters.count)
    counts = share_rows(np.asarray(run.labels), label_list, codes, n_clusters, more=int(accuracy))
    if accuracy:
        assert policy is not None
        right, counted = accuracy_masks(run, policy)
        state = counted.view(np.int8) + right.view(np.int8)  # 0 not counted, 1 counted and wrong, 2 right
        del right, counted
        by_state = value_counts(state, codes, n_clusters, 3)
        del state
        counts[:, -1] = by_state[:, [2, 1]]  # the accuracy's row, left by share_rows (not a copy of them all)
    ivs = settings.shares_of_counts(counts, clusters)
    rates = {"unparsed_rate": ivs[0], "parsed_rate": ivs[1]}
    if accuracy:
        rates["accuracy"] = ivs[-1]
    return ParseIntervals(rates, dict(zip(label_list, ivs[2 : 2 + len(label_list)])), settings)


def share_rows(
    values: np.ndarray, labels: Sequence[int], codes: np.ndarray | None, n_clusters: int, *, more: int = 0,
) -> np.ndarray:
    """Per cluster, the (counted hits, counted misses) of the unparsed share, the parsed share and each of
    ``labels``' share of the parsed items: ``(n_clusters, 2 + len(labels) + more, 2)``, as
    :func:`~replicate.stats.shares.share_counts` gives them from rows of items, here from one count of each
    cluster's labels (no row of the items' length made); the last ``more`` rows are left for the caller to fill."""
    low = min(int(values.min(initial=0)), UNPARSED)
    high = max(int(values.max(initial=0)), 0)
    by_value = value_counts(values, codes, n_clusters, high - low + 1, low=low)  # value v in column v - low
    total = by_value.sum(axis=1)
    unparsed = by_value[:, UNPARSED - low]
    parsed = total - unparsed
    # per cluster, int32 (a cluster holds fewer than 2**31 items): half the memory of int64 (87,500 clusters x 7
    # shares: 4.9 MB less); the totals over clusters are summed in int64. One cluster (the item bootstrap): int64
    out = np.empty((n_clusters, 2 + len(labels) + more, 2), dtype=np.int64 if codes is None else np.int32)
    out[:, 0, 0], out[:, 0, 1] = unparsed, parsed
    out[:, 1, 0], out[:, 1, 1] = parsed, unparsed
    for i, k in enumerate(labels, start=2):
        hit = by_value[:, k - low] if low <= k <= high and k != UNPARSED else 0
        out[:, i, 0] = hit
        out[:, i, 1] = parsed - hit
    return out
