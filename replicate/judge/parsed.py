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
from replicate.judge.model import LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import UNPARSED
from replicate.stats.bootstrap import Interval
from replicate.stats.policy import Policy


@dataclass(frozen=True)
class ParseIntervals:
    """Intervals of a parse's shares: ``parsed_rate``, ``unparsed_rate`` and each label's share of parsed."""

    rates: dict[str, Interval]
    labels: dict[int, Interval]
    settings: Uncertainty


def parse_intervals(
    run: LabelledRun, labels: Sequence[int], settings: Uncertainty, policy: Policy | None = None,
) -> ParseIntervals:
    """Bootstrap intervals of the shares of ``run`` (labels of one parser), ``labels`` giving which label shares;
    with ``policy`` and gold, of the accuracy against gold under that unparsed policy too (``accuracy``)."""
    values = np.asarray(run.labels)
    parsed = values != UNPARSED
    every = np.ones_like(parsed)
    label_list = [int(k) for k in labels]
    rows = [~parsed, parsed, *(values == k for k in label_list)]
    over = [every, every, *(parsed for _ in label_list)]
    accuracy = policy is not None and bool((np.asarray(run.gold) >= 0).any())
    if accuracy:
        assert policy is not None
        right, counted = accuracy_masks(run, policy)
        rows.append(right)
        over.append(counted)
    ivs = settings.shares(np.stack(rows), np.stack(over), run.keys)
    rates = {"unparsed_rate": ivs[0], "parsed_rate": ivs[1]}
    if accuracy:
        rates["accuracy"] = ivs[-1]
    return ParseIntervals(rates, dict(zip(label_list, ivs[2 : 2 + len(label_list)])), settings)
