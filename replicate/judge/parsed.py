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
    clusters = clusters_of(run, settings)  # first: its scratch arrays are gone before the rows are made
    values = np.asarray(run.labels)
    label_list = [int(k) for k in labels]
    accuracy = policy is not None and bool((np.asarray(run.gold) >= 0).any())
    # rows x items, each row written in place: no row held twice (a run of millions of items)
    n_rows = 2 + len(label_list) + accuracy
    hits = np.empty((n_rows, len(values)), dtype=bool)
    over = np.empty_like(hits)
    np.not_equal(values, UNPARSED, out=hits[1])  # parsed
    np.logical_not(hits[1], out=hits[0])
    over[0] = over[1] = True
    for i, k in enumerate(label_list, start=2):
        np.equal(values, k, out=hits[i])
        over[i] = hits[1]
    if accuracy:
        assert policy is not None
        hits[-1], over[-1] = accuracy_masks(run, policy)
    ivs = settings.shares(hits, over, None, clusters)
    rates = {"unparsed_rate": ivs[0], "parsed_rate": ivs[1]}
    if accuracy:
        rates["accuracy"] = ivs[-1]
    return ParseIntervals(rates, dict(zip(label_list, ivs[2 : 2 + len(label_list)])), settings)
