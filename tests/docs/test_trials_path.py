"""fixtures/trials-path (the worked examples of docs/items.md) is exactly what tools/make_trials_path.py writes."""

from __future__ import annotations

import gzip

from support.paths import ROOT
from support.synth.trials_path import TABLE, write_path_study


def test_the_committed_table_is_the_generators_output(tmp_path):
    fresh = write_path_study(tmp_path)
    committed = ROOT / "fixtures" / "trials-path" / TABLE
    assert gzip.decompress(fresh.read_bytes()) == gzip.decompress(committed.read_bytes())
