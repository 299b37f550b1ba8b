"""The shares of one run as a parser read it, with bootstrap intervals (pure): what ``replicate parse`` reports.

- ``parsed_rate`` and ``unparsed_rate``: the share of the run's outputs the
  parser reads and leaves unparsed (over every record);
- per label, its share of the parsed outputs.

Each is a share of items resampled like every other share
(:meth:`~replicate.judge.uncertainty.Uncertainty.shares`): whole clusters
(the first key field, e.g. ``query_id``, or ``--cluster FIELD``), or items one
by one without a cluster key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.judge.model import LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import UNPARSED
from replicate.stats.bootstrap import Interval


@dataclass(frozen=True)
class ParseIntervals:
    """Intervals of a parse's shares: ``parsed_rate``, ``unparsed_rate`` and each label's share of parsed."""

    rates: dict[str, Interval]
    labels: dict[int, Interval]
    settings: Uncertainty


def parse_intervals(run: LabelledRun, labels: Sequence[int], settings: Uncertainty) -> ParseIntervals:
    """Bootstrap intervals of the shares of ``run`` (labels of one parser), ``labels`` giving which label shares."""
    values = np.asarray(run.labels)
    parsed = values != UNPARSED
    every = np.ones_like(parsed)
    label_list = [int(k) for k in labels]
    hits = np.stack([~parsed, parsed, *(values == k for k in label_list)])
    counted = np.stack([every, every, *(parsed for _ in label_list)])
    ivs = settings.shares(hits, counted, run.keys)
    return ParseIntervals(
        {"unparsed_rate": ivs[0], "parsed_rate": ivs[1]}, dict(zip(label_list, ivs[2:])), settings
    )
